package coordination_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/qhronos/qhronos/internal/coordination"
	"github.com/qhronos/qhronos/internal/coordination/coordinationtest"
	"go.uber.org/zap/zaptest"
)

func TestWakeupReachesDispatcherOnOtherInstance(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, in instances) {
		ctx := t.Context()
		wakeups := coordination.NewWakeups(in.b, zaptest.NewLogger(t)).Subscribe(ctx)
		notifier := coordination.NewWakeups(in.a, zaptest.NewLogger(t))

		at := time.Date(2026, 11, 21, 9, 0, 0, 123456789, time.UTC)
		// The subscriber goroutine subscribes asynchronously; notify until heard.
		got := notifyUntilHeard(t, notifier, wakeups, at)
		if want := at.Truncate(time.Microsecond); !got.Equal(want) {
			t.Errorf("woken for %s, want %s (microsecond precision)", got, want)
		}
	})
}

func TestWakeupsDeliverTheEarliestToABusyDispatcher(t *testing.T) {
	t.Parallel()
	clk := newFakeClock()
	l := coordination.NewLocal(clk.Now)
	t.Cleanup(func() { _ = l.Close() })
	w := coordination.NewWakeups(l, zaptest.NewLogger(t))
	ctx := t.Context()
	ch := w.Subscribe(ctx)
	base := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	notifyUntilHeard(t, w, ch, base.Add(time.Hour)) // the subscription is live from here

	// The dispatcher is busy (not reading) while three notices arrive; what
	// it reads next must lead it to the earliest, whatever was coalesced.
	for _, d := range []time.Duration{30 * time.Minute, 5 * time.Minute, 20 * time.Minute} {
		require.NoError(t, w.Notify(ctx, base.Add(d)))
	}
	want := base.Add(5 * time.Minute)
	var got []time.Time
	for i := 0; ; i++ {
		require.Less(t, i, 10, "woken for %v, never for the earliest %s", got, want)
		at := receive(t, ch, "wakeup")
		got = append(got, at)
		if at.Equal(want) {
			return
		}
	}
}

func TestWakeupsCloseWithContext(t *testing.T) {
	t.Parallel()
	l := coordination.NewLocal(time.Now)
	t.Cleanup(func() { _ = l.Close() })
	ctx, cancel := context.WithCancel(t.Context())
	ch := coordination.NewWakeups(l, zaptest.NewLogger(t)).Subscribe(ctx)
	cancel()
	deadline := time.NewTimer(5 * time.Second)
	defer deadline.Stop()
	select {
	case _, ok := <-ch:
		require.False(t, ok, "no wake-up was sent")
	case <-deadline.C:
		t.Fatal("wake-up channel still open 5s after its context ended")
	}
}

func TestWakeupsResubscribeWhenRedisReturns(t *testing.T) {
	t.Parallel()
	c, _, stop, restart := privateRedis(t, newFakeClock())
	stop()
	w := coordination.NewWakeups(c, zaptest.NewLogger(t))
	ch := w.Subscribe(t.Context()) // Redis is down: it keeps retrying
	restart()
	at := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	if got := notifyUntilHeard(t, w, ch, at); !got.Equal(at) {
		t.Errorf("woken for %s, want %s", got, at)
	}
}

// notifyUntilHeard notifies at every 50ms until ch delivers, for at most
// 20s, and returns what ch delivered.
func notifyUntilHeard(t *testing.T, w *coordination.Wakeups, ch <-chan time.Time, at time.Time) time.Time {
	t.Helper()
	deadline := time.NewTimer(20 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var lastErr error
	for {
		select {
		case got, ok := <-ch:
			require.True(t, ok, "wake-up channel closed")
			return got
		case <-tick.C:
			lastErr = w.Notify(t.Context(), at)
		case <-deadline.C:
			t.Fatalf("no wake-up within 20s (last notify error: %v)", lastErr)
		}
	}
}

// Notify never waits on the bus: with Redis unreachable (it accepts
// connections and never answers), a hundred announcements return at once
// instead of each holding its caller for the I/O timeout.
func TestNotifyNeverWaitsOnAnUnreachableBus(t *testing.T) {
	t.Parallel()
	client := redis.NewClient(&redis.Options{Addr: coordinationtest.BlackHoleAddr(t), MaxRetries: -1})
	t.Cleanup(func() { _ = client.Close() })
	// Nop loggers: the publisher's failures are logged after the test ends.
	w := coordination.NewWakeups(coordination.NewRedis(client, "wakeups-test:", zap.NewNop()), zap.NewNop())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 100 {
			_ = w.Notify(t.Context(), time.Unix(int64(i), 0))
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second): // waiting on the bus would take 100 s
		t.Fatal("Notify waited on the unreachable bus")
	}
}
