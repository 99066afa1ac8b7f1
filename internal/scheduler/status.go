package scheduler

import (
	"sync"
	"time"
)

// LoopStatus is the last run of one background loop, for /status. It holds
// counts and error text only, never secrets or tenant data.
type LoopStatus struct {
	mu       sync.Mutex
	lastRun  time.Time
	duration time.Duration
	result   int
	err      string
	runs     int64
}

func (s *LoopStatus) record(start time.Time, took time.Duration, result int, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastRun, s.duration, s.result = start.UTC(), took, result
	s.err = ""
	if err != nil {
		s.err = err.Error()
	}
	s.runs++
}

// Snapshot returns the loop's last run as JSON-friendly values.
func (s *LoopStatus) Snapshot() map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]any{"runs": s.runs}
	if s.runs == 0 {
		return out
	}
	out["last_run"] = s.lastRun.Format(time.RFC3339Nano)
	out["duration_ms"] = s.duration.Milliseconds()
	out["result"] = s.result
	if s.err != "" {
		out["error"] = s.err
	}
	return out
}

// runLoop calls once immediately and then every interval until stop closes.
func runLoop(stop <-chan struct{}, interval time.Duration, status *LoopStatus, once func() (int, error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		start := time.Now()
		n, err := once()
		status.record(start, time.Since(start), n, err)
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}
