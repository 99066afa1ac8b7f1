package repository_test

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/repository/repositorytest"
)

// Every test here runs unchanged against SQLite and PostgreSQL.
func eachBackend(t *testing.T, fn func(t *testing.T, s *repository.Store)) {
	t.Helper()
	for _, b := range repositorytest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			fn(t, b.Open(t))
		})
	}
}

var t0 = time.Date(2031, 3, 4, 10, 0, 0, 0, time.UTC)

func newEvent(tags ...string) *model.Event {
	return &model.Event{
		ID: uuid.NewString(), Name: "report", StartTime: t0, Timezone: "UTC",
		Action: model.Action{Type: "webhook", Params: json.RawMessage(`{"url":"https://example.com/h"}`)},
		Tags:   tags, Metadata: json.RawMessage(`{"b": 2, "a": [1, 2]}`), CatchUp: "all",
		Status: model.EventActive, CreatedVia: "api", Version: 1, CreatedAt: t0, UpdatedAt: t0,
	}
}

func mustCreate(t *testing.T, s *repository.Store, e *model.Event) {
	t.Helper()
	require.NoError(t, s.CreateEvent(context.Background(), e))
}

func TestEventRoundTripKeepsMetadataVerbatim(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		e := newEvent("billing", "eu")
		rule := "FREQ=DAILY"
		e.RRule = &rule
		e.HMACSecret = []byte{0, 1, 2, 255}
		mustCreate(t, s, e)

		got, err := s.GetEvent(ctx, e.ID)
		require.NoError(t, err)
		if string(got.Metadata) != `{"b": 2, "a": [1, 2]}` {
			t.Errorf("metadata = %s, want it byte for byte as sent", got.Metadata)
		}
		if !got.StartTime.Equal(t0) || got.StartTime.Location() != time.UTC {
			t.Errorf("start_time = %v, want %v in UTC", got.StartTime, t0)
		}
		require.Equal(t, []string{"billing", "eu"}, got.Tags)
		require.Equal(t, "FREQ=DAILY", *got.RRule)
		require.Equal(t, []byte{0, 1, 2, 255}, got.HMACSecret)
		require.Nil(t, got.Cron)
	})
}

func TestGetUnknownOrMalformedIDIsNotFound(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		for _, id := range []string{uuid.NewString(), "not-a-uuid"} {
			_, err := s.GetEvent(context.Background(), id)
			if !errors.Is(err, model.ErrNotFound) {
				t.Errorf("GetEvent(%q) error = %v, want model.ErrNotFound", id, err)
			}
		}
	})
}

func TestUpdateEventOptimisticLocking(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		e := newEvent("a")
		mustCreate(t, s, e)
		e.Name = "renamed"
		e.Tags = []string{"b"}
		require.NoError(t, s.UpdateEvent(ctx, e, 1))
		require.EqualValues(t, 2, e.Version)

		stale := *e
		stale.Name = "lost update"
		if err := s.UpdateEvent(ctx, &stale, 1); !errors.Is(err, model.ErrStaleVersion) {
			t.Fatalf("update with stale version: err = %v, want model.ErrStaleVersion", err)
		}
		got, err := s.GetEvent(ctx, e.ID)
		require.NoError(t, err)
		require.Equal(t, "renamed", got.Name)
		require.Equal(t, []string{"b"}, got.Tags)

		missing := newEvent()
		if err := s.UpdateEvent(ctx, missing, 1); !errors.Is(err, model.ErrNotFound) {
			t.Fatalf("update of unknown event: err = %v, want model.ErrNotFound", err)
		}
	})
}

func TestListEventsFiltersAndPaginates(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		var ids []string
		for i, tags := range [][]string{{"a"}, {"a", "b"}, {"b"}, {"c"}, {}} {
			e := newEvent(tags...)
			e.CreatedAt = t0.Add(time.Duration(i) * time.Second)
			mustCreate(t, s, e)
			ids = append(ids, e.ID)
		}
		names := func(f model.EventFilter) []string {
			t.Helper()
			evs, err := s.ListEvents(ctx, f)
			require.NoError(t, err)
			out := []string{}
			for _, e := range evs {
				out = append(out, e.ID)
			}
			return out
		}
		all := model.EventFilter{Unrestricted: true}
		require.Equal(t, []string{ids[4], ids[3], ids[2], ids[1], ids[0]}, names(all), "newest first")

		anyAB := all
		anyAB.AnyTags = []string{"a", "b"}
		require.Equal(t, []string{ids[2], ids[1], ids[0]}, names(anyAB))

		allAB := all
		allAB.AllTags = []string{"a", "b", "a"}
		require.Equal(t, []string{ids[1]}, names(allAB))

		scoped := model.EventFilter{Scope: []string{"b"}}
		require.Equal(t, []string{ids[2], ids[1]}, names(scoped))
		require.Empty(t, names(model.EventFilter{}), "an empty scope sees nothing")

		page := all
		page.Limit = 2
		first, err := s.ListEvents(ctx, page)
		require.NoError(t, err)
		page.After = &model.EventCursor{CreatedAt: first[1].CreatedAt, ID: first[1].ID}
		require.Equal(t, []string{ids[2], ids[1]}, names(page))
	})
}

// TestListEventsByStatus filters by status, the known statuses written as
// SQL literals (for the partial paused-events index) beside the scope's
// and the cursor's bound arguments, which must stay in order.
func TestListEventsByStatus(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		var ids []string
		for i, st := range []model.EventStatus{model.EventPaused, model.EventActive, model.EventPaused, model.EventInactive, model.EventPaused} {
			e := newEvent("a")
			e.Status = st
			e.CreatedAt = t0.Add(time.Duration(i) * time.Second)
			mustCreate(t, s, e)
			ids = append(ids, e.ID)
		}
		list := func(f model.EventFilter) []string {
			t.Helper()
			evs, err := s.ListEvents(ctx, f)
			require.NoError(t, err)
			out := []string{}
			for _, e := range evs {
				out = append(out, e.ID)
			}
			return out
		}
		paused := model.EventFilter{Scope: []string{"a"}, Status: []model.EventStatus{model.EventPaused}, Limit: 2}
		require.Equal(t, []string{ids[4], ids[2]}, list(paused))
		paused.After = &model.EventCursor{CreatedAt: t0.Add(2 * time.Second), ID: ids[2]}
		require.Equal(t, []string{ids[0]}, list(paused), "the next page after the cursor")

		mixed := model.EventFilter{Unrestricted: true, Status: []model.EventStatus{"active", "unknown", model.EventInactive}}
		require.Equal(t, []string{ids[3], ids[1]}, list(mixed), "an unknown status is bound, never spliced, and matches nothing")
		require.Empty(t, list(model.EventFilter{Unrestricted: true, Status: []model.EventStatus{"paused' OR '1'='1"}}))
	})
}

func TestDeleteEventCancelsPendingAndKeepsHistory(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		e := newEvent("a")
		mustCreate(t, s, e)
		_, err := s.InsertOccurrences(ctx, e.ID, []time.Time{t0, t0.Add(time.Hour), t0.Add(2 * time.Hour)}, false, t0)
		require.NoError(t, err)
		// Fire the first one.
		claimed := claim(t, s, t0, 10)
		require.Len(t, claimed, 1)
		complete(t, s, claimed[0], "tok", t0)

		softDelete(t, s, e.ID, t0.Add(time.Minute))
		_, err = s.GetEvent(ctx, e.ID)
		require.ErrorIs(t, err, model.ErrNotFound)
		require.ErrorIs(t, s.DeleteEvent(ctx, e.ID, 0, t0), model.ErrNotFound, "second delete is 404")

		got := statuses(t, s, e.ID)
		require.Equal(t, []model.OccurrenceStatus{"completed", "cancelled", "cancelled"}, got)
		deleted, err := s.GetEventAny(ctx, e.ID)
		require.NoError(t, err)
		require.Equal(t, model.EventDeleted, deleted.Status)
	})
}

func TestInsertOccurrencesIsIdempotentAndReinstatesCancelled(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		e := newEvent("a")
		mustCreate(t, s, e)
		instants := []time.Time{t0.Add(time.Hour), t0.Add(2 * time.Hour)}
		n, err := s.InsertOccurrences(ctx, e.ID, instants, false, t0)
		require.NoError(t, err)
		require.Equal(t, 2, n)
		n, err = s.InsertOccurrences(ctx, e.ID, instants, false, t0)
		require.NoError(t, err)
		require.Equal(t, 0, n, "re-expansion inserts nothing")

		before, err := s.ListOccurrences(ctx, model.OccurrenceFilter{EventID: e.ID, Unrestricted: true})
		require.NoError(t, err)
		_, err = s.CancelPendingOccurrences(ctx, e.ID, t0, false, model.ReasonEventDeleted, t0)
		require.NoError(t, err)
		n, err = s.InsertOccurrences(ctx, e.ID, instants, false, t0)
		require.NoError(t, err)
		require.Equal(t, 2, n, "cancelled future rows are reinstated")
		after, err := s.ListOccurrences(ctx, model.OccurrenceFilter{EventID: e.ID, Unrestricted: true})
		require.NoError(t, err)
		for i := range after {
			require.Equal(t, before[i].ID, after[i].ID, "reinstated rows keep their id")
			require.Equal(t, model.OccurrencePending, after[i].Status)
		}

		// A cancelled row in the past (an instant inside a pause) stays cancelled.
		_, err = s.CancelPendingOccurrences(ctx, e.ID, t0, false, model.ReasonEventDeleted, t0)
		require.NoError(t, err)
		n, err = s.InsertOccurrences(ctx, e.ID, instants, false, t0.Add(90*time.Minute))
		require.NoError(t, err)
		require.Equal(t, 1, n)
		require.Equal(t, []model.OccurrenceStatus{"cancelled", "pending"}, statuses(t, s, e.ID))
	})
}

func TestInsertOccurrencesRoundsUpToMicroseconds(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		e := newEvent()
		mustCreate(t, s, e)
		at := t0.Add(1500 * time.Nanosecond)
		_, err := s.InsertOccurrences(context.Background(), e.ID, []time.Time{at}, false, t0)
		require.NoError(t, err)
		occ, err := s.ListOccurrences(context.Background(), model.OccurrenceFilter{EventID: e.ID, Unrestricted: true})
		require.NoError(t, err)
		require.Equal(t, t0.Add(2*time.Microsecond), occ[0].ScheduledAt, "never earlier than asked")
	})
}

func TestListOccurrencesFilters(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		a, b := newEvent("a"), newEvent("b")
		mustCreate(t, s, a)
		mustCreate(t, s, b)
		for _, e := range []*model.Event{a, b} {
			_, err := s.InsertOccurrences(ctx, e.ID, []time.Time{t0, t0.Add(time.Hour), t0.Add(2 * time.Hour)}, false, t0)
			require.NoError(t, err)
		}
		count := func(f model.OccurrenceFilter) int {
			n, err := s.CountOccurrences(ctx, f)
			require.NoError(t, err)
			list, err := s.ListOccurrences(ctx, f)
			require.NoError(t, err)
			require.Len(t, list, n, "list and count agree")
			return n
		}
		from, to := t0.Add(time.Hour), t0.Add(2*time.Hour)
		require.Equal(t, 6, count(model.OccurrenceFilter{Unrestricted: true}))
		require.Equal(t, 3, count(model.OccurrenceFilter{Unrestricted: true, AnyTags: []string{"a"}}))
		require.Equal(t, 3, count(model.OccurrenceFilter{Scope: []string{"b"}}))
		require.Equal(t, 0, count(model.OccurrenceFilter{}))
		require.Equal(t, 2, count(model.OccurrenceFilter{Unrestricted: true, From: &from, To: &to}))
		require.Equal(t, 1, count(model.OccurrenceFilter{Unrestricted: true, EventID: a.ID, From: &from, To: &to}))
		require.Equal(t, 6, count(model.OccurrenceFilter{Unrestricted: true, Status: []model.OccurrenceStatus{"pending"}}))

		page, err := s.ListOccurrences(ctx, model.OccurrenceFilter{Unrestricted: true, Limit: 4, Offset: 4})
		require.NoError(t, err)
		require.Len(t, page, 2)
	})
}

func TestClaimIsExclusiveUnderConcurrency(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		e := newEvent()
		mustCreate(t, s, e)
		var instants []time.Time
		for i := range 200 {
			instants = append(instants, t0.Add(time.Duration(i)*time.Millisecond))
		}
		_, err := s.InsertOccurrences(ctx, e.ID, instants, false, t0)
		require.NoError(t, err)

		var mu sync.Mutex
		seen := map[string]int{}
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 20 {
					got, err := s.ClaimDue(ctx, repository.ClaimRequest{Now: t0.Add(time.Second), Limit: 7,
						Owner: "w", Token: uuid.NewString(), LeaseUntil: t0.Add(time.Minute)})
					if err != nil {
						t.Errorf("worker %d claim: %v", w, err)
						return
					}
					mu.Lock()
					for _, o := range got {
						seen[o.ID]++
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		require.Len(t, seen, 200, "every due row claimed")
		for id, n := range seen {
			if n != 1 {
				t.Errorf("occurrence %s claimed %d times, want once", id, n)
			}
		}
	})
}

func TestClaimRespectsDueTimeAndAhead(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		e := newEvent()
		mustCreate(t, s, e)
		_, err := s.InsertOccurrences(ctx, e.ID, []time.Time{t0, t0.Add(200 * time.Millisecond), t0.Add(time.Second)}, false, t0)
		require.NoError(t, err)
		next, err := s.NextDue(ctx)
		require.NoError(t, err)
		require.Equal(t, t0, *next)

		got, err := s.ClaimDue(ctx, repository.ClaimRequest{Now: t0, Ahead: 250 * time.Millisecond, Limit: 10,
			Token: "t", LeaseUntil: t0.Add(time.Minute)})
		require.NoError(t, err)
		require.Len(t, got, 2)
		for _, o := range got {
			require.Equal(t, model.OccurrenceDispatching, o.Status)
			require.Equal(t, 1, o.AttemptCount)
			require.Equal(t, "t", *o.LeaseToken)
		}
	})
}

func TestReleaseAndAcknowledge(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		e := newEvent()
		mustCreate(t, s, e)
		_, err := s.InsertOccurrences(ctx, e.ID, []time.Time{t0, t0.Add(time.Millisecond)}, false, t0)
		require.NoError(t, err)
		got := claim(t, s, t0.Add(time.Second), 2)
		require.Len(t, got, 2)

		n, err := s.ReleaseClaims(ctx, "tok", []string{got[1].ID}, t0.Add(time.Second))
		require.NoError(t, err)
		require.Equal(t, 1, n)
		released, err := s.GetOccurrence(ctx, got[1].ID)
		require.NoError(t, err)
		require.Equal(t, model.OccurrencePending, released.Status)
		require.Equal(t, 0, released.AttemptCount, "a released claim does not count as an attempt")

		deadline := t0.Add(30 * time.Second)
		res, err := s.RecordOutcomes(ctx, []repository.OutcomeRecord{{OccurrenceID: got[0].ID, LeaseToken: "tok",
			Status: model.OccurrenceAwaitingAck, AckDeadline: &deadline, Now: t0.Add(time.Second)}})
		require.NoError(t, err)
		require.NoError(t, res[0])
		require.NoError(t, s.Acknowledge(ctx, got[0].ID, t0.Add(2*time.Second)))
		require.ErrorIs(t, s.Acknowledge(ctx, got[0].ID, t0.Add(3*time.Second)), model.ErrNotFound)
		done, err := s.GetOccurrence(ctx, got[0].ID)
		require.NoError(t, err)
		require.Equal(t, model.OccurrenceCompleted, done.Status)
	})
}

func TestUnackedDeliveryIsRescuedAfterDeadline(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		e := newEvent()
		mustCreate(t, s, e)
		_, err := s.InsertOccurrences(ctx, e.ID, []time.Time{t0}, false, t0)
		require.NoError(t, err)
		got := claim(t, s, t0, 1)
		deadline := t0.Add(30 * time.Second)
		_, err = s.RecordOutcomes(ctx, []repository.OutcomeRecord{{OccurrenceID: got[0].ID, LeaseToken: "tok",
			Status: model.OccurrenceAwaitingAck, AckDeadline: &deadline, Now: t0}})
		require.NoError(t, err)
		n, err := s.RescueExpired(ctx, t0.Add(29*time.Second), 10)
		require.NoError(t, err)
		require.Zero(t, n, "not before the deadline")
		n, err = s.RescueExpired(ctx, t0.Add(31*time.Second), 10)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		o, err := s.GetOccurrence(ctx, got[0].ID)
		require.NoError(t, err)
		require.Equal(t, model.OccurrenceRetrying, o.Status)
		require.Equal(t, "acknowledgement timed out", *o.ErrorMessage)
	})
}

func TestTokens(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		tok := model.Token{ID: uuid.NewString(), Subject: "alice", Access: model.AccessWrite,
			Scope: []string{"billing"}, ExpiresAt: t0.Add(time.Hour), CreatedBy: "master", CreatedAt: t0}
		require.NoError(t, s.CreateToken(ctx, tok))
		got, err := s.TokenByID(ctx, tok.ID)
		require.NoError(t, err)
		require.Equal(t, tok, got)
		list, err := s.ListTokens(ctx, "", 10)
		require.NoError(t, err)
		require.Len(t, list, 1)
		require.NoError(t, s.RevokeToken(ctx, tok.ID, t0.Add(time.Minute)))
		got, err = s.TokenByID(ctx, tok.ID)
		require.NoError(t, err)
		require.Equal(t, t0.Add(time.Minute), *got.RevokedAt)
		require.ErrorIs(t, s.RevokeToken(ctx, "nope", t0), model.ErrNotFound)
	})
}

func TestIdempotencyKeys(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		rec := model.IdempotencyRecord{Principal: "p", Key: "k", RequestHash: "h", StatusCode: 201,
			Body: []byte(`{"id":"x"}`), CreatedAt: t0, ExpiresAt: t0.Add(24 * time.Hour)}
		require.NoError(t, s.PutIdempotency(ctx, rec))
		require.ErrorIs(t, s.PutIdempotency(ctx, rec), model.ErrConflict)
		got, err := s.GetIdempotency(ctx, "p", "k", t0.Add(time.Hour))
		require.NoError(t, err)
		require.Equal(t, rec.Body, got.Body)
		_, err = s.GetIdempotency(ctx, "other", "k", t0)
		require.ErrorIs(t, err, model.ErrNotFound, "keys are per principal")
		_, err = s.GetIdempotency(ctx, "p", "k", t0.Add(25*time.Hour))
		require.ErrorIs(t, err, model.ErrNotFound, "expired")
		rec.CreatedAt, rec.ExpiresAt = t0.Add(25*time.Hour), t0.Add(49*time.Hour)
		require.NoError(t, s.PutIdempotency(ctx, rec), "an expired key can be reused")
	})
}

func TestMigrateIsIdempotent(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		n, err := s.Migrate(context.Background())
		require.NoError(t, err)
		require.Zero(t, n, "already applied")
		ms, err := s.Migrations(context.Background())
		require.NoError(t, err)
		require.NotEmpty(t, ms)
		for _, m := range ms {
			require.NotNil(t, m.AppliedAt, "migration %s applied", m.Name)
		}
	})
}

func claim(t *testing.T, s *repository.Store, now time.Time, n int) []model.Occurrence {
	t.Helper()
	got, err := s.ClaimDue(context.Background(), repository.ClaimRequest{Now: now, Limit: n, Owner: "test",
		Token: "tok", LeaseUntil: now.Add(time.Minute)})
	require.NoError(t, err)
	return got
}

// twoClaimed creates an event with occurrences at t0 and a second later and
// claims both (token "tok").
func twoClaimed(t *testing.T, s *repository.Store) (*model.Event, []model.Occurrence) {
	t.Helper()
	e := newEvent()
	mustCreate(t, s, e)
	_, err := s.InsertOccurrences(context.Background(), e.ID, []time.Time{t0, t0.Add(time.Second)}, false, t0)
	require.NoError(t, err)
	got := claim(t, s, t0.Add(time.Second), 2)
	require.Len(t, got, 2)
	return e, got
}

func complete(t *testing.T, s *repository.Store, o model.Occurrence, token string, now time.Time) {
	t.Helper()
	res, err := s.RecordOutcomes(context.Background(), []repository.OutcomeRecord{{OccurrenceID: o.ID,
		LeaseToken: token, Status: model.OccurrenceCompleted, Now: now}})
	require.NoError(t, err)
	require.NoError(t, res[0])
}

func statuses(t *testing.T, s *repository.Store, eventID string) []model.OccurrenceStatus {
	t.Helper()
	occ, err := s.ListOccurrences(context.Background(), model.OccurrenceFilter{EventID: eventID, Unrestricted: true})
	require.NoError(t, err)
	sort.Slice(occ, func(i, j int) bool { return occ[i].ScheduledAt.Before(occ[j].ScheduledAt) })
	out := []model.OccurrenceStatus{}
	for _, o := range occ {
		out = append(out, o.Status)
	}
	return out
}

// softDelete deletes an event as the events service does: marked deleted and
// its pending occurrences cancelled, in one transaction.
func softDelete(t *testing.T, s *repository.Store, id string, at time.Time) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, s.WithTx(ctx, func(tx *repository.Store) error {
		if err := tx.DeleteEvent(ctx, id, 0, at); err != nil {
			return err
		}
		_, err := tx.CancelPendingOccurrences(ctx, id, time.Time{}, false, model.ReasonEventDeleted, at)
		return err
	}))
}
