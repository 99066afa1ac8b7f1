// Package startstop is the one start/stop shape of Qhronos's background
// services, after River's internal/startstop: Start(ctx) launches a
// service's goroutines and returns; cancelling ctx stops it; Stop stops it
// and returns only once its goroutines have ended. Both are idempotent and
// safe to call concurrently, and a stopped service may be started again.
package startstop

import (
	"context"
	"sync"
	"time"
)

// Service is a background service.
type Service interface {
	Start(ctx context.Context) error
	Stop()
}

// Base is embedded by services. Their Start begins with StartInit and their
// goroutines end by calling the stopped func it returns; Base provides Stop.
//
//	func (s *Svc) Start(ctx context.Context) error {
//		ctx, shouldStart, stopped := s.StartInit(ctx)
//		if !shouldStart {
//			return nil
//		}
//		go func() {
//			defer stopped()
//			s.run(ctx)
//		}()
//		return nil
//	}
type Base struct {
	mu      sync.Mutex
	cancel  context.CancelFunc
	stopped chan struct{}
}

// StartInit prepares a start. shouldStart is false when the service is
// already running; otherwise ctx is cancelled by Stop (or by the caller's
// context) and the caller must call stopped exactly once, when everything
// it launched has ended.
func (b *Base) StartInit(ctx context.Context) (_ context.Context, shouldStart bool, stopped func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped != nil {
		return ctx, false, func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	b.cancel, b.stopped = cancel, done
	var once sync.Once
	return ctx, true, func() {
		once.Do(func() {
			cancel()
			// Forget this run before announcing its end: a Start right
			// after Stop returns must see the service stopped, not be
			// refused as "already running".
			b.mu.Lock()
			if b.stopped == done {
				b.cancel, b.stopped = nil, nil
			}
			b.mu.Unlock()
			close(done)
		})
	}
}

// Stop cancels the service's context and waits for its goroutines to end.
// It does nothing when the service is not running.
func (b *Base) Stop() {
	b.mu.Lock()
	cancel, done := b.cancel, b.stopped
	b.mu.Unlock()
	if done == nil {
		return
	}
	cancel()
	<-done
}

// Every calls fn every interval — and once at once when immediately is
// set — until ctx ends: the body of a ticking service's goroutine.
func Every(ctx context.Context, interval time.Duration, immediately bool, fn func(ctx context.Context)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	if immediately {
		fn(ctx)
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			fn(ctx)
		}
	}
}
