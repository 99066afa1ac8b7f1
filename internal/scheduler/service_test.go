package scheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"

	"github.com/qhronos/qhronos/internal/coordination"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/scheduler"
)

func TestServiceFiresWhenWokenAndReportsStatus(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		e := newEnv(t, s, testConfig())
		local := coordination.NewLocal(e.clock.Now)
		t.Cleanup(func() { _ = local.Close() })
		svc := scheduler.New(testConfig(), scheduler.ServiceDeps{Store: s, Registry: registry(t, e.clock), Clock: e.clock,
			Locker: local, Wakeups: coordination.NewWakeups(local, zaptest.NewLogger(t)), Logger: zaptest.NewLogger(t)})
		svc.Start(context.Background())
		t.Cleanup(svc.Stop)

		ctx := context.Background()
		// The dispatcher goes to sleep for its longest sleep (1 s by the stub
		// clock) with nothing due.
		e.clock.Set(t0.Add(time.Minute - 100*time.Millisecond))
		require.NoError(t, e.clock.WaitForWaiters(deadline(t), 1))
		ev := e.create(e.event(nil))
		require.Equal(t, t0.Add(time.Minute), *ev.NextRunAt, "the API answers with next_run_at")
		svc.Wake(ctx, *ev.NextRunAt)
		// Woken, it claims the row and holds it until its instant.
		require.NoError(t, e.clock.WaitForWaiters(deadline(t), 2))
		e.clock.Advance(100 * time.Millisecond) // the instant, well before the sleep would end
		require.NoError(t, e.recv.WaitFor(deadline(t), 1), "a wake-up fires the row without waiting for a poll")
		require.NoError(t, svc.Dispatcher.Wait(deadline(t)))

		svc.Stop()
		st := svc.Status()
		for _, loop := range []string{"expander", "dispatcher", "rescuer"} {
			snap, ok := st[loop].(map[string]any)
			require.True(t, ok, "status has %s", loop)
			require.NotZero(t, snap["runs"], "%s ran", loop)
		}
		require.Equal(t, model.OccurrenceCompleted, e.occurrences(ev.ID)[0].Status)
		took, err := local.TryLock(ctx, "expander", "the-next-instance", time.Minute)
		require.NoError(t, err)
		require.True(t, took, "a stopped instance hands the expander lock over at once, not after its TTL")
	})
}

func TestDBClockFollowsTheDatabase(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		c := scheduler.NewDBClock(s, zaptest.NewLogger(t), time.Minute)
		require.NoError(t, c.Sync(context.Background()))
		// The shared test server runs on this host: the measured offset is
		// the round trip's noise, far below a second.
		if off := c.Offset(); off > time.Second || off < -time.Second {
			t.Errorf("offset to a database on this host = %s, want under 1s", off)
		}
		if d := time.Until(c.Now()); d > time.Second || d < -time.Second {
			t.Errorf("clock differs from the local one by %s", d)
		}
	})
}

// skewed reports a database clock five minutes ahead of this host.
type skewed struct{}

func (skewed) DatabaseNow(context.Context) (time.Time, error) {
	return time.Now().Add(5 * time.Minute), nil
}

func TestDBClockCorrectsASkewedHost(t *testing.T) {
	t.Parallel()
	c := scheduler.NewDBClock(skewed{}, zaptest.NewLogger(t), time.Minute)
	require.NoError(t, c.Sync(context.Background()))
	if off := c.Offset(); off < 5*time.Minute-time.Second || off > 5*time.Minute+time.Second {
		t.Errorf("offset = %s, want about 5m", off)
	}
	if d := time.Until(c.Now()); d < 5*time.Minute-time.Second {
		t.Errorf("Now is %s ahead of the host, want about 5m: due decisions follow the database", d)
	}
}
