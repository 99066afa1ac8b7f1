package repository_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
)

// A backfill fills gaps only: an instant whose row was archived counts as
// existing like a live one; a new firing row is due now, marked backfill
// and manual_retry (the dispatcher's "fire whatever its age"); a skipped
// row is recorded as planned.
func TestInsertBackfillFillsGapsOnly(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		e := newEvent()
		mustCreate(t, s, e)
		now := t0.Add(90 * day)
		archivedAt, liveAt, newAt, skippedAt := t0.Add(day), t0.Add(2*day), t0.Add(3*day), t0.Add(4*day)
		settle(t, s, e, archivedAt, archivedAt.Add(time.Second), model.OccurrenceCompleted, 1)
		archiveAll(t, s, repository.ArchiveBatch{Cutoff: now.Add(-30 * day), Now: now, Limit: 100})
		archived, err := s.ListArchivedOccurrences(ctx, model.OccurrenceFilter{EventID: e.ID, Unrestricted: true, Limit: 10})
		require.NoError(t, err)
		require.Len(t, archived, 1, "the first instant's row is in the archive only")
		_, err = s.InsertOccurrences(ctx, e.ID, []time.Time{liveAt}, false, now)
		require.NoError(t, err)

		rows := []model.Planned{{At: archivedAt, Status: model.OccurrencePending},
			{At: liveAt, Status: model.OccurrencePending}, {At: newAt, Status: model.OccurrencePending},
			{At: skippedAt, Status: model.OccurrenceSkipped, Reason: model.ReasonCalendar, Note: "skipped: calendar"}}
		var got repository.BackfillCounts
		require.NoError(t, s.WithTx(ctx, func(tx *repository.Store) error {
			got, err = tx.InsertBackfill(ctx, e.ID, rows, now)
			return err
		}))
		require.Equal(t, repository.BackfillCounts{Created: 1, Skipped: 1, Existing: 2}, got)

		occ, err := s.GetOccurrence(ctx, occIDAt(t, s, e.ID, newAt))
		require.NoError(t, err)
		require.Equal(t, model.OccurrencePending, occ.Status)
		require.Equal(t, model.ReasonBackfill, *occ.Reason)
		require.True(t, occ.ManualRetry, "fires whatever its age")
		require.False(t, occ.Manual, "an instant of the series, not a manual trigger")
		require.Equal(t, now, occ.NextAttemptAt.UTC(), "due now")
		skipped, err := s.GetOccurrence(ctx, occIDAt(t, s, e.ID, skippedAt))
		require.NoError(t, err)
		require.Equal(t, model.OccurrenceSkipped, skipped.Status)
		require.Equal(t, model.ReasonCalendar, *skipped.Reason)

		require.NoError(t, s.WithTx(ctx, func(tx *repository.Store) error {
			got, err = tx.InsertBackfill(ctx, e.ID, rows, now.Add(time.Minute))
			return err
		}))
		require.Equal(t, repository.BackfillCounts{Existing: 4}, got, "a second backfill writes nothing")
	})
}
