package scheduler

import (
	"context"
	"sync"
	"time"

	"github.com/qhronos/qhronos/internal/startstop"
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
	// every is the period a ticking loop promised (zero for the
	// dispatcher, which runs when work is due); since is when it started.
	every time.Duration
	since time.Time
}

// overdue is how late a ticking loop may be before it reads unhealthy: a
// slow run or a busy database may delay a tick, a stopped loop never ticks.
func overdue(every time.Duration) time.Duration { return 3*every + 10*time.Second }

// expect records that the loop runs every interval from now on.
func (s *LoopStatus) expect(every time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.every, s.since = every, time.Now()
}

// failing reports whether the latest run ended in an error.
func (s *LoopStatus) failing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err != ""
}

// healthy: the latest run succeeded and a ticking loop is not overdue. It
// reads the wall clock: /status is a report for people, not a due decision.
func (s *LoopStatus) healthy() bool {
	if s.err != "" {
		return false
	}
	if s.every <= 0 {
		return true
	}
	last := s.lastRun
	if s.runs == 0 {
		last = s.since
	}
	return time.Since(last) <= overdue(s.every)
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
	out := map[string]any{"runs": s.runs, "healthy": s.healthy()}
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

// loop is a ticking background loop: it calls once at Start and then every
// interval until its context ends or Stop is called, recording each run in
// status.
type loop struct {
	startstop.Base
	interval time.Duration
	status   *LoopStatus
	once     func(ctx context.Context) (int, error)
}

var _ startstop.Service = (*loop)(nil)

// Start launches the loop.
func (l *loop) Start(ctx context.Context) error {
	ctx, shouldStart, stopped := l.StartInit(ctx)
	if !shouldStart {
		return nil
	}
	l.status.expect(l.interval)
	go func() {
		defer stopped()
		startstop.Every(ctx, l.interval, true, func(ctx context.Context) {
			start := time.Now()
			n, err := l.once(ctx)
			l.status.record(start, time.Since(start), n, err)
		})
	}()
	return nil
}
