package coordination_test

import (
	"testing"
	"time"

	"github.com/qhronos/qhronos/internal/coordination"
	"github.com/qhronos/qhronos/internal/coordination/coordinationtest"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
)

func TestRedisPrefixesIsolateTenants(t *testing.T) {
	t.Parallel()
	client, prefix := coordinationtest.RedisClient(t)
	one := coordination.NewRedis(client, prefix+"one:", zaptest.NewLogger(t))
	two := coordination.NewRedis(client, prefix+"two:", zaptest.NewLogger(t))
	t.Cleanup(func() { _ = one.Close(); _ = two.Close() })
	ctx := t.Context()

	ok, err := one.TryLock(ctx, "leader", "a", time.Minute)
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = two.TryLock(ctx, "leader", "b", time.Minute)
	require.NoError(t, err)
	if !ok {
		t.Error("a lock under one prefix blocked the same name under another")
	}

	limit := coordination.Limit{Rate: slow, Burst: 1}
	_, err = one.Allow(ctx, "k", limit)
	require.NoError(t, err)
	res, err := two.Allow(ctx, "k", limit)
	require.NoError(t, err)
	if !res.Allowed {
		t.Error("a bucket under one prefix was drained by another")
	}

	subTwo, err := two.Subscribe(ctx, "news")
	require.NoError(t, err)
	require.NoError(t, one.Publish(ctx, "news", []byte("for one")))
	require.NoError(t, two.Publish(ctx, "news", []byte("for two")))
	if got, want := string(receive(t, subTwo, "two")), "for two"; got != want {
		t.Errorf("subscriber under prefix two got %q, want %q", got, want)
	}

	// Every key the coordinators wrote carries their prefix.
	keys, err := client.Keys(ctx, prefix+"*").Result()
	require.NoError(t, err)
	require.Len(t, keys, 4, "two locks and two buckets, all under the test prefix: %v", keys)
}

// TestRedisAnswersLikeLocal checks both limiters give the same verdicts for
// the same sequence (Redis on its own clock, so durations agree to within
// the test's run time).
func TestRedisAnswersLikeLocal(t *testing.T) {
	t.Parallel()
	client, prefix := coordinationtest.RedisClient(t)
	r := coordination.NewRedis(client, prefix, zaptest.NewLogger(t))
	t.Cleanup(func() { _ = r.Close() })
	clk := newFakeClock()
	l := coordination.NewLocal(clk.Now)
	t.Cleanup(func() { _ = l.Close() })

	for _, limit := range []coordination.Limit{{Rate: slow, Burst: 3}, {Rate: 0.01, Burst: 1}, {Rate: 0.3, Burst: 7}} {
		key := time.Duration(limit.Rate * 1e9).String()
		for i := range limit.Burst + 2 {
			got, err := r.Allow(t.Context(), key, limit)
			require.NoError(t, err)
			require.NoError(t, r.Degraded(), "Redis must answer, not the fallback")
			want, err := l.Allow(t.Context(), key, limit)
			require.NoError(t, err)
			if got.Allowed != want.Allowed || got.Remaining != want.Remaining || got.Limit != want.Limit {
				t.Errorf("%+v request %d: redis %+v, local %+v", limit, i+1, got, want)
			}
			if d := got.RetryAfter - want.RetryAfter; d > 0 || d < -5*time.Second {
				t.Errorf("%+v request %d: RetryAfter redis %s, local %s", limit, i+1, got.RetryAfter, want.RetryAfter)
			}
		}
	}
}

func TestRedisCloseEndsSubscriptionsButNotTheClient(t *testing.T) {
	t.Parallel()
	client, prefix := coordinationtest.RedisClient(t)
	r := coordination.NewRedis(client, prefix, zaptest.NewLogger(t))
	sub, err := r.Subscribe(t.Context(), "news")
	require.NoError(t, err)

	require.NoError(t, r.Close())
	deadline := time.NewTimer(5 * time.Second)
	defer deadline.Stop()
	for closed := false; !closed; {
		select {
		case _, ok := <-sub:
			closed = !ok
		case <-deadline.C:
			t.Fatal("subscription still open 5s after Close")
		}
	}
	require.ErrorIs(t, r.Publish(t.Context(), "news", nil), coordination.ErrClosed)
	require.NoError(t, client.Ping(t.Context()).Err(), "the caller's client must stay open")
	require.Equal(t, "redis", r.Name())
}

// TestRedisLimiterHandlesExtremeRates: rates so fast that a request moves
// the bucket by less than float precision, or so slow that it refills in
// centuries, are still answered by Redis, not by the fallback.
func TestRedisLimiterHandlesExtremeRates(t *testing.T) {
	t.Parallel()
	client, prefix := coordinationtest.RedisClient(t)
	r := coordination.NewRedis(client, prefix, zaptest.NewLogger(t))
	t.Cleanup(func() { _ = r.Close() })
	for _, limit := range []coordination.Limit{{Rate: 1e9, Burst: 100}, {Rate: 1e-12, Burst: 1}} {
		for i := range 2 {
			_, err := r.Allow(t.Context(), "extreme", limit)
			require.NoError(t, err)
			if err := r.Degraded(); err != nil {
				t.Errorf("%+v request %d: Redis refused, fell back: %v", limit, i+1, err)
			}
		}
	}
}
