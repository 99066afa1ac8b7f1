package scheduler_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/auth"
	"github.com/qhronos/qhronos/internal/events"
	"github.com/qhronos/qhronos/internal/lifecycle"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/scheduler"
)

func every10m(ev *model.Event) { ev.RRule = ptr("FREQ=MINUTELY;INTERVAL=10") }

func scheduledAt(occ []model.Occurrence) []time.Duration {
	out := []time.Duration{}
	for _, o := range occ {
		out = append(out, o.ScheduledAt.Sub(t0))
	}
	return out
}

func mins(ms ...int) []time.Duration {
	out := []time.Duration{}
	for _, m := range ms {
		out = append(out, time.Duration(m)*time.Minute)
	}
	return out
}

func TestExpansionFillsLookaheadOnlyAndAdvancesCursor(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		e := newEnv(t, s, testConfig()) // lookahead 1 h
		ev := e.create(e.event(every10m))
		require.Equal(t, mins(1, 11, 21, 31, 41, 51), scheduledAt(e.occurrences(ev.ID)), "rows for the lookahead only")
		got := e.reload(ev.ID)
		require.Equal(t, t0.Add(61*time.Minute), *got.ExpandedUntil, "cursor on the next instant beyond the horizon")
		require.Equal(t, t0.Add(time.Minute), *got.NextRunAt)

		n, err := e.exp.RunOnce(ctx)
		require.NoError(t, err)
		require.Zero(t, n, "re-running inserts nothing")

		e.clock.Advance(30 * time.Minute)
		n, err = e.exp.RunOnce(ctx)
		require.NoError(t, err)
		require.Equal(t, 3, n)
		require.Equal(t, mins(1, 11, 21, 31, 41, 51, 61, 71, 81), scheduledAt(e.occurrences(ev.ID)))
		require.Equal(t, t0.Add(91*time.Minute), *e.reload(ev.ID).ExpandedUntil)

		// Window additivity: the same rule expanded once over the whole
		// window gives the same instants.
		once := newEnv(t, s, testConfig())
		once.clock.Advance(30 * time.Minute)
		other := once.create(once.event(every10m))
		require.Equal(t, scheduledAt(e.occurrences(ev.ID)), scheduledAt(once.occurrences(other.ID)))
	})
}

func TestExpansionCapsSecondlyRulePerWindow(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		cfg := testConfig()
		cfg.MaxRowsPerEventWindow = 100
		e := newEnv(t, s, cfg)
		ev := e.create(e.event(func(ev *model.Event) { ev.RRule = ptr("FREQ=SECONDLY") }))
		occ := e.occurrences(ev.ID)
		require.Len(t, occ, 100, "one window adds at most the cap")
		require.Equal(t, t0.Add(time.Minute+99*time.Second), occ[99].ScheduledAt)

		n, err := e.exp.RunOnce(context.Background())
		require.NoError(t, err)
		require.Equal(t, 100, n, "the next run continues after the last row")
		occ = e.occurrences(ev.ID)
		require.Len(t, occ, 200)
		for i := range occ {
			require.Equal(t, t0.Add(time.Minute+time.Duration(i)*time.Second), occ[i].ScheduledAt, "no gap, no duplicate")
		}
	})
}

func TestExpansionRespectsCountAcrossRunsAndSettlesTheSeries(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		e := newEnv(t, s, testConfig())
		ev := e.create(e.event(func(ev *model.Event) { ev.RRule = ptr("FREQ=MINUTELY;INTERVAL=10;COUNT=8") }))
		require.Len(t, e.occurrences(ev.ID), 6)
		e.clock.Advance(55 * time.Minute)
		require.Equal(t, 6, e.dispatch())
		require.Equal(t, model.EventActive, e.reload(ev.ID).Status, "two instants are still to come")
		e.clock.Advance(5 * time.Minute)
		_, err := e.exp.RunOnce(ctx)
		require.NoError(t, err)
		require.Equal(t, mins(1, 11, 21, 31, 41, 51, 61, 71), scheduledAt(e.occurrences(ev.ID)), "COUNT=8 across two runs")
		require.Equal(t, model.SeriesEnd, *e.reload(ev.ID).ExpandedUntil)

		e.clock.Advance(15 * time.Minute)
		require.Equal(t, 2, e.dispatch())
		require.Equal(t, 8, len(e.recv.Deliveries()))
		got := e.awaitEvent(ev.ID, inactive, "the series ended and everything fired")
		require.Nil(t, got.NextRunAt)
	})
}

// lifecycle is the events service on the test's store and stub clock, as
// the API calls it.
func (e *env) lifecycle(cfg scheduler.Config) *lifecycle.Service {
	return lifecycle.New(lifecycle.Deps{Store: e.store, Actions: registry(e.t, e.clock), Now: e.clock.Now},
		lifecycle.Options{Window: cfg.Window(), MaxTimeout: time.Minute})
}

var master = auth.Principal{Subject: "test", Master: true}

func (e *env) pause(id string) {
	_, err := e.lifecycle(testConfig()).Pause(context.Background(), master, id, events.Pause{}, nil)
	require.NoError(e.t, err)
}

func (e *env) resume(id string) {
	_, err := e.lifecycle(testConfig()).Resume(context.Background(), master, id, events.Resume{}, nil)
	require.NoError(e.t, err)
}

func TestPauseSkipsAndResumeNeverFiresInstantsInsideThePause(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		e := newEnv(t, s, testConfig())
		ev := e.create(e.event(every10m))
		before := e.occurrences(ev.ID)
		e.pause(ev.ID)
		for _, o := range e.occurrences(ev.ID) {
			require.Equal(t, model.OccurrenceSkipped, o.Status)
			require.Equal(t, model.ReasonPaused, *o.Reason)
		}
		require.Nil(t, e.reload(ev.ID).NextRunAt)

		e.clock.Advance(25 * time.Minute) // +1, +11, +21 fall inside the pause
		require.Zero(t, e.dispatch(), "nothing fires while paused")
		e.resume(ev.ID)
		after := e.occurrences(ev.ID)
		require.Equal(t, mins(1, 11, 21, 31, 41, 51, 61, 71, 81), scheduledAt(after))
		for i := 3; i < 6; i++ {
			require.Equal(t, before[i].ID, after[i].ID, "reinstated rows keep their id")
		}
		require.Equal(t, []model.OccurrenceStatus{"skipped", "skipped", "skipped", "pending", "pending",
			"pending", "pending", "pending", "pending"}, e.statuses(ev.ID), "instants inside the pause stay skipped")

		e.clock.Advance(30 * time.Minute) // to +55
		require.Equal(t, 3, e.dispatch())
		got := map[string]bool{}
		for id := range e.recv.Count() {
			got[id] = true
		}
		require.Equal(t, map[string]bool{after[3].ID: true, after[4].ID: true, after[5].ID: true}, got,
			"only the instants after the resume fired")
	})
}

func TestEditKeepsIDsOfInstantsStillInTheSeries(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		e := newEnv(t, s, testConfig())
		ev := e.create(e.event(every10m))
		before := e.occurrences(ev.ID)
		in, err := events.DecodeInput(map[string]json.RawMessage{"rrule": json.RawMessage(`"FREQ=MINUTELY;INTERVAL=20"`)})
		require.NoError(t, err)
		_, err = e.lifecycle(testConfig()).Update(ctx, master, ev.ID, in, nil)
		require.NoError(t, err)
		after := e.occurrences(ev.ID)
		require.Equal(t, mins(1, 11, 21, 31, 41, 51), scheduledAt(after))
		require.Equal(t, []model.OccurrenceStatus{"pending", "cancelled", "pending", "cancelled", "pending", "cancelled"},
			e.statuses(ev.ID))
		for i := range after {
			require.Equal(t, before[i].ID, after[i].ID, "instant +%s keeps its id", scheduledAt(after)[i])
		}
	})
}

func TestPauseWithCatchUpFireHandsTheInstantsInsideToTheEventsPolicy(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		e := newEnv(t, s, testConfig())
		ev := e.create(e.event(func(ev *model.Event) {
			every10m(ev)
			ev.CatchUp = scheduler.CatchUpLatest
		}))
		svc := e.lifecycle(testConfig())
		until := t0.Add(25 * time.Minute)
		_, err := svc.Pause(ctx, master, ev.ID, events.Pause{Until: &until, Reason: "deploy", CatchUp: model.PauseFire}, nil)
		require.NoError(t, err)
		paused := e.reload(ev.ID)
		require.Equal(t, "deploy", paused.PauseReason)
		require.Equal(t, "test", paused.PausedBy)

		e.clock.Set(until)
		n, err := svc.ResumeDue(ctx, 10)
		require.NoError(t, err)
		require.Equal(t, 1, n, "the pause ended: resumed by itself")
		require.Equal(t, model.EventActive, e.reload(ev.ID).Status)
		require.Nil(t, e.reload(ev.ID).PausedUntil)

		// +1, +11 and +21 fell inside the pause: due again, and catch_up
		// latest fires only the newest of them.
		require.Equal(t, 3, e.dispatch())
		got := map[string]string{}
		for _, o := range e.occurrences(ev.ID)[:3] {
			r := ""
			if o.Reason != nil {
				r = "/" + *o.Reason
			}
			got[o.ScheduledAt.Sub(t0).String()] = string(o.Status) + r
		}
		require.Equal(t, map[string]string{"1m0s": "missed/catch_up_policy", "11m0s": "missed/catch_up_policy",
			"21m0s": "completed"}, got)
	})
}

func TestExpanderRecordsADSTGapInTheLedger(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		e := newEnv(t, s, testConfig())
		ny, err := time.LoadLocation("America/New_York")
		require.NoError(t, err)
		// Daily at 02:30 New York from 8 March 2031; clocks skip 02:00–03:00 on 9 March.
		start := time.Date(2031, 3, 8, 2, 30, 0, 0, ny)
		e.clock.Set(start.Add(-30 * time.Minute))
		ev := e.create(e.event(func(ev *model.Event) {
			ev.StartTime, ev.Timezone, ev.RRule = start, "America/New_York", ptr("FREQ=DAILY")
			ev.DST = model.DST{Gap: "skip"}
		}))
		for range 3 {
			e.clock.Advance(24 * time.Hour)
			_, err := e.exp.RunOnce(context.Background())
			require.NoError(t, err)
		}
		got := map[string]string{}
		for _, o := range e.occurrences(ev.ID) {
			r := ""
			if o.Reason != nil {
				r = "/" + *o.Reason
			}
			got[o.ScheduledAt.In(ny).Format("01-02 15:04 MST")] = string(o.Status) + r
		}
		require.Equal(t, "skipped/dst_gap", got["03-09 03:30 EDT"], "the reading that does not exist: %v", got)
		require.Equal(t, "pending", got["03-10 02:30 EDT"])
		require.Len(t, got, 4, "8, 9 (skipped), 10 and 11 March: %v", got)
	})
}

func TestAnEditWhilePausedCancelsInstantsThatLeftTheSeries(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		e := newEnv(t, s, testConfig())
		ev := e.create(e.event(every10m)) // +1, +11, +21, …
		e.pause(ev.ID)
		in, err := events.DecodeInput(map[string]json.RawMessage{"rrule": json.RawMessage(`"FREQ=MINUTELY;INTERVAL=20"`)})
		require.NoError(t, err)
		_, err = e.lifecycle(testConfig()).Update(ctx, master, ev.ID, in, nil)
		require.NoError(t, err)
		e.clock.Advance(5 * time.Minute)
		e.resume(ev.ID)
		got := map[string]string{}
		for _, o := range e.occurrences(ev.ID) {
			r := ""
			if o.Reason != nil {
				r = "/" + *o.Reason
			}
			got[o.ScheduledAt.Sub(t0).String()] = string(o.Status) + r
		}
		require.Equal(t, "skipped/paused", got["1m0s"], "inside the pause")
		require.Equal(t, "cancelled/rule_changed", got["11m0s"], "no longer in the series")
		require.Equal(t, "pending", got["21m0s"], "still in the series: %v", got)
	})
}

// Every instance was down for five hours, far past the lookahead of one:
// the ledger still accounts for every instant of the outage. Rows planned
// before it are found missed by the dispatcher, those never planned are
// recorded missed by the expander, and the last hour (the catch-up
// window) fires.
func TestAnOutagePastTheLookaheadLeavesEveryInstantInTheLedger(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		e := newEnv(t, s, testConfig())
		ev := e.create(e.event(every10m)) // +1, +11, … planned an hour ahead
		e.clock.Advance(5 * time.Hour)
		_, err := e.exp.RunOnce(ctx)
		require.NoError(t, err)
		for e.dispatch() > 0 {
		}
		byStatus := map[string]int{}
		seen := map[time.Duration]bool{}
		for _, o := range e.occurrences(ev.ID) {
			if o.ScheduledAt.After(e.clock.Now()) {
				continue
			}
			seen[o.ScheduledAt.Sub(t0)] = true
			r := ""
			if o.Reason != nil {
				r = "/" + *o.Reason
			}
			byStatus[string(o.Status)+r]++
		}
		for at := time.Minute; at < 5*time.Hour; at += 10 * time.Minute {
			require.True(t, seen[at], "the instant at +%s is in the ledger", at)
		}
		require.Equal(t, map[string]int{"missed/catch_up_window": 24, "completed": 6}, byStatus,
			"four hours missed, the last hour caught up")
	})
}
