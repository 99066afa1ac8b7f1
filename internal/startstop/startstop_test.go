package startstop_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/qhronos/qhronos/internal/startstop"
)

// svc runs one goroutine until its context ends; ended counts the runs
// that have returned, runs those started.
type svc struct {
	startstop.Base
	runs, ended atomic.Int32
	running     chan struct{}
}

func newSvc() *svc { return &svc{running: make(chan struct{}, 16)} }

func (s *svc) Start(ctx context.Context) error {
	ctx, shouldStart, stopped := s.StartInit(ctx)
	if !shouldStart {
		return nil
	}
	s.runs.Add(1)
	go func() {
		defer stopped()
		s.running <- struct{}{}
		<-ctx.Done()
		s.ended.Add(1)
	}()
	return nil
}

var _ startstop.Service = (*svc)(nil)

func wait(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(60 * time.Second):
		t.Fatalf("%s: not within 60s", what)
	}
}

func TestStopJoinsAndStartIsIdempotent(t *testing.T) {
	t.Parallel()
	s := newSvc()
	s.Stop() // not started: nothing to do
	for range 3 {
		if err := s.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	wait(t, s.running, "goroutine running")
	if got := s.runs.Load(); got != 1 {
		t.Fatalf("runs after three starts: got %d, want 1", got)
	}
	s.Stop()
	if got := s.ended.Load(); got != 1 {
		t.Fatalf("ended when Stop returned: got %d, want 1 (Stop must join)", got)
	}
	s.Stop() // twice: no-op

	// A stopped service starts again.
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	wait(t, s.running, "goroutine running again")
	s.Stop()
	if got, want := s.ended.Load(), int32(2); got != want {
		t.Fatalf("ended after restart: got %d, want %d", got, want)
	}
}

func TestCancellingTheContextStops(t *testing.T) {
	t.Parallel()
	s := newSvc()
	ctx, cancel := context.WithCancel(context.Background())
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	wait(t, s.running, "goroutine running")
	cancel()
	done := make(chan struct{})
	go func() { s.Stop(); close(done) }()
	wait(t, done, "Stop after the context was cancelled")
	if got := s.ended.Load(); got != 1 {
		t.Fatalf("ended: got %d, want 1", got)
	}
}

func TestConcurrentStartAndStop(t *testing.T) {
	t.Parallel()
	s := newSvc()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(2)
		go func() { defer wg.Done(); _ = s.Start(context.Background()) }()
		go func() { defer wg.Done(); s.Stop() }()
	}
	wg.Wait()
	s.Stop()
	if runs, ended := s.runs.Load(), s.ended.Load(); runs != ended {
		t.Fatalf("after the final Stop: %d runs started, %d ended", runs, ended)
	}
}
