package repository_test

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/repository/repositorytest"
	"github.com/stretchr/testify/require"
)

func TestRecordOutcomesBookkeeping(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		e := newEvent()
		mustCreate(t, s, e)
		_, err := s.InsertOccurrences(ctx, e.ID, []time.Time{t0, t0.Add(time.Second), t0.Add(time.Hour)}, false, t0)
		require.NoError(t, err)
		got := claim(t, s, t0.Add(time.Second), 2)
		require.Len(t, got, 2)
		sort.Slice(got, func(i, j int) bool { return got[i].ScheduledAt.Before(got[j].ScheduledAt) })
		missed, code := "missed: catch_up is none", 410
		recs := []repository.OutcomeRecord{
			{OccurrenceID: got[0].ID, LeaseToken: "tok", Status: model.OccurrenceMissed, ErrorMessage: &missed,
				Now: t0.Add(time.Second), Uncount: true, EventID: e.ID},
			{OccurrenceID: got[1].ID, LeaseToken: "tok",
				Status: model.OccurrenceFailed, StatusCode: &code, Now: t0.Add(2 * time.Second),
				Attempt: &model.Attempt{OccurrenceID: got[1].ID, EventID: e.ID, Attempt: 1,
					StartedAt: t0.Add(time.Second), Outcome: "failed", StatusCode: &code},
				EventID: e.ID, Ran: true, LastStatus: "failed (HTTP 410)", PauseReason: "paused: gone"},
			{OccurrenceID: got[1].ID, LeaseToken: "other", Status: model.OccurrenceCompleted,
				Now: t0.Add(2 * time.Second), EventID: e.ID},
		}
		res, err := s.RecordOutcomes(ctx, recs)
		require.NoError(t, err)
		require.NoError(t, res[0])
		require.NoError(t, res[1])
		require.ErrorIs(t, res[2], model.ErrLeaseLost)

		m, err := s.GetOccurrence(ctx, got[0].ID)
		require.NoError(t, err)
		require.Equal(t, model.OccurrenceMissed, m.Status)
		require.Equal(t, 0, m.AttemptCount, "a missed row was never attempted")
		require.Nil(t, m.StartedAt)

		ev, err := s.GetEvent(ctx, e.ID)
		require.NoError(t, err)
		require.Equal(t, model.EventPaused, ev.Status, "410 pauses the event at once, in the outcome's transaction")
		require.Equal(t, "paused: gone", ev.LastStatus)
		require.Nil(t, ev.LastRunAt, "the rest of the bookkeeping is written afterwards, coalesced")
		require.Equal(t, []model.OccurrenceStatus{"missed", "failed", "skipped"}, statuses(t, s, e.ID))

		noteRuns(t, s, recs[:2]...)
		ev, err = s.GetEvent(ctx, e.ID)
		require.NoError(t, err)
		require.Equal(t, model.EventPaused, ev.Status)
		require.Equal(t, "paused: gone", ev.LastStatus)
		require.Equal(t, t0.Add(time.Second), *ev.LastRunAt)
		require.Nil(t, ev.NextRunAt)
	})
}

func TestOutcomeIsFencedByLeaseToken(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		e := newEvent()
		mustCreate(t, s, e)
		_, err := s.InsertOccurrences(ctx, e.ID, []time.Time{t0}, false, t0)
		require.NoError(t, err)
		first, err := s.ClaimDue(ctx, repository.ClaimRequest{Now: t0, Limit: 1, Token: "old", LeaseUntil: t0.Add(time.Minute)})
		require.NoError(t, err)
		require.Len(t, first, 1)

		// The lease expires; the rescuer hands the row to another worker.
		n, err := s.RescueExpired(ctx, t0.Add(2*time.Minute), 100)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		second, err := s.ClaimDue(ctx, repository.ClaimRequest{Now: t0.Add(2 * time.Minute), Limit: 1, Token: "new",
			LeaseUntil: t0.Add(4 * time.Minute)})
		require.NoError(t, err)
		require.Len(t, second, 1)
		require.Equal(t, 2, second[0].AttemptCount)
		require.Equal(t, 1, second[0].ChargedAttempts(), "the lapsed claim is not charged")

		// The paused first worker wakes up and tries to record: refused.
		code := 200
		res, err := s.RecordOutcomes(ctx, []repository.OutcomeRecord{
			{OccurrenceID: first[0].ID, LeaseToken: "old", Status: model.OccurrenceCompleted, StatusCode: &code,
				Now: t0.Add(3 * time.Minute), Attempt: &model.Attempt{OccurrenceID: first[0].ID, EventID: e.ID,
					Attempt: 1, StartedAt: t0, Outcome: "completed"}},
			{OccurrenceID: second[0].ID, LeaseToken: "new", Status: model.OccurrenceFailed,
				Now: t0.Add(3 * time.Minute), Attempt: &model.Attempt{OccurrenceID: first[0].ID, EventID: e.ID,
					Attempt: 2, StartedAt: t0.Add(2 * time.Minute), Outcome: "failed"}},
		})
		require.NoError(t, err)
		require.ErrorIs(t, res[0], model.ErrLeaseLost)
		require.NoError(t, res[1])

		got, err := s.GetOccurrence(ctx, first[0].ID)
		require.NoError(t, err)
		require.Equal(t, model.OccurrenceFailed, got.Status, "one final state: the lease holder's")
		attempts, err := s.ListAttempts(ctx, first[0].ID)
		require.NoError(t, err)
		require.Len(t, attempts, 1)
		require.Equal(t, 2, attempts[0].Attempt)
	})
}

func TestAcknowledgementBeforeTheDeliveryIsRecorded(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		e := newEvent()
		mustCreate(t, s, e)
		_, err := s.InsertOccurrences(ctx, e.ID, []time.Time{t0}, false, t0)
		require.NoError(t, err)
		got := claim(t, s, t0, 1)
		// The client acks the frame before the dispatcher records it.
		require.NoError(t, s.Acknowledge(ctx, got[0].ID, t0.Add(time.Millisecond)))
		deadline := t0.Add(30 * time.Second)
		rec := repository.OutcomeRecord{OccurrenceID: got[0].ID, LeaseToken: "tok",
			Status: model.OccurrenceAwaitingAck, AckDeadline: &deadline, Now: t0.Add(2 * time.Millisecond),
			EventID: e.ID, Ran: true, LastStatus: string(model.OccurrenceAwaitingAck),
			Attempt: &model.Attempt{OccurrenceID: got[0].ID, EventID: e.ID, Attempt: 1, StartedAt: t0,
				Outcome: "awaiting_ack"}}
		res, err := s.RecordOutcomes(ctx, []repository.OutcomeRecord{rec})
		require.NoError(t, err)
		require.NoError(t, res[0])
		noteRuns(t, s, rec) // what the bookkeeper writes next
		o, err := s.GetOccurrence(ctx, got[0].ID)
		require.NoError(t, err)
		require.Equal(t, model.OccurrenceCompleted, o.Status)
		require.NotNil(t, o.CompletedAt)
		ev, err := s.GetEvent(ctx, e.ID)
		require.NoError(t, err)
		require.Equal(t, "completed", ev.LastStatus, "the event's last run is complete: nothing awaits an ack")
		n, err := s.RescueExpired(ctx, t0.Add(time.Hour), 10)
		require.NoError(t, err)
		require.Zero(t, n)
	})
}

// database.async_outcome_commit relaxes only the outcome transaction:
// outcomes are recorded as usual, and the connection goes back to the pool
// with synchronous commits for everything else (claims, creates, edits).
func TestAsyncOutcomeCommitStaysInsideTheOutcomeTransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := repositorytest.PostgresSchema(t)
	migrator, err := repository.OpenPostgres(ctx, url, repository.Options{})
	require.NoError(t, err)
	_, err = migrator.Migrate(ctx)
	require.NoError(t, err)
	require.NoError(t, migrator.Close())
	// One connection: the outcome and the SHOW below share it.
	s, err := repository.OpenPostgres(ctx, url, repository.Options{MaxOpenConns: 1, AsyncOutcomeCommit: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })

	e := newEvent()
	mustCreate(t, s, e)
	_, err = s.InsertOccurrences(ctx, e.ID, []time.Time{t0}, false, t0)
	require.NoError(t, err)
	complete(t, s, claim(t, s, t0, 1)[0], "tok", t0)
	require.Equal(t, []model.OccurrenceStatus{model.OccurrenceCompleted}, statuses(t, s, e.ID))

	var setting string
	require.NoError(t, s.DB().GetContext(ctx, &setting, `SHOW synchronous_commit`))
	require.Equal(t, "on", setting, "the one pooled connection is durable again after the outcome")
}

// TestAttemptKeepsItsRequest: the request an attempt sent is written by
// the outcome batch's one statement, beside attempts that have none, and
// read back as written.
func TestAttemptKeepsItsRequest(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		e, got := twoClaimed(t, s)
		sent := `{"method":"POST","url":"https://example.com/hook","headers":{"Webhook-Signature":"[redacted]"},` +
			`"body":"{\"a\":\"é\"}","body_truncated":true}`
		var recs []repository.OutcomeRecord
		for k, o := range got {
			a := &model.Attempt{OccurrenceID: o.ID, EventID: e.ID, Attempt: 1, StartedAt: t0, Outcome: "completed"}
			if k == 0 {
				a.RequestJSON = &sent
			}
			recs = append(recs, repository.OutcomeRecord{OccurrenceID: o.ID, LeaseToken: "tok",
				Status: model.OccurrenceCompleted, Now: t0.Add(time.Second), Attempt: a, EventID: e.ID, Ran: true})
		}
		res, err := s.RecordOutcomes(ctx, recs)
		require.NoError(t, err)
		for _, r := range res {
			require.NoError(t, r)
		}
		as, err := s.ListAttempts(ctx, got[0].ID)
		require.NoError(t, err)
		require.Len(t, as, 1)
		require.NotNil(t, as[0].RequestJSON, "the recorded request")
		require.Equal(t, sent, *as[0].RequestJSON)
		as, err = s.ListAttempts(ctx, got[1].ID)
		require.NoError(t, err)
		require.Len(t, as, 1)
		require.Nil(t, as[0].RequestJSON, "an attempt without one reads back as not recorded")
	})
}

// An attempt reads back as recorded, every field, whether it carries its
// occurrence's instant (the dispatcher's batches: COPY on PostgreSQL) or
// leaves it to the occurrence's row.
func TestAttemptsReadBackAsRecorded(t *testing.T) {
	for _, known := range []bool{true, false} {
		t.Run(fmt.Sprintf("instant known %v", known), func(t *testing.T) {
			eachBackend(t, func(t *testing.T, s *repository.Store) {
				ctx := context.Background()
				e, got := twoClaimed(t, s)
				code, msg, excerpt, endpoint := 503, "upstream said \"no\"\n", "busy, é", model.NewID()
				sent := `{"method":"POST","url":"https://example.com/hook","headers":{},"body":"{\"a\":1}","body_truncated":false}`
				want := map[string]model.Attempt{}
				var recs []repository.OutcomeRecord
				for k, o := range got {
					a := model.Attempt{ID: model.NewID(), OccurrenceID: o.ID, EventID: e.ID, Attempt: 1,
						StartedAt: t0.Add(time.Second + 250*time.Millisecond), DurationMS: 42, Outcome: "completed",
						LatenessMS: 250}
					status := model.OccurrenceCompleted
					if k == 0 {
						a.Manual, a.Truncated, a.Outcome, status = true, true, "retrying", model.OccurrenceRetrying
						a.StatusCode, a.Error, a.ResponseExcerpt, a.EndpointID, a.RequestJSON = &code, &msg, &excerpt, &endpoint, &sent
					}
					if known {
						a.ScheduledAt = o.ScheduledAt
					}
					want[o.ID] = a
					next := t0.Add(time.Hour)
					recs = append(recs, repository.OutcomeRecord{OccurrenceID: o.ID, LeaseToken: "tok", Status: status,
						NextAttemptAt: &next, Now: t0.Add(2 * time.Second), Attempt: &a, EventID: e.ID, Ran: true})
				}
				res, err := s.RecordOutcomes(ctx, recs)
				require.NoError(t, err)
				for _, r := range res {
					require.NoError(t, r)
				}
				for _, o := range got {
					as, err := s.ListAttempts(ctx, o.ID)
					require.NoError(t, err)
					require.Len(t, as, 1)
					w, g := want[o.ID], as[0]
					w.ScheduledAt = o.ScheduledAt
					require.True(t, w.StartedAt.Equal(g.StartedAt), "started_at %s, want %s", g.StartedAt, w.StartedAt)
					require.True(t, w.ScheduledAt.Equal(g.ScheduledAt), "scheduled_at %s, want %s", g.ScheduledAt, w.ScheduledAt)
					w.StartedAt, w.ScheduledAt = g.StartedAt, g.ScheduledAt
					require.Equal(t, w, g)
				}
			})
		})
	}
}
