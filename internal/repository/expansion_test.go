package repository_test

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/repository/repositorytest"
)

func TestEventsToExpandSelectsActiveEventsBehindTheHorizon(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		behind, ahead, never, paused := newEvent(), newEvent(), newEvent(), newEvent()
		behind.ExpandedUntil = &t0
		later := t0.Add(2 * time.Hour)
		ahead.ExpandedUntil = &later
		paused.Status = model.EventPaused
		for _, e := range []*model.Event{behind, ahead, never, paused} {
			mustCreate(t, s, e)
		}
		var got []string
		after := ""
		for range 3 { // pages of one
			page, err := s.EventsToExpand(ctx, t0.Add(time.Hour), after, 1)
			require.NoError(t, err)
			if len(page) == 0 {
				break
			}
			got = append(got, page[0].ID)
			after = page[0].ID
		}
		require.ElementsMatch(t, []string{behind.ID, never.ID}, got)
	})
}

func TestSetExpansionIsFencedByVersionAndSettlesEndedSeries(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		e := newEvent()
		mustCreate(t, s, e)
		_, err := s.InsertOccurrences(ctx, e.ID, []time.Time{t0}, false, t0)
		require.NoError(t, err)

		_, err = s.SetExpansion(ctx, repository.ExpansionUpdate{EventID: e.ID, Version: 7, ExpandedUntil: t0, Now: t0})
		require.ErrorIs(t, err, model.ErrStaleVersion, "expansion of an older version is refused")

		res, err := s.SetExpansion(ctx, repository.ExpansionUpdate{EventID: e.ID, Version: 1,
			ExpandedUntil: model.SeriesEnd, Now: t0})
		require.NoError(t, err)
		require.False(t, res.Inactive, "its occurrence has not fired yet")
		require.Equal(t, t0, *res.NextRunAt, "next_run_at is the pending row")

		complete(t, s, claim(t, s, t0, 1)[0], "tok", t0)
		res, err = s.SetExpansion(ctx, repository.ExpansionUpdate{EventID: e.ID, Version: 1,
			ExpandedUntil: model.SeriesEnd, Now: t0})
		require.NoError(t, err)
		require.True(t, res.Inactive)
		got, err := s.GetEvent(ctx, e.ID)
		require.NoError(t, err)
		require.Equal(t, model.EventInactive, got.Status)
		require.EqualValues(t, 2, got.Version, "a status change bumps the version")
		require.Nil(t, got.NextRunAt)
	})
}

func TestCancelFutureOccurrencesRevokesHeldLeasesOnly(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		e := newEvent()
		mustCreate(t, s, e)
		// One row in flight (its instant passed), one held until its
		// instant, one pending, one manual.
		_, err := s.InsertOccurrences(ctx, e.ID, []time.Time{t0, t0.Add(200 * time.Millisecond), t0.Add(time.Hour)}, false, t0)
		require.NoError(t, err)
		_, err = s.InsertOccurrences(ctx, e.ID, []time.Time{t0.Add(2 * time.Hour)}, true, t0)
		require.NoError(t, err)
		got, err := s.ClaimDue(ctx, repository.ClaimRequest{Now: t0, Ahead: 250 * time.Millisecond, Limit: 10,
			Token: "tok", LeaseUntil: t0.Add(time.Minute)})
		require.NoError(t, err)
		require.Len(t, got, 2)
		sort.Slice(got, func(i, j int) bool { return got[i].ScheduledAt.Before(got[j].ScheduledAt) })

		n, err := s.CancelFutureOccurrences(ctx, e.ID, time.Time{}, true, model.ReasonRuleChanged, t0.Add(100*time.Millisecond))
		require.NoError(t, err)
		require.Equal(t, 2, n)
		require.Equal(t, []model.OccurrenceStatus{"dispatching", "cancelled", "cancelled", "pending"}, statuses(t, s, e.ID))
		checks, err := s.CheckLeases(ctx, "tok", []string{got[0].ID, got[1].ID})
		require.NoError(t, err)
		require.True(t, checks[got[0].ID].Held, "the row in flight keeps its lease")
		require.False(t, checks[got[1].ID].Held, "the held row's lease is revoked")
		require.Equal(t, model.EventActive, checks[got[0].ID].EventStatus)
	})
}

func TestLatestOverdueIgnoresManualAndFinishedRows(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		e := newEvent()
		mustCreate(t, s, e)
		_, err := s.InsertOccurrences(ctx, e.ID, []time.Time{t0, t0.Add(time.Minute), t0.Add(time.Hour)}, false, t0)
		require.NoError(t, err)
		_, err = s.InsertOccurrences(ctx, e.ID, []time.Time{t0.Add(2 * time.Minute)}, true, t0)
		require.NoError(t, err)
		got, err := s.LatestOverdue(ctx, []string{e.ID, e.ID}, t0.Add(30*time.Minute))
		require.NoError(t, err)
		require.Equal(t, map[string]time.Time{e.ID: t0.Add(time.Minute)}, got)
	})
}

func TestDatabaseNowIsClose(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		got, err := s.DatabaseNow(context.Background())
		require.NoError(t, err)
		if d := time.Since(got); d > 5*time.Second || d < -5*time.Second {
			t.Errorf("database clock differs from this host's by %s", d)
		}
		require.Equal(t, time.UTC, got.Location())
	})
}

// newSeries is newEvent recurring: a series whose end the sweep and the
// bookkeeper write (a one-time event's is read: EventEnds).
func newSeries(tags ...string) *model.Event {
	e := newEvent(tags...)
	rule := "FREQ=DAILY;COUNT=1"
	e.RRule = &rule
	return e
}

// The sweep for series finished outside the outcome writer (here by an
// acknowledgement) reads a page of ended series at a time and goes on
// from its cursor, so each run costs the same however many events wait.
func TestSettleEndedEventsSweepsAPageAtATime(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		var acked, waiting []string
		for i := range 5 {
			e := newSeries()
			mustCreate(t, s, e)
			at := t0 // due now: claimed below
			if i%2 == 0 {
				at = t0.Add(time.Hour) // still waiting
			}
			_, err := s.InsertOccurrences(ctx, e.ID, []time.Time{at}, false, t0)
			require.NoError(t, err)
			_, err = s.SetExpansion(ctx, repository.ExpansionUpdate{EventID: e.ID, Version: 1,
				ExpandedUntil: model.SeriesEnd, Now: t0})
			require.NoError(t, err)
			if i%2 == 0 {
				waiting = append(waiting, e.ID)
				continue
			}
			acked = append(acked, e.ID)
			got := claim(t, s, t0, 1)
			deadline := t0.Add(time.Minute)
			res, err := s.RecordOutcomes(ctx, []repository.OutcomeRecord{{OccurrenceID: got[0].ID, LeaseToken: "tok",
				Status: model.OccurrenceAwaitingAck, AckDeadline: &deadline, Now: t0}})
			require.NoError(t, err)
			require.NoError(t, res[0])
			require.NoError(t, s.Acknowledge(ctx, got[0].ID, t0))
		}
		status := func(id string) model.EventStatus {
			e, err := s.GetEvent(ctx, id)
			require.NoError(t, err)
			return e.Status
		}
		for _, id := range acked {
			require.Equal(t, model.EventActive, status(id), "an acknowledgement alone does not settle")
		}
		// Acknowledged moments ago: the bookkeeper's to settle, not the sweep's.
		sweepAt := t0.Add(time.Minute)
		for cursor := ""; ; {
			n, next, err := s.SettleEndedEvents(ctx, sweepAt, t0.Add(-time.Second), cursor, 2)
			require.NoError(t, err)
			require.Zero(t, n, "events due within the grace are left to the bookkeeper")
			if cursor = next; cursor == "" {
				break
			}
		}
		total, cursor, passes := 0, "", 0
		for {
			n, next, err := s.SettleEndedEvents(ctx, sweepAt, t0.Add(time.Second), cursor, 2)
			require.NoError(t, err)
			total, cursor, passes = total+n, next, passes+1
			if cursor == "" {
				break
			}
			require.Less(t, passes, 10)
		}
		require.Equal(t, 3, passes, "five candidates, two a page")
		require.Equal(t, len(acked), total)
		for _, id := range acked {
			require.Equal(t, model.EventInactive, status(id))
		}
		for _, id := range waiting {
			require.Equal(t, model.EventActive, status(id), "a pending occurrence keeps its event active")
		}
	})
}

// The sweep never waits for an event another transaction writes (on
// PostgreSQL: a delivery's bookkeeping). Waiting held the locks on the rest
// of its page, and the hot path's bookkeeping behind them, for hundreds of
// milliseconds in a burst; the busy event is left to the next pass.
func TestSettleEndedEventsPassesOverEventsBeingWritten(t *testing.T) {
	s := repositorytest.Postgres(t)
	ctx := context.Background()
	var ids []string
	for range 2 {
		e := newSeries()
		mustCreate(t, s, e)
		_, err := s.SetExpansion(ctx, repository.ExpansionUpdate{EventID: e.ID, Version: 1,
			ExpandedUntil: model.SeriesEnd, Now: t0.Add(-time.Hour)})
		require.NoError(t, err)
		ids = append(ids, e.ID)
	}
	// SetExpansion settled both (no occurrence): make them active again, as
	// an event whose last delivery was just acknowledged.
	_, err := s.DB().ExecContext(ctx, `UPDATE events SET status = 'active'`)
	require.NoError(t, err)

	tx, err := s.DB().BeginTxx(ctx, nil)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback() }()
	_, err = tx.ExecContext(ctx, `SELECT id FROM events WHERE id = $1 FOR UPDATE`, ids[0])
	require.NoError(t, err)

	wait, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	n, _, err := s.SettleEndedEvents(wait, t0, t0, "", 10)
	require.NoError(t, err, "the sweep does not wait for the locked event")
	require.Equal(t, 1, n, "the free event settles")
	require.Equal(t, model.EventActive, eventStatus(t, s, ids[0]))
	require.Equal(t, model.EventInactive, eventStatus(t, s, ids[1]))

	require.NoError(t, tx.Rollback())
	n, _, err = s.SettleEndedEvents(ctx, t0, t0, "", 10)
	require.NoError(t, err)
	require.Equal(t, 1, n, "the next pass settles the event once it is free")
	require.Equal(t, model.EventInactive, eventStatus(t, s, ids[0]))
}

func eventStatus(t *testing.T, s *repository.Store, id string) model.EventStatus {
	t.Helper()
	e, err := s.GetEvent(context.Background(), id)
	require.NoError(t, err)
	return e.Status
}

// The sweep reads recurring series only: the ended one-time events, which
// stay stored active until archived (their end is read: EventEnds), are
// not in its pages, and it writes none of them.
func TestSettleEndedEventsPassesOverOneTimeEvents(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		var once []string
		for range 3 {
			e := newEvent()
			mustCreate(t, s, e)
			once = append(once, e.ID)
		}
		series := newSeries()
		mustCreate(t, s, series)
		for _, id := range append([]string{series.ID}, once...) {
			_, err := s.InsertOccurrences(ctx, id, []time.Time{t0}, false, t0)
			require.NoError(t, err)
			require.NoError(t, s.Reposition(ctx, id, &model.SeriesEnd))
		}
		got := claim(t, s, t0, 4)
		require.Len(t, got, 4)
		var recs []repository.OutcomeRecord
		for _, o := range got {
			recs = append(recs, delivered(o, t0, "completed (HTTP 200 OK)"))
		}
		record(t, s, recs...) // no bookkeeping: a series left to the sweep

		n, next, err := s.SettleEndedEvents(ctx, t0.Add(time.Minute), t0.Add(time.Second), "", 1)
		require.NoError(t, err)
		require.Equal(t, 1, n, "a page of one holds the series, not the one-time events")
		n, next, err = s.SettleEndedEvents(ctx, t0.Add(time.Minute), t0.Add(time.Second), next, 1)
		require.NoError(t, err)
		require.Zero(t, n)
		require.Empty(t, next, "nothing else to sweep")
		require.Equal(t, model.EventInactive, eventStatus(t, s, series.ID))
		for _, id := range once {
			requireReadsEnded(t, s, id, t0, "completed (HTTP 200 OK)")
		}
	})
}
