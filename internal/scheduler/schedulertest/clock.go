// Package schedulertest holds test helpers for the scheduler: a clock tests
// advance by hand and a loopback webhook receiver that counts deliveries.
package schedulertest

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Clock is a manual clock: time moves only when a test advances it, and
// After channels fire when it passes their deadline.
type Clock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []waiter
	changed chan struct{} // closed and replaced when a waiter is added
}

type waiter struct {
	at time.Time
	ch chan time.Time
}

// NewClock returns a clock standing at now.
func NewClock(now time.Time) *Clock { return &Clock{now: now, changed: make(chan struct{})} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// After fires once the clock has been advanced by d.
func (c *Clock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, waiter{at: c.now.Add(d), ch: ch})
	close(c.changed)
	c.changed = make(chan struct{})
	return ch
}

// Advance moves the clock forward by d and fires the waiters it passed.
func (c *Clock) Advance(d time.Duration) { c.Set(c.Now().Add(d)) }

// Set moves the clock to t (never backwards) and fires the waiters it passed.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.now) {
		c.now = t
	}
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if !w.at.After(c.now) {
			w.ch <- c.now
			continue
		}
		kept = append(kept, w)
	}
	c.waiters = kept
}

// WaitForWaiters blocks until at least n After calls are pending, or fails
// after a real-time deadline: a test uses it to know that the system under
// test is holding something until a later instant.
func (c *Clock) WaitForWaiters(ctx context.Context, n int) error {
	for {
		c.mu.Lock()
		got, changed := len(c.waiters), c.changed
		c.mu.Unlock()
		if got >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %d clock waiters, have %d: %w", n, got, ctx.Err())
		case <-changed:
		}
	}
}

// Waiters is the number of After calls still waiting.
func (c *Clock) Waiters() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.waiters)
}
