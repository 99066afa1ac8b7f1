package repository_test

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/repository/repositorytest"
)

func claimWith(t *testing.T, s *repository.Store, now time.Time, n int, token string, until time.Time) []model.Occurrence {
	t.Helper()
	got, err := s.ClaimDue(context.Background(), repository.ClaimRequest{Now: now, Limit: n, Owner: "test",
		Token: token, LeaseUntil: until})
	require.NoError(t, err)
	require.Len(t, got, n)
	return got
}

func keysOf(token string, occs ...model.Occurrence) []repository.LeaseKey {
	out := make([]repository.LeaseKey, len(occs))
	for i, o := range occs {
		out[i] = repository.LeaseKey{ID: o.ID, Token: token}
	}
	return out
}

func leaseExpiry(t *testing.T, s *repository.Store, id string) time.Time {
	t.Helper()
	o, err := s.GetOccurrence(context.Background(), id)
	require.NoError(t, err)
	require.NotNil(t, o.LeaseExpiresAt, "occurrence %s has a lease", id)
	return o.LeaseExpiresAt.UTC()
}

// A heartbeat renews only the rows its tokens still hold: a row rescued and
// claimed by another worker keeps the new holder's lease, a recorded row is
// left alone, and the answer names exactly the rows renewed.
func TestRenewLeasesIsFencedByToken(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		e := newEvent()
		mustCreate(t, s, e)
		_, err := s.InsertOccurrences(ctx, e.ID, []time.Time{t0.Add(-4 * time.Millisecond), t0.Add(-3 * time.Millisecond), t0.Add(-2 * time.Millisecond),
			t0.Add(-time.Millisecond)}, false, t0)
		require.NoError(t, err)
		mine := claimWith(t, s, t0, 2, "a", t0.Add(10*time.Second))
		stale := claimWith(t, s, t0, 1, "b", t0.Add(10*time.Second))
		done := claimWith(t, s, t0, 1, "d", t0.Add(10*time.Second))
		complete(t, s, done[0], "d", t0.Add(time.Second))

		// b's holder stalls: its lease expires and another worker takes the row.
		renewed, err := s.RenewLeases(ctx, keysOf("a", mine...), t0.Add(20*time.Second))
		require.NoError(t, err)
		require.Len(t, renewed, 2)
		n, err := s.RescueExpired(ctx, t0.Add(15*time.Second), 10)
		require.NoError(t, err)
		require.Equal(t, 1, n, "only the row whose lease was not renewed is rescued")
		taken := claimWith(t, s, t0.Add(15*time.Second), 1, "c", t0.Add(25*time.Second))
		require.Equal(t, stale[0].ID, taken[0].ID)

		keys := append(append(keysOf("b", stale...), keysOf("a", mine...)...), keysOf("d", done...)...)
		renewed, err = s.RenewLeases(ctx, keys, t0.Add(30*time.Second))
		require.NoError(t, err)
		got := make([]string, 0, len(renewed))
		for _, k := range renewed {
			require.Equal(t, "a", k.Token, "renewed %s under token %s", k.ID, k.Token)
			got = append(got, k.ID)
		}
		want := []string{mine[0].ID, mine[1].ID}
		sort.Strings(got)
		sort.Strings(want)
		require.Equal(t, want, got, "the rows token a still holds, and only those")
		require.Equal(t, t0.Add(30*time.Second), leaseExpiry(t, s, mine[0].ID))
		require.Equal(t, t0.Add(25*time.Second), leaseExpiry(t, s, taken[0].ID), "the new holder's lease is untouched")
		o, err := s.GetOccurrence(ctx, done[0].ID)
		require.NoError(t, err)
		require.Equal(t, model.OccurrenceCompleted, o.Status)
		require.Nil(t, o.LeaseExpiresAt, "a recorded row gets no lease back")

		// The stalled worker's late outcome is refused; the renewed ones hold.
		res, err := s.RecordOutcomes(ctx, []repository.OutcomeRecord{
			{OccurrenceID: stale[0].ID, LeaseToken: "b", Status: model.OccurrenceCompleted, Now: t0.Add(26 * time.Second)},
			{OccurrenceID: mine[0].ID, LeaseToken: "a", Status: model.OccurrenceCompleted, Now: t0.Add(26 * time.Second)},
		})
		require.NoError(t, err)
		require.ErrorIs(t, res[0], model.ErrLeaseLost)
		require.NoError(t, res[1])
		n, err = s.RescueExpired(ctx, t0.Add(26*time.Second), 10)
		require.NoError(t, err)
		require.Equal(t, 1, n, "only c's row, whose lease passed, is rescued; a's renewed row is not")
		o, err = s.GetOccurrence(ctx, mine[1].ID)
		require.NoError(t, err)
		require.Equal(t, model.OccurrenceDispatching, o.Status)
	})
}

// A batch released after a failed follow-up read is claimable at once, its
// claim not counted as an attempt (a retrying row keeps its earlier count),
// and no attempt is recorded.
func TestReleaseRestoresTheClaimedAttempt(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		e := newEvent()
		mustCreate(t, s, e)
		_, err := s.InsertOccurrences(ctx, e.ID, []time.Time{t0.Add(-time.Millisecond), t0}, false, t0)
		require.NoError(t, err)
		first := claimWith(t, s, t0, 2, "a", t0.Add(10*time.Second))
		retry := t0.Add(time.Second)
		res, err := s.RecordOutcomes(ctx, []repository.OutcomeRecord{{OccurrenceID: first[0].ID, LeaseToken: "a",
			Status: model.OccurrenceRetrying, NextAttemptAt: &retry, Now: t0,
			Attempt: &model.Attempt{OccurrenceID: first[0].ID, EventID: e.ID, Attempt: 1, StartedAt: t0, Outcome: "retrying"}}})
		require.NoError(t, err)
		require.NoError(t, res[0])
		n, err := s.ReleaseClaims(ctx, "a", []string{first[1].ID}, t0)
		require.NoError(t, err)
		require.Equal(t, 1, n)

		again := claimWith(t, s, retry, 2, "b", retry.Add(10*time.Second))
		ids := []string{again[0].ID, again[1].ID}
		n, err = s.ReleaseClaims(ctx, "b", ids, retry)
		require.NoError(t, err)
		require.Equal(t, 2, n)
		want := map[string]struct {
			status   model.OccurrenceStatus
			attempts int
		}{first[0].ID: {model.OccurrenceRetrying, 1}, first[1].ID: {model.OccurrencePending, 0}}
		for _, id := range ids {
			o, err := s.GetOccurrence(ctx, id)
			require.NoError(t, err)
			require.Equal(t, want[id].status, o.Status, "occurrence %s", id)
			require.Equal(t, want[id].attempts, o.AttemptCount, "occurrence %s: the released claim is not an attempt", id)
			require.Nil(t, o.LeaseToken)
			require.Nil(t, o.LeaseExpiresAt)
			atts, err := s.ListAttempts(ctx, id)
			require.NoError(t, err)
			require.Len(t, atts, want[id].attempts, "occurrence %s attempts", id)
		}
		n, err = s.ReleaseClaims(ctx, "b", ids, retry)
		require.NoError(t, err)
		require.Zero(t, n, "a release is fenced: the token no longer holds the rows")
		claimWith(t, s, retry, 2, "c", retry.Add(10*time.Second))
	})
}

// At the start of the only process on a database, every dispatching row
// belongs to a dead predecessor and goes back to retry at once; a delivery
// waiting for its acknowledgement keeps its deadline.
func TestRescueDispatchingLeavesAwaitingAck(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		e := newEvent()
		mustCreate(t, s, e)
		_, err := s.InsertOccurrences(ctx, e.ID, []time.Time{t0.Add(-time.Millisecond), t0}, false, t0)
		require.NoError(t, err)
		got := claimWith(t, s, t0, 2, "a", t0.Add(10*time.Second))
		deadline := t0.Add(30 * time.Second)
		res, err := s.RecordOutcomes(ctx, []repository.OutcomeRecord{{OccurrenceID: got[0].ID, LeaseToken: "a",
			Status: model.OccurrenceAwaitingAck, AckDeadline: &deadline, Now: t0}})
		require.NoError(t, err)
		require.NoError(t, res[0])

		n, err := s.RescueDispatching(ctx, t0.Add(time.Second))
		require.NoError(t, err)
		require.Equal(t, 1, n)
		o, err := s.GetOccurrence(ctx, got[1].ID)
		require.NoError(t, err)
		require.Equal(t, model.OccurrenceRetrying, o.Status)
		require.Equal(t, 1, o.AttemptCount, "the claim may have sent: it stays counted")
		require.Equal(t, t0.Add(time.Second), o.NextAttemptAt.UTC())
		o, err = s.GetOccurrence(ctx, got[0].ID)
		require.NoError(t, err)
		require.Equal(t, model.OccurrenceAwaitingAck, o.Status)
	})
}

// A heartbeat over more rows than one statement takes renews them all.
func TestRenewLeasesManyRows(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		e := newEvent()
		mustCreate(t, s, e)
		instants := make([]time.Time, 450)
		for i := range instants {
			instants[i] = t0.Add(-time.Duration(i+1) * time.Millisecond)
		}
		_, err := s.InsertOccurrences(ctx, e.ID, instants, false, t0)
		require.NoError(t, err)
		first := claimWith(t, s, t0, 200, "a", t0.Add(10*time.Second))
		second := claimWith(t, s, t0, 250, "b", t0.Add(10*time.Second))
		renewed, err := s.RenewLeases(ctx, append(keysOf("a", first...), keysOf("b", second...)...), t0.Add(time.Minute))
		require.NoError(t, err)
		require.Len(t, renewed, 450)
		n, err := s.RescueExpired(ctx, t0.Add(30*time.Second), 1000)
		require.NoError(t, err)
		require.Zero(t, n)
	})
}

// A heartbeat never waits for a row another transaction holds (on
// PostgreSQL: the outcome writer recording it). Waiting made the two lock
// rows in different orders and deadlock, stalling deliveries for
// deadlock_timeout; the held row is answered as not renewed instead.
func TestRenewLeasesSkipsRowsBeingWritten(t *testing.T) {
	s := repositorytest.Postgres(t)
	ctx := context.Background()
	e := newEvent()
	mustCreate(t, s, e)
	_, err := s.InsertOccurrences(ctx, e.ID, []time.Time{t0.Add(-2 * time.Millisecond), t0.Add(-time.Millisecond)}, false, t0)
	require.NoError(t, err)
	held := claimWith(t, s, t0, 2, "a", t0.Add(10*time.Second))

	tx, err := s.DB().BeginTxx(ctx, nil)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback() }()
	_, err = tx.ExecContext(ctx, `SELECT id FROM occurrences WHERE id = $1 FOR UPDATE`, held[0].ID)
	require.NoError(t, err)

	wait, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	renewed, err := s.RenewLeases(wait, keysOf("a", held...), t0.Add(20*time.Second))
	require.NoError(t, err, "the renewal does not wait for the locked row")
	require.Equal(t, []repository.LeaseKey{{ID: held[1].ID, Token: "a"}}, renewed)

	require.NoError(t, tx.Rollback())
	renewed, err = s.RenewLeases(ctx, keysOf("a", held...), t0.Add(30*time.Second))
	require.NoError(t, err)
	require.Len(t, renewed, 2, "once the lock is gone, the next heartbeat renews it")
	require.Equal(t, t0.Add(30*time.Second), leaseExpiry(t, s, held[0].ID))
}

// oneDueAtT0 stores an event with one occurrence due at t0.
func oneDueAtT0(t *testing.T, s *repository.Store) {
	t.Helper()
	e := newEvent()
	mustCreate(t, s, e)
	_, err := s.InsertOccurrences(context.Background(), e.ID, []time.Time{t0}, false, t0)
	require.NoError(t, err)
}

// A claim whose lease lapsed with nothing recorded (its instance cut from
// the database, stopped or killed) is rescued uncharged: the attempt number
// still moves on, so every send keeps its own, but the retry budget sees
// only recorded attempts, up to MaxFreeLapses lapses; after that a lapse is
// charged, so a row whose dispatch keeps wedging its instance still ends.
// An acknowledgement that timed out was a send: it stays charged.
func TestLapsedClaimIsNotChargedToTheRetryBudget(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		oneDueAtT0(t, s)

		now, id := t0, ""
		for i := 1; i <= repository.MaxFreeLapses+2; i++ {
			got := claimWith(t, s, now, 1, fmt.Sprintf("cut-%d", i), now.Add(time.Second))
			id = got[0].ID
			require.Equal(t, i, got[0].AttemptCount, "every claim has its own attempt number")
			require.Equal(t, min(i-1, repository.MaxFreeLapses), got[0].Lapses)
			now = now.Add(2 * time.Second)
			n, err := s.RescueExpired(ctx, now, 10)
			require.NoError(t, err)
			require.Equal(t, 1, n)
		}
		o, err := s.GetOccurrence(ctx, id)
		require.NoError(t, err)
		require.Equal(t, model.OccurrenceRetrying, o.Status)
		require.Equal(t, "lease expired", *o.ErrorMessage)
		require.Equal(t, repository.MaxFreeLapses+2, o.AttemptCount)
		require.Equal(t, repository.MaxFreeLapses, o.Lapses)
		require.Equal(t, 2, o.ChargedAttempts(), "the lapses past the bound are charged")

		// An unacknowledged delivery's rescue charges its attempt.
		got := claimWith(t, s, now, 1, "acked", now.Add(time.Minute))
		ackBy := now.Add(time.Second)
		res, err := s.RecordOutcomes(ctx, []repository.OutcomeRecord{{OccurrenceID: got[0].ID, LeaseToken: "acked",
			Status: model.OccurrenceAwaitingAck, AckDeadline: &ackBy, Now: now}})
		require.NoError(t, err)
		require.NoError(t, res[0])
		n, err := s.RescueExpired(ctx, now.Add(2*time.Second), 10)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		o, err = s.GetOccurrence(ctx, got[0].ID)
		require.NoError(t, err)
		require.Equal(t, "acknowledgement timed out", *o.ErrorMessage)
		require.Equal(t, 3, o.ChargedAttempts())
	})
}

// The embedded server's start-up rescue of its killed predecessor's claims
// does not charge them either.
func TestRescueOfAStoppedProcessIsNotCharged(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		oneDueAtT0(t, s)
		claimWith(t, s, t0, 1, "killed", t0.Add(time.Hour))
		ctx := context.Background()
		n, err := s.RescueDispatching(ctx, t0.Add(time.Second))
		require.NoError(t, err)
		require.Equal(t, 1, n)
		got := claimWith(t, s, t0.Add(time.Second), 1, "restarted", t0.Add(time.Hour))
		require.Equal(t, 2, got[0].AttemptCount)
		require.Equal(t, 1, got[0].ChargedAttempts())
	})
}
