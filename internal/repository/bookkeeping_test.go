package repository_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/repository/repositorytest"
)

// noteRuns writes the bookkeeping of applied records as the scheduler's
// bookkeeper does: merged per event, one NoteEventRuns.
func noteRuns(t *testing.T, s *repository.Store, recs ...repository.OutcomeRecord) {
	t.Helper()
	merged := map[string]repository.EventRun{}
	var order []string
	for i := range recs {
		run := recs[i].Run()
		if prev, ok := merged[run.EventID]; ok {
			run = prev.Merge(run)
		} else {
			order = append(order, run.EventID)
		}
		merged[run.EventID] = run
	}
	runs := make([]repository.EventRun, 0, len(order))
	for _, id := range order {
		runs = append(runs, merged[id])
	}
	require.NoError(t, s.NoteEventRuns(context.Background(), runs))
}

// delivered is the record of a completed attempt of occurrence o.
func delivered(o model.Occurrence, startedAt time.Time, status string) repository.OutcomeRecord {
	code := 200
	return repository.OutcomeRecord{OccurrenceID: o.ID, LeaseToken: "tok", Status: model.OccurrenceCompleted,
		StatusCode: &code, Now: startedAt.Add(10 * time.Millisecond), EventID: o.EventID, Ran: true, LastStatus: status,
		Attempt: &model.Attempt{OccurrenceID: o.ID, EventID: o.EventID, Attempt: 1, StartedAt: startedAt,
			Outcome: "completed", StatusCode: &code, ScheduledAt: o.ScheduledAt}}
}

func record(t *testing.T, s *repository.Store, recs ...repository.OutcomeRecord) {
	t.Helper()
	res, err := s.RecordOutcomes(context.Background(), recs)
	require.NoError(t, err)
	for _, r := range res {
		require.NoError(t, r)
	}
}

// The outcome transaction leaves the event alone; the bookkeeping written
// afterwards shows the newest attempt, the earliest waiting occurrence as
// next_run_at, and settles a one-shot event to inactive.
func TestEventBookkeepingFollowsRecordedOutcomes(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		series := newEvent()
		mustCreate(t, s, series)
		_, err := s.InsertOccurrences(ctx, series.ID, []time.Time{t0, t0.Add(time.Second), t0.Add(time.Hour)}, false, t0)
		require.NoError(t, err)
		once := newEvent()
		once.StartTime = t0.Add(time.Millisecond)
		mustCreate(t, s, once)
		_, err = s.InsertOccurrences(ctx, once.ID, []time.Time{once.StartTime}, false, t0)
		require.NoError(t, err)
		_, err = s.SetExpansion(ctx, repository.ExpansionUpdate{EventID: once.ID, Version: 1,
			ExpandedUntil: model.SeriesEnd, Now: t0})
		require.NoError(t, err)

		got := claim(t, s, t0.Add(time.Second), 3)
		require.Len(t, got, 3)
		byInstant := map[time.Time]model.Occurrence{}
		for _, o := range got {
			byInstant[o.ScheduledAt] = o
		}
		first := delivered(byInstant[t0], t0, "completed (HTTP 200 OK)")
		second := delivered(byInstant[t0.Add(time.Second)], t0.Add(time.Second), "completed: second")
		oneShot := delivered(byInstant[once.StartTime], once.StartTime, "completed (HTTP 200 OK)")
		oneShot.WholeSeries, oneShot.EventVersion = true, 1 // as the dispatcher says it
		record(t, s, first, second, oneShot)

		for _, id := range []string{series.ID, once.ID} {
			ev, err := s.GetEvent(ctx, id)
			require.NoError(t, err)
			require.Nil(t, ev.LastRunAt, "the outcome transaction writes no event row")
			require.Equal(t, model.EventActive, ev.Status)
		}

		// The bookkeeper's write: two deliveries of the series, merged.
		noteRuns(t, s, second, first, oneShot)
		ev, err := s.GetEvent(ctx, series.ID)
		require.NoError(t, err)
		require.Equal(t, t0.Add(time.Second), *ev.LastRunAt, "the newest attempt wins, whatever the order noted")
		require.Equal(t, "completed: second", ev.LastStatus)
		require.Equal(t, t0.Add(time.Hour), *ev.NextRunAt, "next_run_at is the earliest waiting occurrence")
		require.Equal(t, model.EventActive, ev.Status)
		require.EqualValues(t, 1, ev.Version, "bookkeeping does not bump the version")

		one, err := s.GetEvent(ctx, once.ID)
		require.NoError(t, err)
		require.Equal(t, model.EventInactive, one.Status, "a delivered one-shot event ends inactive")
		require.Nil(t, one.NextRunAt)
		require.EqualValues(t, 2, one.Version)
		require.Equal(t, once.StartTime, *one.LastRunAt)

		// A run that arrives late (another instance, a repair) and is older
		// than what the event shows changes nothing.
		noteRuns(t, s, first)
		ev, err = s.GetEvent(ctx, series.ID)
		require.NoError(t, err)
		require.Equal(t, t0.Add(time.Second), *ev.LastRunAt)
		require.Equal(t, "completed: second", ev.LastStatus)
	})
}

// A one-time event's delivery ends its series as noted, unless the event
// changed since the delivery read it: rescheduled meanwhile, it has a new
// occurrence to fire and stays active.
func TestOneTimeEventSettlesUnlessChangedSinceItsDelivery(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		var events []*model.Event
		for range 2 {
			e := newEvent()
			mustCreate(t, s, e)
			_, err := s.InsertOccurrences(ctx, e.ID, []time.Time{t0}, false, t0)
			require.NoError(t, err)
			_, err = s.SetExpansion(ctx, repository.ExpansionUpdate{EventID: e.ID, Version: 1,
				ExpandedUntil: model.SeriesEnd, Now: t0})
			require.NoError(t, err)
			events = append(events, e)
		}
		settled, edited := events[0], events[1]
		got := claim(t, s, t0, 2)
		require.Len(t, got, 2)
		var recs []repository.OutcomeRecord
		for _, o := range got {
			r := delivered(o, t0, "completed (HTTP 200 OK)")
			r.WholeSeries, r.EventVersion = true, 1
			recs = append(recs, r)
		}
		record(t, s, recs...)

		// The edit, between the outcome and the bookkeeping: a new version
		// and a new instant.
		_, err := s.DB().ExecContext(ctx, s.DB().Rebind(`UPDATE events SET version = version + 1 WHERE id = ?`), edited.ID)
		require.NoError(t, err)
		_, err = s.InsertOccurrences(ctx, edited.ID, []time.Time{t0.Add(time.Hour)}, false, t0)
		require.NoError(t, err)
		noteRuns(t, s, recs...)

		ev, err := s.GetEvent(ctx, settled.ID)
		require.NoError(t, err)
		require.Equal(t, model.EventInactive, ev.Status, "its one occurrence was delivered")
		require.EqualValues(t, 2, ev.Version)
		ev, err = s.GetEvent(ctx, edited.ID)
		require.NoError(t, err)
		require.Equal(t, model.EventActive, ev.Status, "its new occurrence is still to fire")
		require.Equal(t, t0.Add(time.Hour), *ev.NextRunAt)
		require.Equal(t, t0, *ev.LastRunAt)
	})
}

// The outcome transaction takes no lock on the event: outcomes commit while
// another transaction holds the event's row (an edit, a slow bookkeeping
// write). Before, RecordOutcomes locked the events it touched and waited.
func TestRecordOutcomesDoesNotLockEvents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := repositorytest.Postgres(t)
	e, got := twoClaimed(t, s)

	holder, err := s.DB().BeginTxx(ctx, nil)
	require.NoError(t, err)
	defer func() { _ = holder.Rollback() }()
	_, err = holder.ExecContext(ctx, `UPDATE events SET name = 'held' WHERE id = $1`, e.ID)
	require.NoError(t, err)

	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	recs := []repository.OutcomeRecord{delivered(got[0], t0, "completed"), delivered(got[1], t0.Add(time.Second), "completed")}
	res, err := s.RecordOutcomes(wctx, recs)
	require.NoError(t, err, "the outcomes commit while the event's row is locked")
	require.NoError(t, res[0])
	require.NoError(t, res[1])
	require.Equal(t, []model.OccurrenceStatus{model.OccurrenceCompleted, model.OccurrenceCompleted}, statuses(t, s, e.ID))
	require.NoError(t, holder.Rollback())

	noteRuns(t, s, recs...)
	ev, err := s.GetEvent(ctx, e.ID)
	require.NoError(t, err)
	require.Equal(t, t0.Add(time.Second), *ev.LastRunAt)
}

// A crash between the outcome's commit and the bookkeeper's flush forgets
// the event's bookkeeping; the repair over the window of finished
// occurrences writes it again (from the attempts), settles the one-shot
// event, and leaves events whose bookkeeping was written alone.
func TestRepairEventRunsAfterACrash(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		series, once, fine := newEvent(), newEvent(), newEvent()
		for _, e := range []*model.Event{series, once, fine} {
			mustCreate(t, s, e)
		}
		_, err := s.InsertOccurrences(ctx, series.ID, []time.Time{t0, t0.Add(time.Hour)}, false, t0)
		require.NoError(t, err)
		_, err = s.InsertOccurrences(ctx, once.ID, []time.Time{t0}, false, t0)
		require.NoError(t, err)
		_, err = s.InsertOccurrences(ctx, fine.ID, []time.Time{t0, t0.Add(time.Hour)}, false, t0)
		require.NoError(t, err)
		for _, e := range []*model.Event{series, once, fine} {
			ends := t0.Add(time.Hour + time.Second)
			if e == once {
				ends = model.SeriesEnd
			}
			_, err = s.SetExpansion(ctx, repository.ExpansionUpdate{EventID: e.ID, Version: 1, ExpandedUntil: ends, Now: t0})
			require.NoError(t, err)
		}
		got := claim(t, s, t0, 3)
		require.Len(t, got, 3)
		var recs []repository.OutcomeRecord
		for _, o := range got {
			rec := delivered(o, t0.Add(5*time.Millisecond), "")
			code := 503
			msg := "server error"
			rec.Status, rec.StatusCode, rec.ErrorMessage = model.OccurrenceFailed, &code, &msg
			rec.Attempt.Outcome, rec.Attempt.StatusCode, rec.Attempt.Error = "failed", &code, &msg
			rec.LastStatus = model.RunStatus("failed", code, msg)
			recs = append(recs, rec)
		}
		record(t, s, recs...)
		// Only the fine event's bookkeeping was flushed before the crash.
		for _, r := range recs {
			if r.EventID == fine.ID {
				noteRuns(t, s, r)
			}
		}
		before, err := s.GetEvent(ctx, fine.ID)
		require.NoError(t, err)

		// Paged: a limit of one reads the window a forgotten event at a time.
		from, to := t0.Add(-time.Minute), t0.Add(time.Minute)
		n, next, err := s.RepairEventRuns(ctx, from, to, 1)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		require.Equal(t, recs[0].Attempt.StartedAt, next, "a full page: the next call starts at the last instant read")
		n, next, err = s.RepairEventRuns(ctx, next, to, 1)
		require.NoError(t, err)
		require.Equal(t, 1, n, "the repaired event is no longer a candidate: the other one is")
		n, next, err = s.RepairEventRuns(ctx, next, to, 1)
		require.NoError(t, err)
		require.Zero(t, n, "the fine event is never rewritten")
		require.Equal(t, to, next, "the window was read to its end")

		ev, err := s.GetEvent(ctx, series.ID)
		require.NoError(t, err)
		require.Equal(t, t0.Add(5*time.Millisecond), *ev.LastRunAt)
		require.Equal(t, "failed (HTTP 503 Service Unavailable): server error", ev.LastStatus)
		require.Equal(t, t0.Add(time.Hour), *ev.NextRunAt)
		require.Equal(t, model.EventActive, ev.Status)

		one, err := s.GetEvent(ctx, once.ID)
		require.NoError(t, err)
		require.Equal(t, model.EventInactive, one.Status, "the one-shot event ends inactive")
		require.Equal(t, t0.Add(5*time.Millisecond), *one.LastRunAt)

		after, err := s.GetEvent(ctx, fine.ID)
		require.NoError(t, err)
		require.Equal(t, before, after)

		n, _, err = s.RepairEventRuns(ctx, from, to, 100)
		require.NoError(t, err)
		require.Zero(t, n, "a second pass finds nothing to repair")

	})
}
