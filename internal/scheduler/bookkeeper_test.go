package scheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/scheduler"
)

// A process killed after recording its outcomes but before its bookkeeper
// wrote them: the events show nothing of the deliveries until the rescuer's
// repair, run once the outcomes are older than its delay (40 s: 10 s, plus
// the 30 s a bookkeeper may wait for a backlog to drain), writes
// their bookkeeping from the attempts: the one-shot event ends inactive,
// the series points at its next instant.
func TestRescuerRepairsBookkeepingACrashForgot(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		cfg := testConfig()
		cfg.BookkeepingInterval = time.Hour // never flushed while the test runs: the "crash"
		e := newEnv(t, s, cfg)
		once := e.create(e.event(nil)) // at t0+1m
		series := e.create(e.event(func(ev *model.Event) { ev.RRule = ptr("FREQ=MINUTELY") }))
		e.clock.Set(t0.Add(time.Minute))
		require.Equal(t, 2, e.dispatch())
		for _, id := range []string{once.ID, series.ID} {
			ev := e.reload(id)
			require.Nil(t, ev.LastRunAt, "the bookkeeping is still in the dead process's memory")
			require.Equal(t, model.EventActive, ev.Status)
		}

		rescuer := scheduler.NewRescuer(testConfig(), s, e.clock, nil)
		_, err := rescuer.RunOnce(context.Background())
		require.NoError(t, err)
		require.Nil(t, e.reload(series.ID).LastRunAt, "outcomes younger than the repair delay are left to their bookkeeper")

		e.clock.Advance(11 * time.Second)
		_, err = rescuer.RunOnce(context.Background())
		require.NoError(t, err)
		require.Nil(t, e.reload(series.ID).LastRunAt, "a bookkeeper may still be waiting for a backlog to drain")

		e.clock.Advance(30 * time.Second)
		_, err = rescuer.RunOnce(context.Background())
		require.NoError(t, err)
		got := e.reload(once.ID)
		require.Equal(t, model.EventInactive, got.Status, "the one-shot event ends inactive")
		require.Equal(t, t0.Add(time.Minute), *got.LastRunAt)
		require.Equal(t, "completed (HTTP 200 OK)", got.LastStatus)
		got = e.reload(series.ID)
		require.Equal(t, model.EventActive, got.Status)
		require.Equal(t, t0.Add(time.Minute), *got.LastRunAt)
		require.Equal(t, t0.Add(2*time.Minute), *got.NextRunAt, "next_run_at moved to the next instant")
	})
}
