package repository_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
)

// dueRow creates an event with one occurrence due at t0 and returns it.
func dueRow(t *testing.T, s *repository.Store) model.Occurrence {
	t.Helper()
	e := newEvent()
	e.ID = model.NewID()
	mustCreate(t, s, e)
	_, err := s.InsertOccurrences(context.Background(), e.ID, []time.Time{t0}, false, t0)
	require.NoError(t, err)
	occs, err := s.ListOccurrences(context.Background(), model.OccurrenceFilter{EventID: e.ID, Unrestricted: true, Limit: 1})
	require.NoError(t, err)
	return occs[0]
}

// A slot owner reads its due rows without writing anything, leaves out the
// rows it has in flight and the slots it does not own.
func TestReadDueReadsOwnedSlotsAndWritesNothing(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		var rows []model.Occurrence
		for range 12 {
			rows = append(rows, dueRow(t, s))
		}
		slotOf := func(o model.Occurrence) int { return model.SlotOf(model.BucketOf(o.EventID)) }
		mine := []int{slotOf(rows[0]), slotOf(rows[1])}
		want := map[string]bool{}
		for _, o := range rows {
			if slotOf(o) == mine[0] || slotOf(o) == mine[1] {
				want[o.ID] = true
			}
		}
		got, err := s.ReadDue(ctx, repository.DueRequest{Until: t0, Slots: mine, Limit: 100})
		require.NoError(t, err)
		require.Len(t, got, len(want))
		for _, o := range got {
			require.True(t, want[o.ID], "row %s of slot %d is not one of %v", o.ID, slotOf(o), mine)
			require.Equal(t, model.OccurrencePending, o.Status)
		}
		all, err := s.ReadDue(ctx, repository.DueRequest{Until: t0, Skip: []string{rows[0].ID, rows[1].ID}, Limit: 100})
		require.NoError(t, err)
		require.Len(t, all, len(rows)-2, "every slot, in-flight rows left out")
		none, err := s.ReadDue(ctx, repository.DueRequest{Until: t0.Add(-time.Second), Limit: 100})
		require.NoError(t, err)
		require.Empty(t, none, "nothing due before t0")

		next, err := s.NextDueIn(ctx, nil, []string{rows[0].ID}, nil)
		require.NoError(t, err)
		require.True(t, next.Equal(t0))
		var ids []string
		for _, o := range rows {
			ids = append(ids, o.ID)
		}
		next, err = s.NextDueIn(ctx, nil, ids, nil)
		require.NoError(t, err)
		require.Nil(t, next, "every waiting row is in flight")

		again, err := s.GetOccurrence(ctx, rows[0].ID)
		require.NoError(t, err)
		require.Equal(t, rows[0].UpdatedAt, again.UpdatedAt, "reading wrote nothing")
	})
}

// A read after a key answers the rows after it in the due index (on both
// stores: the index is by instant, then id), full or not, and leaves out
// nothing else; the next instant after a key skips the rows up to it. A row
// behind the key that is no longer in flight (its outcome was not written)
// is found by a read without a key, leaving out the rows in flight.
func TestReadDueAfterAKeyStartsAfterIt(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		for range 6 {
			dueRow(t, s)
		}
		first, err := s.ReadDue(ctx, repository.DueRequest{Until: t0, Limit: 3})
		require.NoError(t, err)
		require.Len(t, first, 3)
		held := []string{first[0].ID, first[1].ID, first[2].ID}
		after := repository.KeyOf(&first[2])

		rest, err := s.ReadDue(ctx, repository.DueRequest{Until: t0, Limit: 10, After: &after})
		require.NoError(t, err)
		require.Len(t, rest, 3, "every row after the key, and only those")
		for _, o := range rest {
			require.NotContains(t, held, o.ID, "a row read before comes back")
		}
		byList, err := s.ReadDue(ctx, repository.DueRequest{Until: t0, Limit: 10, Skip: held})
		require.NoError(t, err)
		require.Equal(t, ids(byList), ids(rest), "the same rows as leaving out the ones in flight")

		last := repository.KeyOf(&rest[2])
		next, err := s.NextDueIn(ctx, nil, nil, &last)
		require.NoError(t, err)
		require.Nil(t, next, "nothing waits after the last row")
		next, err = s.NextDueIn(ctx, nil, nil, &after)
		require.NoError(t, err)
		require.NotNil(t, next)
		require.True(t, next.Equal(t0))

		// The third row's outcome was not written: it is no longer in
		// flight, and a read without the key finds it.
		again, err := s.ReadDue(ctx, repository.DueRequest{Until: t0, Limit: 10, Skip: append(held[:2:2], ids(rest)...)})
		require.NoError(t, err)
		require.Equal(t, []string{first[2].ID}, ids(again), "the row behind the key")
	})
}

// A read that sees its whole window also says when the first row after it
// is due, so its owner sleeps till then without asking again; a full read
// says nothing (more may be due in the window).
func TestReadDueAndNextGivesTheFirstInstantAfterTheWindow(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		e := newEvent()
		e.ID = model.NewID()
		mustCreate(t, s, e)
		later := []time.Time{t0.Add(3 * time.Second), t0.Add(2 * time.Second)}
		_, err := s.InsertOccurrences(ctx, e.ID, append([]time.Time{t0, t0.Add(-time.Second)}, later...), false, t0)
		require.NoError(t, err)
		slots := []int{model.SlotOf(model.BucketOf(e.ID))}

		rows, next, err := s.ReadDueAndNext(ctx, repository.DueRequest{Until: t0, Slots: slots, Limit: 10})
		require.NoError(t, err)
		require.Len(t, rows, 2)
		require.NotNil(t, next)
		require.True(t, next.Equal(t0.Add(2*time.Second)), "the first instant after the window: %v", next)

		// The rows in flight are at or before the window's end: they do
		// not hide the next instant.
		_, next, err = s.ReadDueAndNext(ctx, repository.DueRequest{Until: t0, Slots: slots,
			Skip: []string{rows[0].ID, rows[1].ID}, Limit: 10})
		require.NoError(t, err)
		require.True(t, next.Equal(t0.Add(2*time.Second)))

		full, next, err := s.ReadDueAndNext(ctx, repository.DueRequest{Until: t0, Slots: slots, Limit: 2})
		require.NoError(t, err)
		require.Len(t, full, 2)
		require.Nil(t, next, "a full read does not know what else is due in its window")

		_, next, err = s.ReadDueAndNext(ctx, repository.DueRequest{Until: t0.Add(time.Hour), Slots: slots, Limit: 10})
		require.NoError(t, err)
		require.Nil(t, next, "nothing waits after the window")
	})
}

// An outcome under a slot's epoch applies once, and only while the slot
// still has that epoch and the row is as its sender read it.
func TestOwnedOutcomeIsFencedByEpochAndAttemptCount(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		a, b := dueRow(t, s), dueRow(t, s)
		slotA, slotB := model.SlotOf(model.BucketOf(a.EventID)), model.SlotOf(model.BucketOf(b.EventID))
		leases, err := s.AcquireSlots(ctx, "me", []int{slotA, slotB}, t0, t0.Add(time.Minute), false)
		require.NoError(t, err)
		epoch := map[int]int64{}
		for _, l := range leases {
			epoch[l.Slot] = l.Epoch
		}
		record := func(o model.Occurrence, slot int, ep int64, seen int) error {
			att := &model.Attempt{OccurrenceID: o.ID, EventID: o.EventID, Attempt: seen + 1, StartedAt: t0,
				Outcome: "completed", ScheduledAt: o.ScheduledAt}
			res, err := s.RecordOutcomes(ctx, []repository.OutcomeRecord{{OccurrenceID: o.ID, Status: model.OccurrenceCompleted,
				Now: t0, Attempt: att, Slot: slot, Epoch: ep, Seen: seen}})
			require.NoError(t, err)
			return res[0]
		}
		// Another instance took b's slot meanwhile: the write under the old
		// epoch changes nothing.
		if slotA != slotB {
			_, err = s.ReleaseSlots(ctx, "me", map[int]int64{slotB: epoch[slotB]})
			require.NoError(t, err)
			_, err = s.AcquireSlots(ctx, "other", []int{slotB}, t0, t0.Add(time.Minute), false)
			require.NoError(t, err)
			require.ErrorIs(t, record(b, slotB, epoch[slotB], 0), model.ErrLeaseLost)
			got, err := s.GetOccurrence(ctx, b.ID)
			require.NoError(t, err)
			require.Equal(t, model.OccurrencePending, got.Status)
			attempts, err := s.ListAttempts(ctx, b.ID)
			require.NoError(t, err)
			require.Empty(t, attempts, "a refused outcome writes no attempt")
		}
		// A stale attempt count (someone recorded the row since) is refused.
		require.ErrorIs(t, record(a, slotA, epoch[slotA], 3), model.ErrLeaseLost)
		require.NoError(t, record(a, slotA, epoch[slotA], 0))
		got, err := s.GetOccurrence(ctx, a.ID)
		require.NoError(t, err)
		require.Equal(t, model.OccurrenceCompleted, got.Status)
		require.Equal(t, 1, got.AttemptCount, "the attempt is counted with its outcome")
		require.ErrorIs(t, record(a, slotA, epoch[slotA], 0), model.ErrLeaseLost, "and only once")
		attempts, err := s.ListAttempts(ctx, a.ID)
		require.NoError(t, err)
		require.Len(t, attempts, 1)
	})
}

// A row resolved without an attempt (missed, cancelled) keeps its count; a
// deferred row is due later with its note, fenced the same way.
func TestOwnedResolutionAndDeferral(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		a, b := dueRow(t, s), dueRow(t, s)
		epoch := ownAllSlots(t, s)
		slotA, slotB := model.SlotOf(model.BucketOf(a.EventID)), model.SlotOf(model.BucketOf(b.EventID))
		msg := "missed"
		res, err := s.RecordOutcomes(ctx, []repository.OutcomeRecord{{OccurrenceID: a.ID, Status: model.OccurrenceMissed,
			Reason: model.ReasonCatchUpWindow, ErrorMessage: &msg, Now: t0, Uncount: true, Slot: slotA, Epoch: epoch[slotA]}})
		require.NoError(t, err)
		require.NoError(t, res[0])
		got, err := s.GetOccurrence(ctx, a.ID)
		require.NoError(t, err)
		require.Equal(t, model.OccurrenceMissed, got.Status)
		require.Zero(t, got.AttemptCount)

		ok, err := s.DeferDue(ctx, b.ID, slotB, epoch[slotB]+1, 0, t0.Add(time.Minute), "held", t0)
		require.NoError(t, err)
		require.False(t, ok, "not under another epoch")
		ok, err = s.DeferDue(ctx, b.ID, slotB, epoch[slotB], 0, t0.Add(time.Minute), "held by the endpoint's rate limit", t0)
		require.NoError(t, err)
		require.True(t, ok)
		got, err = s.GetOccurrence(ctx, b.ID)
		require.NoError(t, err)
		require.Equal(t, model.OccurrencePending, got.Status)
		require.True(t, got.NextAttemptAt.Equal(t0.Add(time.Minute)))
		require.Equal(t, "held by the endpoint's rate limit", *got.ErrorMessage)

		checks, err := s.CheckDue(ctx, []repository.HeldRow{{ID: a.ID, ScheduledAt: a.ScheduledAt},
			{ID: b.ID, ScheduledAt: b.ScheduledAt}})
		require.NoError(t, err)
		require.False(t, ptr(checks[a.ID]).Unchanged(0), "a was resolved")
		require.True(t, ptr(checks[b.ID]).Unchanged(0), "b is still waiting as read")
		require.False(t, ptr(checks[b.ID]).Unchanged(1))
		require.Equal(t, model.EventActive, checks[b.ID].EventStatus)
	})
}

// A held row moved to another instant before it fired is not found at the
// instant its owner read it at, so the owner lets it go instead of firing it
// there; at its new instant it is found waiting as read.
func TestCheckDueDoesNotFindAHeldRowMovedSince(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		a, b := dueRow(t, s), dueRow(t, s)
		held := []repository.HeldRow{{ID: a.ID, ScheduledAt: a.ScheduledAt}, {ID: b.ID, ScheduledAt: b.ScheduledAt}}
		checks, err := s.CheckDue(ctx, held)
		require.NoError(t, err)
		require.Len(t, checks, 2)

		to := t0.Add(time.Hour)
		require.NoError(t, s.MoveOccurrence(ctx, a.ID, to, a.ScheduledAt, t0.Add(-time.Minute)))
		checks, err = s.CheckDue(ctx, held)
		require.NoError(t, err)
		require.NotContains(t, checks, a.ID, "moved: not at the instant it was read at")
		require.True(t, ptr(checks[b.ID]).Unchanged(0), "b is still waiting as read")

		checks, err = s.CheckDue(ctx, []repository.HeldRow{{ID: a.ID, ScheduledAt: to}})
		require.NoError(t, err)
		require.True(t, ptr(checks[a.ID]).Unchanged(0), "found waiting at its new instant")
	})
}

func ptr[T any](v T) *T { return &v }

// ownAllSlots takes every slot for one owner, "me", and returns their
// epochs by slot.
func ownAllSlots(t *testing.T, s *repository.Store) map[int]int64 {
	t.Helper()
	leases, err := s.AcquireSlots(context.Background(), "me", allSlotsList(), t0, t0.Add(time.Minute), false)
	require.NoError(t, err)
	epoch := map[int]int64{}
	for _, l := range leases {
		epoch[l.Slot] = l.Epoch
	}
	return epoch
}

func allSlotsList() []int {
	out := make([]int, model.Slots)
	for i := range out {
		out[i] = i
	}
	return out
}

// ids are the rows' ids, in order.
func ids(rows []model.Occurrence) []string {
	out := make([]string, len(rows))
	for i := range rows {
		out[i] = rows[i].ID
	}
	return out
}
