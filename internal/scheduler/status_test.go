package scheduler

import (
	"errors"
	"testing"
	"time"
)

// A loop reads unhealthy in /status when its latest run failed, or when a
// ticking loop has not run for well over its period (stopped or stuck).
func TestLoopStatusHealth(t *testing.T) {
	t.Parallel()
	var s LoopStatus
	s.expect(time.Minute)
	if h := s.Snapshot()["healthy"]; h != true {
		t.Errorf("a loop that just started: healthy = %v, want true", h)
	}
	s.record(time.Now(), time.Millisecond, 3, errors.New("database is down"))
	if h := s.Snapshot()["healthy"]; h != false {
		t.Errorf("after a failed run: healthy = %v, want false", h)
	}
	s.record(time.Now(), time.Millisecond, 3, nil)
	if h := s.Snapshot()["healthy"]; h != true {
		t.Errorf("after a good run: healthy = %v, want true", h)
	}
	s.record(time.Now().Add(-overdue(time.Minute)-time.Second), time.Millisecond, 3, nil)
	if h := s.Snapshot()["healthy"]; h != false {
		t.Errorf("a loop overdue by its period: healthy = %v, want false", h)
	}

	var idle LoopStatus // the dispatcher: no period, runs when work is due
	if h := idle.Snapshot()["healthy"]; h != true {
		t.Errorf("an idle dispatcher: healthy = %v, want true", h)
	}
}
