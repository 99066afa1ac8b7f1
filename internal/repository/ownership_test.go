package repository_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
)

// The database's bucket of every row is the Go one, for the server's UUIDv7
// ids and for v4 ones, on events, occurrences and attempts alike: the
// dispatcher reads by the database's column and fences by Go's value.
func TestBucketColumnIsBucketOfTheEventID(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		want := map[string]int{}
		for i := range 40 {
			e := newEvent()
			if i%2 == 0 {
				e.ID = model.NewID()
			}
			mustCreate(t, s, e)
			_, err := s.InsertOccurrences(ctx, e.ID, []time.Time{t0.Add(time.Duration(i) * time.Minute)}, false, t0)
			require.NoError(t, err)
			want[e.ID] = model.BucketOf(e.ID)
		}
		occs, err := s.ClaimDue(ctx, repository.ClaimRequest{Now: t0.Add(time.Hour), Limit: 100, Owner: "i",
			Token: "tok", LeaseUntil: t0.Add(2 * time.Hour)})
		require.NoError(t, err)
		require.Len(t, occs, len(want))
		var recs []repository.OutcomeRecord
		for _, o := range occs {
			a := &model.Attempt{OccurrenceID: o.ID, EventID: o.EventID, Attempt: 1, StartedAt: t0, Outcome: "success",
				ScheduledAt: o.ScheduledAt}
			recs = append(recs, repository.OutcomeRecord{OccurrenceID: o.ID, LeaseToken: "tok", Status: model.OccurrenceCompleted,
				Now: t0, Attempt: a})
		}
		_, err = s.RecordOutcomes(ctx, recs)
		require.NoError(t, err)

		for _, q := range []string{`SELECT id, bucket FROM events`, `SELECT event_id AS id, bucket FROM occurrences`,
			`SELECT event_id AS id, bucket FROM attempts`} {
			var rows []struct {
				ID     string `db:"id"`
				Bucket int    `db:"bucket"`
			}
			require.NoError(t, s.DB().SelectContext(ctx, &rows, q), q)
			if len(rows) != len(want) {
				t.Fatalf("%s: %d rows, want %d", q, len(rows), len(want))
			}
			for _, r := range rows {
				if r.Bucket != want[r.ID] {
					t.Errorf("%s: bucket of %s = %d, want %d", q, r.ID, r.Bucket, want[r.ID])
				}
			}
		}
	})
}

func TestBucketOfEdgeCases(t *testing.T) {
	t.Parallel()
	for id, want := range map[string]int{
		"00000000-0000-0000-0000-000000000000": 0,
		"00000000-0000-0000-0000-0000000003ff": 1023,
		"00000000-0000-0000-0000-000000000fff": 1023,
		"00000000-0000-0000-0000-000000000400": 0,
		"00000000-0000-0000-0000-0000000001A2": 0x1a2,
		"x":                                    0,
		"not-hex-zzz":                          0,
	} {
		if got := model.BucketOf(id); got != want {
			t.Errorf("BucketOf(%q) = %d, want %d", id, got, want)
		}
	}
	if got := model.SlotOf(1023); got != model.Slots-1 {
		t.Errorf("SlotOf(1023) = %d, want %d", got, model.Slots-1)
	}
}

// A slot is taken only when free or expired; each acquisition bumps its
// epoch, and a holder whose epoch is stale can neither renew nor release it.
func TestSlotLeasesAreFencedByEpoch(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		lease := 10 * time.Second
		got, err := s.AcquireSlots(ctx, "a", []int{0, 1}, t0, t0.Add(lease), false)
		require.NoError(t, err)
		require.Len(t, got, 2)
		epochA := map[int]int64{0: got[0].Epoch, 1: got[1].Epoch}
		require.Equal(t, int64(1), got[0].Epoch)

		// b cannot take a held slot, but takes a free one.
		got, err = s.AcquireSlots(ctx, "b", []int{1, 2}, t0.Add(time.Second), t0.Add(time.Second+lease), false)
		require.NoError(t, err)
		require.Len(t, got, 1)
		require.Equal(t, 2, got[0].Slot)

		// a renews; after a's lease lapses, b takes slot 1 under a new epoch.
		renewed, err := s.RenewSlots(ctx, "a", epochA, t0.Add(2*time.Second+lease))
		require.NoError(t, err)
		require.Equal(t, []int{0, 1}, renewed)
		later := t0.Add(2*time.Second + lease)
		got, err = s.AcquireSlots(ctx, "b", []int{1}, later, later.Add(lease), false)
		require.NoError(t, err)
		require.Len(t, got, 1)
		require.Equal(t, epochA[1]+1, got[0].Epoch)

		// a's stale epoch renews and releases nothing of slot 1.
		renewed, err = s.RenewSlots(ctx, "a", epochA, later.Add(lease))
		require.NoError(t, err)
		require.Equal(t, []int{0}, renewed, "a keeps slot 0 (nobody took it) and has lost slot 1")
		n, err := s.ReleaseSlots(ctx, "a", map[int]int64{1: epochA[1]})
		require.NoError(t, err)
		require.Zero(t, n)

		slots, err := s.BucketSlots(ctx)
		require.NoError(t, err)
		require.Len(t, slots, model.Slots)
		require.True(t, slots[1].HeldBy("b", later), "slot 1: %+v", slots[1])
		require.False(t, slots[1].Free(later))
		require.True(t, slots[3].Free(later))

		// A release frees the slot for anyone at once; a forced take
		// ignores a live lease.
		n, err = s.ReleaseSlots(ctx, "a", map[int]int64{0: epochA[0]})
		require.NoError(t, err)
		require.Equal(t, 1, n)
		got, err = s.AcquireSlots(ctx, "c", []int{0, 1}, later, later.Add(lease), true)
		require.NoError(t, err)
		require.Len(t, got, 2)
		require.Equal(t, epochA[1]+2, got[1].Epoch)
	})
}

func TestDispatchMembersExpire(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		a, b := "a-"+uuid.NewString(), "b-"+uuid.NewString()
		live, err := s.RenewMember(ctx, a, t0, t0.Add(10*time.Second))
		require.NoError(t, err)
		require.Equal(t, []string{a}, live)
		live, err = s.RenewMember(ctx, b, t0.Add(5*time.Second), t0.Add(15*time.Second))
		require.NoError(t, err)
		require.Equal(t, []string{a, b}, live)
		// a stopped renewing: gone once its registration expires.
		live, err = s.RenewMember(ctx, b, t0.Add(11*time.Second), t0.Add(21*time.Second))
		require.NoError(t, err)
		require.Equal(t, []string{b}, live)
		// a lapsed without leaving: departed, kept for the repair of what
		// it may have forgotten; b's clean stop leaves no trace.
		gone, err := s.DepartedMembers(ctx, t0.Add(12*time.Second))
		require.NoError(t, err)
		require.Equal(t, []repository.DepartedMember{{InstanceID: a, ExpiresAt: t0.Add(10 * time.Second)}}, gone)
		require.NoError(t, s.LeaveMember(ctx, b))
		gone, err = s.DepartedMembers(ctx, t0.Add(30*time.Second))
		require.NoError(t, err)
		require.Len(t, gone, 1, "b left cleanly")
		require.Equal(t, a, gone[0].InstanceID)
		// a came back (a stopped process resumed): not forgotten, not departed.
		live, err = s.RenewMember(ctx, a, t0.Add(12*time.Second), t0.Add(22*time.Second))
		require.NoError(t, err)
		require.Equal(t, []string{a}, live)
		require.NoError(t, s.ForgetMember(ctx, gone[0]))
		gone, err = s.DepartedMembers(ctx, t0.Add(21*time.Second))
		require.NoError(t, err)
		require.Empty(t, gone)
		live, err = s.RenewMember(ctx, "c-"+uuid.NewString(), t0.Add(21*time.Second), t0.Add(31*time.Second))
		require.NoError(t, err)
		require.Contains(t, live, a)
		// Lapsed again and repaired: forgotten.
		gone, err = s.DepartedMembers(ctx, t0.Add(22*time.Second))
		require.NoError(t, err)
		require.Len(t, gone, 1)
		require.NoError(t, s.ForgetMember(ctx, gone[0]))
		gone, err = s.DepartedMembers(ctx, t0.Add(40*time.Second))
		require.NoError(t, err)
		require.Len(t, gone, 1, "only c is left to depart")
		require.NotEqual(t, a, gone[0].InstanceID)
	})
}
