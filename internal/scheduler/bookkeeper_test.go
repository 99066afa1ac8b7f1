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
// wrote them: the events show nothing of the deliveries while its
// registration in the dispatch group lives (no rescuer reads finished
// occurrences for a live instance), and once it lapses (the lease, 10 s)
// a rescuer writes their bookkeeping from the attempts: the one-shot event
// ends inactive, the series points at its next instant. The departed
// member is then forgotten: the next run repairs nothing again.
func TestRescuerRepairsBookkeepingACrashForgot(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		cfg := testConfig()
		cfg.BookkeepingInterval = time.Hour // never flushed while the test runs: the "crash"
		cfg.LeaseRenewInterval = time.Hour  // no heartbeat: the registration lapses on the test's clock
		e := newEnv(t, s, cfg)
		once := e.create(e.event(nil)) // at t0+1m
		series := e.create(e.event(func(ev *model.Event) { ev.RRule = ptr("FREQ=MINUTELY") }))
		e.clock.Set(t0.Add(time.Minute))
		require.Equal(t, 2, e.dispatch())
		ev := e.reload(series.ID)
		require.Nil(t, ev.LastRunAt, "the bookkeeping is still in the dead process's memory")
		require.Equal(t, model.EventActive, ev.Status)
		ev = e.reload(once.ID)
		require.Equal(t, model.EventInactive, ev.Status, "a one-time event's end is read: nothing to forget")
		require.Equal(t, t0.Add(time.Minute), *ev.LastRunAt)

		rescuer := scheduler.NewRescuer(testConfig(), s, e.clock, nil)
		e.clock.Advance(cfg.Lease - time.Second)
		_, err := rescuer.RunOnce(context.Background())
		require.NoError(t, err)
		require.Nil(t, e.reload(series.ID).LastRunAt, "a live instance's bookkeeping is its own to write")

		e.clock.Advance(2 * time.Second) // the registration lapsed
		_, err = rescuer.RunOnce(context.Background())
		require.NoError(t, err)
		got := e.reload(once.ID)
		require.Equal(t, model.EventInactive, got.Status, "the one-shot event reads inactive")
		require.Equal(t, t0.Add(time.Minute), *got.LastRunAt)
		require.Equal(t, "completed (HTTP 200 OK)", got.LastStatus)
		got = e.reload(series.ID)
		require.Equal(t, model.EventActive, got.Status)
		require.Equal(t, t0.Add(time.Minute), *got.LastRunAt)
		require.Equal(t, t0.Add(2*time.Minute), *got.NextRunAt, "next_run_at moved to the next instant")
		gone, err := s.DepartedMembers(context.Background(), e.clock.Now())
		require.NoError(t, err)
		require.Empty(t, gone, "the repaired member is forgotten")
	})
}

// A clean stop writes the last bookkeeping and leaves the dispatch group:
// nothing is left for a rescuer to repair. A stop whose last write fails
// hands the slots over but leaves its registration to lapse, and a rescuer
// then repairs what it could not write.
func TestStopLeavesTheGroupOnlyWithItsBookkeepingWritten(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		cfg := testConfig()
		cfg.BookkeepingInterval = time.Hour
		cfg.LeaseRenewInterval = time.Hour
		e := newEnv(t, s, cfg)
		ev := e.create(e.event(oneInstantSeries))
		e.clock.Set(t0.Add(time.Minute))
		require.Equal(t, 1, e.dispatch())
		e.disp.Close()
		require.Equal(t, t0.Add(time.Minute), *e.reload(ev.ID).LastRunAt, "the last write at the stop")
		gone, err := s.DepartedMembers(context.Background(), t0.Add(time.Hour))
		require.NoError(t, err)
		require.Empty(t, gone, "a clean stop leaves the group")

		// The database refuses the last write (a trigger stands in for it).
		e = newEnv(t, s, cfg)
		ev = e.create(e.event(oneInstantSeries))
		e.clock.Set(t0.Add(time.Minute))
		require.Equal(t, 1, e.dispatch())
		refuseEventUpdates(t, s, true)
		e.disp.Close()
		refuseEventUpdates(t, s, false)
		require.Nil(t, e.reload(ev.ID).LastRunAt, "the last write failed")
		e.clock.Advance(cfg.Lease + time.Second)
		gone, err = s.DepartedMembers(context.Background(), e.clock.Now())
		require.NoError(t, err)
		require.Len(t, gone, 1, "the registration lapses instead")
		_, err = scheduler.NewRescuer(testConfig(), s, e.clock, nil).RunOnce(context.Background())
		require.NoError(t, err)
		got := e.reload(ev.ID)
		require.Equal(t, t0.Add(time.Minute), *got.LastRunAt, "repaired")
		require.Equal(t, model.EventInactive, got.Status)
	})
}

// oneInstantSeries makes an event a series of one instant: its end is
// written by the bookkeeper (a one-time event's is read, never written).
func oneInstantSeries(ev *model.Event) { ev.RRule = ptr("FREQ=MINUTELY;COUNT=1") }

// refuseEventUpdates makes every update of an event fail (on), or lifts that.
func refuseEventUpdates(t *testing.T, s *repository.Store, on bool) {
	t.Helper()
	var stmts []string
	switch {
	case s.Backend() == repository.Postgres && on:
		stmts = []string{`CREATE FUNCTION refuse_event_updates() RETURNS trigger LANGUAGE plpgsql AS
			$$ BEGIN RAISE EXCEPTION 'event updates refused'; END $$`,
			`CREATE TRIGGER refuse_event_updates BEFORE UPDATE ON events
			FOR EACH ROW EXECUTE FUNCTION refuse_event_updates()`}
	case s.Backend() == repository.Postgres:
		stmts = []string{`DROP TRIGGER refuse_event_updates ON events`, `DROP FUNCTION refuse_event_updates()`}
	case on:
		stmts = []string{`CREATE TRIGGER refuse_event_updates BEFORE UPDATE ON events
			BEGIN SELECT RAISE(ABORT, 'event updates refused'); END`}
	default:
		stmts = []string{`DROP TRIGGER refuse_event_updates`}
	}
	for _, q := range stmts {
		_, err := s.DB().ExecContext(context.Background(), q)
		require.NoError(t, err)
	}
}

// The embedded server restarted after kill -9 is alone on its data
// directory: its predecessor's registration is a departure at once, however
// long its lease, and the first rescuer run repairs what it forgot.
func TestExclusiveRescuerRepairsItsPredecessorAtOnce(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		cfg := testConfig()
		cfg.BookkeepingInterval, cfg.LeaseRenewInterval = time.Hour, time.Hour
		cfg.Lease = 10 * time.Minute
		e := newEnv(t, s, cfg)
		ev := e.create(e.event(oneInstantSeries))
		e.clock.Set(t0.Add(time.Minute))
		require.Equal(t, 1, e.dispatch())
		require.Nil(t, e.reload(ev.ID).LastRunAt)

		restarted := testConfig()
		restarted.Exclusive, restarted.InstanceID, restarted.Lease = true, "restarted", cfg.Lease
		_, err := scheduler.NewRescuer(restarted, s, e.clock, nil).RunOnce(context.Background())
		require.NoError(t, err)
		got := e.reload(ev.ID)
		require.Equal(t, t0.Add(time.Minute), *got.LastRunAt, "repaired without waiting out the lease")
		require.Equal(t, model.EventInactive, got.Status)
	})
}
