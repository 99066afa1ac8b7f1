package repository_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
)

func TestRetryOccurrenceRequeuesWithSameID(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		e := newEvent("a")
		mustCreate(t, s, e)
		failed := settle(t, s, e, t0, t0, model.OccurrenceFailed, 1)
		now := t0.Add(time.Hour)

		got, err := s.RetryOccurrence(ctx, failed.ID, now)
		require.NoError(t, err)
		require.Equal(t, failed.ID, got.ID)
		require.Equal(t, model.OccurrencePending, got.Status)
		require.True(t, got.ManualRetry)
		require.Equal(t, now, got.NextAttemptAt)
		require.Nil(t, got.CompletedAt, "no longer terminal")
		require.Equal(t, 1, got.AttemptCount, "history of attempts is kept")

		_, err = s.RetryOccurrence(ctx, failed.ID, now)
		require.ErrorIs(t, err, model.ErrConflict, "already queued")

		claimed := claim(t, s, now, 10)
		require.Len(t, claimed, 1, "the dispatcher picks the re-delivery up at once")
		require.Equal(t, failed.ID, claimed[0].ID, "same delivery id")
		require.True(t, claimed[0].ManualRetry)
		_, err = s.RetryOccurrence(ctx, failed.ID, now)
		require.ErrorIs(t, err, model.ErrNotRetryable, "leased")

		_, err = s.RetryOccurrence(ctx, "2b0e2f4e-7d1c-4c36-9a53-2e8f4f1f0f00", now)
		require.ErrorIs(t, err, model.ErrNotFound)
		_, err = s.RetryOccurrence(ctx, "not-a-uuid", now)
		require.ErrorIs(t, err, model.ErrNotFound)

		_, err = s.InsertOccurrences(ctx, e.ID, []time.Time{t0.Add(5 * time.Hour)}, false, now)
		require.NoError(t, err)
		_, err = s.RetryOccurrence(ctx, occIDAt(t, s, e.ID, t0.Add(5*time.Hour)), now)
		require.ErrorIs(t, err, model.ErrConflict, "pending")

		for _, st := range []model.OccurrenceStatus{model.OccurrenceCompleted, model.OccurrenceMissed} {
			at := t0.Add(time.Duration(len(st)) * time.Minute)
			o := settle(t, s, e, at, at, st, 1)
			_, err := s.RetryOccurrence(ctx, o.ID, now)
			require.NoError(t, err, "retry from %s", st)
		}
	})
}

func TestRetryOccurrencesBulkIsScopedAndBounded(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		onlyA, shared, onlyB, gone := newEvent("a"), newEvent("a", "b"), newEvent("b"), newEvent("a")
		for _, e := range []*model.Event{onlyA, shared, onlyB, gone} {
			mustCreate(t, s, e)
		}
		var failedA []string
		minute := 0
		next := func() time.Time { minute++; return t0.Add(time.Duration(minute) * time.Minute) }
		for range 3 {
			at := next()
			failedA = append(failedA, settle(t, s, onlyA, at, at, model.OccurrenceFailed, 1).ID)
		}
		at := next()
		completedA := settle(t, s, onlyA, at, at, model.OccurrenceCompleted, 1).ID
		at = next()
		failedShared := settle(t, s, shared, at, at, model.OccurrenceFailed, 1).ID
		at = next()
		settle(t, s, onlyB, at, at, model.OccurrenceFailed, 1)
		at = next()
		settle(t, s, gone, at, at, model.OccurrenceFailed, 1)
		softDelete(t, s, gone.ID, at)
		now := t0.Add(time.Hour)

		scopedA := model.RetryFilter{Scope: []string{"a"}, Limit: 2, BatchSize: 1}
		got, err := s.RetryOccurrences(ctx, scopedA, now)
		require.NoError(t, err)
		require.Equal(t, model.RetryResult{Requeued: 2, LimitReached: true}, got)
		got, err = s.RetryOccurrences(ctx, scopedA, now)
		require.NoError(t, err)
		require.Equal(t, model.RetryResult{Requeued: 1, LimitReached: false}, got,
			"the shared event (tag b outside the scope) and the deleted event are not touched")

		for _, id := range failedA {
			o, err := s.GetOccurrence(ctx, id)
			require.NoError(t, err)
			require.Equal(t, model.OccurrencePending, o.Status, "queued for the manual attempt")
			require.True(t, o.ManualRetry)
			require.Equal(t, now, o.NextAttemptAt)
		}
		for _, id := range []string{completedA, failedShared} {
			o, err := s.GetOccurrence(ctx, id)
			require.NoError(t, err)
			require.False(t, o.ManualRetry, "occurrence %s untouched", id)
			require.NotEqual(t, model.OccurrencePending, o.Status, "occurrence %s untouched", id)
		}

		from, to := t0.Add(4*time.Minute), t0.Add(6*time.Minute)
		got, err = s.RetryOccurrences(ctx, model.RetryFilter{Unrestricted: true, Limit: 100, From: &from, To: &to,
			Status: []model.OccurrenceStatus{model.OccurrenceCompleted, model.OccurrenceFailed}}, now)
		require.NoError(t, err)
		require.Equal(t, model.RetryResult{Requeued: 2}, got, "completed at 4 min and shared failed at 5 min")

		got, err = s.RetryOccurrences(ctx, model.RetryFilter{Unrestricted: true, Limit: 100, EventID: onlyB.ID}, now)
		require.NoError(t, err)
		require.Equal(t, 1, got.Requeued)

		got, err = s.RetryOccurrences(ctx, model.RetryFilter{Unrestricted: true, Limit: 100}, now)
		require.NoError(t, err)
		require.Zero(t, got.Requeued, "only the deleted event's row is left, and it never qualifies")

		_, err = s.RetryOccurrences(ctx, model.RetryFilter{Unrestricted: true, Limit: 1,
			Status: []model.OccurrenceStatus{model.OccurrencePending}}, now)
		require.Error(t, err, "non-terminal statuses are refused")
		got, err = s.RetryOccurrences(ctx, model.RetryFilter{Limit: 100}, now)
		require.NoError(t, err)
		require.Zero(t, got.Requeued, "an empty scope touches nothing")
	})
}
