package coordination_test

import (
	"sync"
	"testing"
	"time"

	"github.com/qhronos/qhronos/internal/coordination"
	"github.com/qhronos/qhronos/internal/coordination/coordinationtest"
	"go.uber.org/zap/zaptest"
)

// clock lets a test pass time: the fake clock jumps, the real one (for Redis,
// whose TTLs and buckets follow Redis' own clock) waits on a timer. Loops
// that step it are bounded by a step count.
type clock interface {
	Now() time.Time
	Step(d time.Duration)
}

type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 3, 29, 0, 30, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Step(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Step(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	<-t.C
}

// instances are two coordinators sharing state, as two server instances
// would, and the clock their TTLs and buckets follow.
type instances struct {
	a, b  coordination.Coordinator
	clock clock
}

// backend opens fresh, isolated instances of one implementation.
type backend struct {
	name string
	open func(t *testing.T) instances
}

// backends are the implementations every contract test runs against: the
// in-process one (one process, so both "instances" are the same value) and
// Redis with a unique prefix on the shared test server, two clients.
var backends = []backend{
	{name: "local", open: func(t *testing.T) instances {
		clk := newFakeClock()
		l := coordination.NewLocal(clk.Now)
		t.Cleanup(func() { _ = l.Close() })
		return instances{a: l, b: l, clock: clk}
	}},
	{name: "redis", open: func(t *testing.T) instances {
		client, prefix := coordinationtest.RedisClient(t)
		peer := coordinationtest.RedisPeer(t, client)
		a := coordination.NewRedis(client, prefix, zaptest.NewLogger(t))
		b := coordination.NewRedis(peer, prefix, zaptest.NewLogger(t))
		t.Cleanup(func() {
			_ = a.Close()
			_ = b.Close()
			// A verdict from the fallback would make a rate-limit test pass
			// without testing Redis.
			for _, r := range []*coordination.Redis{a, b} {
				if err := r.Degraded(); err != nil {
					t.Errorf("the rate limiter fell back to in-process: %v", err)
				}
			}
		})
		return instances{a: a, b: b, clock: realClock{}}
	}},
}

// forEachBackend runs test as a parallel subtest per backend.
func forEachBackend(t *testing.T, test func(t *testing.T, in instances)) {
	t.Helper()
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			test(t, be.open(t))
		})
	}
}

// receive waits for one message on ch, failing the test after a deadline.
func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	timer := time.NewTimer(5 * time.Second)
	defer timer.Stop()
	select {
	case v, ok := <-ch:
		if !ok {
			t.Fatalf("%s: channel closed, want a message", what)
		}
		return v
	case <-timer.C:
		t.Fatalf("%s: no message within 5s", what)
	}
	panic("unreachable")
}
