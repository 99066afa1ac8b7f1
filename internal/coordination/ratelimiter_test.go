package coordination_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/qhronos/qhronos/internal/coordination"
	"github.com/stretchr/testify/require"
)

// slow is a rate so low that no token refills during a test.
const slow = 0.001

func TestRateLimitBurstThenDenied(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, in instances) {
		ctx := t.Context()
		limit := coordination.Limit{Rate: slow, Burst: 5}
		for i := range 5 {
			res, err := in.a.Allow(ctx, "alice", limit)
			require.NoError(t, err)
			if !res.Allowed {
				t.Fatalf("request %d of a burst of 5: denied", i+1)
			}
			if got, want := res.Remaining, 4-i; got != want {
				t.Errorf("request %d: Remaining got %d, want %d", i+1, got, want)
			}
			if got, want := res.Limit, 5; got != want {
				t.Errorf("request %d: Limit got %d, want %d", i+1, got, want)
			}
		}

		// The sixth, on the other instance, is denied: the bucket is shared.
		res, err := in.b.Allow(ctx, "alice", limit)
		require.NoError(t, err)
		if res.Allowed {
			t.Fatal("request 6 of a burst of 5: allowed")
		}
		if got, want := res.Remaining, 0; got != want {
			t.Errorf("denied: Remaining got %d, want %d", got, want)
		}
		// At 0.001/s one token refills every 1000s.
		if res.RetryAfter <= 990*time.Second || res.RetryAfter > 1000*time.Second {
			t.Errorf("denied: RetryAfter got %s, want about 1000s", res.RetryAfter)
		}
		if res.ResetAfter < res.RetryAfter {
			t.Errorf("denied: ResetAfter %s shorter than RetryAfter %s", res.ResetAfter, res.RetryAfter)
		}

		// Another key has its own bucket.
		res, err = in.a.Allow(ctx, "bob", limit)
		require.NoError(t, err)
		if !res.Allowed || res.Remaining != 4 {
			t.Errorf("first request of another key: got allowed=%v remaining=%d, want true, 4", res.Allowed, res.Remaining)
		}
	})
}

func TestRateLimitRefillsAtRate(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, in instances) {
		ctx := t.Context()
		limit := coordination.Limit{Rate: 2, Burst: 1}
		res, err := in.a.Allow(ctx, "carol", limit)
		require.NoError(t, err)
		require.True(t, res.Allowed, "first request")
		start := in.clock.Now()

		res, err = in.a.Allow(ctx, "carol", limit)
		require.NoError(t, err)
		if res.Allowed {
			t.Fatal("second request at once with burst 1: allowed")
		}
		if res.RetryAfter <= 0 || res.RetryAfter > 500*time.Millisecond {
			t.Errorf("RetryAfter got %s, want in (0, 500ms] at 2/s", res.RetryAfter)
		}

		for i := 0; ; i++ {
			require.Less(t, i, 300, "no token refilled")
			in.clock.Step(10 * time.Millisecond)
			res, err = in.b.Allow(ctx, "carol", limit)
			require.NoError(t, err)
			if res.Allowed {
				break
			}
		}
		if got, want := in.clock.Now().Sub(start), 490*time.Millisecond; got < want {
			t.Errorf("token refilled after %s, want no earlier than about 500ms at 2/s", got)
		}
	})
}

// TestRateLimitIsAtomic is the original's defect: 232 of 300 concurrent
// requests passed a burst of 100.
func TestRateLimitIsAtomic(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, in instances) {
		ctx := t.Context()
		limit := coordination.Limit{Rate: slow, Burst: 100}
		var allowed atomic.Int64
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make(chan error, 300)
		for i := range 300 {
			c := in.a
			if i%2 == 1 {
				c = in.b // half through the other instance
			}
			wg.Go(func() {
				<-start
				res, err := c.Allow(ctx, "mallory", limit)
				if err != nil {
					errs <- err
					return
				}
				if res.Allowed {
					allowed.Add(1)
				}
			})
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("Allow: %v", err)
		}
		if got, want := allowed.Load(), int64(100); got != want {
			t.Errorf("300 concurrent requests on a burst of 100: %d allowed, want %d", got, want)
		}
		if r, ok := in.a.(interface{ Degraded() error }); ok {
			require.NoError(t, r.Degraded(), "the shared bucket answered, not the fallback")
		}
	})
}

func TestRateLimitRejectsInvalidLimits(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, in instances) {
		for _, limit := range []coordination.Limit{
			{Rate: 0, Burst: 10},
			{Rate: -1, Burst: 10},
			{Rate: 10, Burst: 0},
		} {
			_, err := in.a.Allow(t.Context(), "k", limit)
			if !errors.Is(err, coordination.ErrInvalidLimit) {
				t.Errorf("Allow(%+v): got error %v, want ErrInvalidLimit", limit, err)
			}
		}
	})
}
