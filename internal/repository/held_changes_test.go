package repository_test

import (
	"context"
	"testing"
	"time"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/repository/repositorytest"
	"github.com/stretchr/testify/require"
)

// What can stop or move a held row is noted for its bucket: a skip, a
// move, an event's delete. The owner's own outcome is not (it would note
// every delivery). On PostgreSQL only the changed buckets are named; on
// SQLite any change names every bucket asked about.
func TestHeldChangesNoteWhatCanStopAHeldRow(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		var rows []model.Occurrence
		seen := map[int]bool{}
		for len(rows) < 4 { // in four different buckets
			o := dueRow(t, s)
			if b := model.BucketOf(o.EventID); !seen[b] {
				seen[b] = true
				rows = append(rows, o)
			}
		}
		delivered, skipped, moved, deleted := rows[0], rows[1], rows[2], rows[3]
		bucket := func(o model.Occurrence) int { return model.BucketOf(o.EventID) }
		all := []int{bucket(delivered), bucket(skipped), bucket(moved), bucket(deleted)}
		epoch := ownAllSlots(t, s)
		changedSince := func(m repository.ChangeMark) (map[int]bool, repository.ChangeMark) {
			t.Helper()
			changed, next, err := s.ChangedSince(ctx, m, all)
			require.NoError(t, err)
			require.NotEmpty(t, next)
			return changed, next
		}

		mark, err := s.MarkChanges(ctx)
		require.NoError(t, err)
		slot := model.SlotOf(bucket(delivered))
		att := &model.Attempt{OccurrenceID: delivered.ID, EventID: delivered.EventID, Attempt: 1, StartedAt: t0,
			Outcome: "completed", ScheduledAt: delivered.ScheduledAt}
		res, err := s.RecordOutcomes(ctx, []repository.OutcomeRecord{{OccurrenceID: delivered.ID,
			Status: model.OccurrenceCompleted, Now: t0, Attempt: att, Slot: slot, Epoch: epoch[slot], Seen: 0}})
		require.NoError(t, err)
		require.NoError(t, res[0])
		changed, _ := changedSince(mark)
		require.Empty(t, changed, "an owner's outcome is no change to its held rows")

		require.NoError(t, s.SkipOccurrence(ctx, skipped.ID, model.ReasonManual, "by hand", t0))
		require.NoError(t, s.MoveOccurrence(ctx, moved.ID, t0.Add(30*24*time.Hour), moved.ScheduledAt, t0))
		require.NoError(t, s.DeleteEvent(ctx, deleted.EventID, 0, t0))
		changed, next := changedSince(mark)
		for _, o := range []model.Occurrence{skipped, moved, deleted} {
			require.True(t, changed[bucket(o)], "the bucket of a changed row is named")
		}
		if s.Backend() == repository.Postgres {
			require.False(t, changed[bucket(delivered)], "a bucket nothing changed in is not")
		}
		changed, _ = changedSince(next)
		require.Empty(t, changed, "nothing changed since the answer's own mark")

		// Pruned once every mark in use sees them, the notes are gone and
		// later marks still see no change.
		later, err := s.MarkChanges(ctx)
		require.NoError(t, err)
		n, err := s.PruneHeldChanges(ctx, later)
		require.NoError(t, err)
		if s.Backend() == repository.Postgres {
			require.Positive(t, n)
		}
		changed, _ = changedSince(later)
		require.Empty(t, changed)
	})
}

// A change whose transaction was under way when the mark was taken is
// named once it commits: the mark did not see it, and neither did a read
// made after the mark. (PostgreSQL only: SQLite has one writer, so a mark
// is always taken between transactions.)
func TestHeldChangeCommittedAfterTheMarkIsNamed(t *testing.T) {
	s := repositorytest.Postgres(t)
	ctx := context.Background()
	o := dueRow(t, s)
	var mark repository.ChangeMark
	err := s.WithTx(ctx, func(tx *repository.Store) error {
		if err := tx.SkipOccurrence(ctx, o.ID, model.ReasonManual, "by hand", t0); err != nil {
			return err
		}
		var err error
		mark, err = s.MarkChanges(ctx) // another connection: before the commit
		return err
	})
	require.NoError(t, err)
	changed, _, err := s.ChangedSince(ctx, mark, []int{model.BucketOf(o.EventID)})
	require.NoError(t, err)
	require.True(t, changed[model.BucketOf(o.EventID)])
}
