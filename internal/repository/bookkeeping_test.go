package repository_test

import (
	"context"
	"fmt"
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
		if run.EndsOneTime { // read, not written (EventEnds)
			delete(merged, run.EventID)
			continue
		}
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
// afterwards shows the newest attempt and the earliest waiting occurrence
// as next_run_at. A one-shot event's end is never written: it reads as
// ended as soon as its outcome is recorded.
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

		ev, err := s.GetEvent(ctx, series.ID)
		require.NoError(t, err)
		require.Nil(t, ev.LastRunAt, "the outcome transaction writes no event row")
		require.Equal(t, model.EventActive, ev.Status)
		require.True(t, oneShot.Run().EndsOneTime, "the bookkeeper drops the one-shot event's run")
		requireReadsEnded(t, s, once.ID, once.StartTime, "completed (HTTP 200 OK)")

		// The bookkeeper's write: two deliveries of the series, merged.
		noteRuns(t, s, second, first)
		ev, err = s.GetEvent(ctx, series.ID)
		require.NoError(t, err)
		require.Equal(t, t0.Add(time.Second), *ev.LastRunAt, "the newest attempt wins, whatever the order noted")
		require.Equal(t, "completed: second", ev.LastStatus)
		require.Equal(t, t0.Add(time.Hour), *ev.NextRunAt, "next_run_at is the earliest waiting occurrence")
		require.Equal(t, model.EventActive, ev.Status)
		require.EqualValues(t, 1, ev.Version, "bookkeeping does not bump the version")

		requireReadsEnded(t, s, once.ID, once.StartTime, "completed (HTTP 200 OK)")

		// A run that arrives late (another instance, a repair) and is older
		// than what the event shows changes nothing.
		noteRuns(t, s, first)
		ev, err = s.GetEvent(ctx, series.ID)
		require.NoError(t, err)
		require.Equal(t, t0.Add(time.Second), *ev.LastRunAt)
		require.Equal(t, "completed: second", ev.LastStatus)
	})
}

// requireReadsEnded asserts that the one-time event id reads as ended by a
// run at ranAt with lastStatus, its row untouched: stored active, version 1.
func requireReadsEnded(t *testing.T, s *repository.Store, id string, ranAt time.Time, lastStatus string) {
	t.Helper()
	ctx := context.Background()
	for _, read := range []func() (model.Event, error){
		func() (model.Event, error) { return s.GetEvent(ctx, id) },
		func() (model.Event, error) { return s.GetEventAny(ctx, id) },
		func() (model.Event, error) {
			evs, err := s.ListEvents(ctx, model.EventFilter{Unrestricted: true,
				Status: []model.EventStatus{model.EventInactive}, Limit: 1000})
			for _, e := range evs {
				if e.ID == id {
					return e, err
				}
			}
			return model.Event{}, fmt.Errorf("%s is not listed inactive (%w)", id, err)
		},
	} {
		ev, err := read()
		require.NoError(t, err)
		require.Equal(t, model.EventInactive, ev.Status, "a delivered one-shot event reads inactive")
		require.Nil(t, ev.NextRunAt)
		require.NotNil(t, ev.LastRunAt)
		require.Equal(t, ranAt, ev.LastRunAt.UTC())
		require.Equal(t, lastStatus, ev.LastStatus)
		require.EqualValues(t, 1, ev.Version, "an end read, not written, keeps the version")
	}
	active, err := s.ListEvents(ctx, model.EventFilter{Unrestricted: true,
		Status: []model.EventStatus{model.EventActive}, Limit: 1000})
	require.NoError(t, err)
	for _, e := range active {
		require.NotEqual(t, id, e.ID, "an ended one-shot event is not listed active")
	}
	var stored string
	require.NoError(t, s.DB().GetContext(ctx, &stored, s.DB().Rebind(`SELECT status FROM events WHERE id = ?`), id))
	require.Equal(t, "active", stored, "its row was not written")
}

// A one-time event's delivery ends its series as read, unless the event
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

		requireReadsEnded(t, s, settled.ID, t0, "completed (HTTP 200 OK)")
		ev, err := s.GetEvent(ctx, edited.ID)
		require.NoError(t, err)
		require.Equal(t, model.EventActive, ev.Status, "its new occurrence is still to fire")

		// Once the new occurrence ends too, the event reads the newer run.
		got = claim(t, s, t0.Add(time.Hour), 1)
		require.Len(t, got, 1)
		r := delivered(got[0], t0.Add(time.Hour), "completed (HTTP 200 OK)")
		r.WholeSeries, r.EventVersion = true, 2
		record(t, s, r)
		noteRuns(t, s, r)
		ev, err = s.GetEvent(ctx, edited.ID)
		require.NoError(t, err)
		require.Equal(t, model.EventInactive, ev.Status)
		require.Equal(t, t0.Add(time.Hour), ev.LastRunAt.UTC())
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
// occurrences writes it again (from the attempts), and leaves alone the
// events whose bookkeeping was written and the one-shot event, whose end
// is read, never written.
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
		require.Zero(t, n, "the fine and the one-shot events are never rewritten")
		require.Equal(t, to, next, "the window was read to its end")

		ev, err := s.GetEvent(ctx, series.ID)
		require.NoError(t, err)
		require.Equal(t, t0.Add(5*time.Millisecond), *ev.LastRunAt)
		require.Equal(t, "failed (HTTP 503 Service Unavailable): server error", ev.LastStatus)
		require.Equal(t, t0.Add(time.Hour), *ev.NextRunAt)
		require.Equal(t, model.EventActive, ev.Status)

		requireReadsEnded(t, s, once.ID, t0.Add(5*time.Millisecond),
			"failed (HTTP 503 Service Unavailable): server error")

		after, err := s.GetEvent(ctx, fine.ID)
		require.NoError(t, err)
		require.Equal(t, before, after)

		n, _, err = s.RepairEventRuns(ctx, from, to, 100)
		require.NoError(t, err)
		require.Zero(t, n, "a second pass finds nothing to repair")

	})
}
