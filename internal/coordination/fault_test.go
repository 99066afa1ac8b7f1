package coordination_test

import (
	"context"
	"testing"
	"time"

	"github.com/qhronos/qhronos/internal/coordination"
	"github.com/qhronos/qhronos/internal/coordination/coordinationtest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
)

// privateRedis starts a redis-server of the test's own and returns a
// coordinator on it whose fallback limiter follows clk.
func privateRedis(t *testing.T, clk *fakeClock) (c *coordination.Redis, client *redis.Client, stop, restart func()) {
	t.Helper()
	addr, stop, restart := coordinationtest.StartRedisServer(t)
	client = redis.NewClient(&redis.Options{
		Addr:         addr,
		DialTimeout:  time.Second,
		ReadTimeout:  time.Second,
		WriteTimeout: time.Second,
		MaxRetries:   1,
	})
	t.Cleanup(func() { _ = client.Close() })
	c = coordination.NewRedis(client, "q:", zaptest.NewLogger(t), coordination.WithFallbackClock(clk.Now))
	t.Cleanup(func() { _ = c.Close() })
	return c, client, stop, restart
}

// eventuallyReceive publishes payload every 100ms until sub delivers it, for
// at most 20s: a subscription reconnects on its own schedule.
func eventuallyReceive(t *testing.T, c coordination.Bus, channel string, sub <-chan []byte, payload string) {
	t.Helper()
	deadline := time.NewTimer(20 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var lastErr error
	for {
		select {
		case msg, ok := <-sub:
			require.True(t, ok, "subscription closed")
			if string(msg) == payload {
				return
			}
		case <-tick.C:
			lastErr = c.Publish(t.Context(), channel, []byte(payload))
		case <-deadline.C:
			t.Fatalf("subscriber did not receive %q within 20s (last publish error: %v)", payload, lastErr)
		}
	}
}

func TestRedisFlushAllLosesOnlyDerivedState(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	c, client, _, _ := privateRedis(t, clk)
	ctx := t.Context()
	sub, err := c.Subscribe(ctx, "wakeup")
	require.NoError(t, err)
	limit := coordination.Limit{Rate: slow, Burst: 2}
	for range 2 {
		res, err := c.Allow(ctx, "k", limit)
		require.NoError(t, err)
		require.True(t, res.Allowed)
	}
	ok, err := c.TryLock(ctx, "leader", "a", time.Hour)
	require.NoError(t, err)
	require.True(t, ok)

	require.NoError(t, client.FlushAll(ctx).Err())

	// The lock is gone: another instance may take it, and then holds it.
	ok, err = c.TryLock(ctx, "leader", "b", time.Hour)
	require.NoError(t, err)
	require.True(t, ok, "after FLUSHALL the lock is free")
	ok, err = c.TryLock(ctx, "leader", "a", time.Hour)
	require.NoError(t, err)
	require.False(t, ok, "the rebuilt lock is exclusive again")

	// The bucket starts full again, and fills up again.
	for i := range 2 {
		res, err := c.Allow(ctx, "k", limit)
		require.NoError(t, err)
		require.True(t, res.Allowed, "request %d after FLUSHALL", i+1)
	}
	res, err := c.Allow(ctx, "k", limit)
	require.NoError(t, err)
	require.False(t, res.Allowed, "the rebuilt bucket limits again")
	require.NoError(t, c.Degraded())

	// Subscriptions are unaffected.
	require.NoError(t, c.Publish(ctx, "wakeup", []byte("after flush")))
	if got, want := string(receive(t, sub, "wakeup")), "after flush"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestRedisStoppedThenRestarted(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	c, _, stop, restart := privateRedis(t, clk)
	ctx := t.Context()
	sub, err := c.Subscribe(ctx, "wakeup")
	require.NoError(t, err)
	limit := coordination.Limit{Rate: slow, Burst: 2}
	res, err := c.Allow(ctx, "k", limit)
	require.NoError(t, err)
	require.True(t, res.Allowed)

	stop()

	// Rate limiting goes on in-process, without errors, per the local bucket.
	for i := range 2 {
		res, err := c.Allow(ctx, "k", limit)
		require.NoError(t, err, "Redis errors must not reach the caller")
		if !res.Allowed {
			t.Fatalf("request %d while Redis is down: denied, want allowed by the fresh local bucket", i+1)
		}
		require.Error(t, c.Degraded(), "Degraded reports the fallback")
	}
	res, err = c.Allow(ctx, "k", limit)
	require.NoError(t, err)
	require.False(t, res.Allowed, "the local bucket limits too")
	require.Greater(t, res.RetryAfter, time.Duration(0))

	// Publishing says the message is lost; locks cannot be granted.
	require.Error(t, c.Publish(ctx, "wakeup", []byte("lost")))
	ok, err := c.TryLock(ctx, "leader", "a", time.Minute)
	require.Error(t, err)
	require.False(t, ok)
	require.Error(t, c.Ping(ctx))

	restart()

	// The old subscription delivers again.
	eventuallyReceive(t, c, "wakeup", sub, "back")
	// After the fallback's cool-down Redis answers rate limits again.
	clk.Step(2 * time.Second)
	res, err = c.Allow(ctx, "k", limit)
	require.NoError(t, err)
	require.True(t, res.Allowed, "the restarted, empty Redis has a full bucket")
	require.NoError(t, c.Degraded())
	require.NoError(t, c.Ping(ctx))
}

func TestRedisSubscribeFailsWhileDown(t *testing.T) {
	t.Parallel()
	c, _, stop, _ := privateRedis(t, newFakeClock())
	stop()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	_, err := c.Subscribe(ctx, "wakeup")
	require.Error(t, err, "a subscription Redis never confirmed must not look live")
}
