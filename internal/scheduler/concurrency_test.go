package scheduler_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/scheduler/schedulertest"
)

// keyed is a one-time event at t0+at naming key with limit 1.
func (e *env) keyed(key string, at time.Duration) *model.Event {
	return e.create(e.event(func(ev *model.Event) {
		ev.StartTime = t0.Add(at)
		ev.Concurrency = &model.Concurrency{Key: key, Limit: 1}
	}))
}

// A run waiting for its retry keeps its slot: the other event of the key
// waits (concurrency_wait) until the retry succeeded, then fires at once.
func TestARetryingRunKeepsItsConcurrencySlot(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		e := newEnv(t, s, testConfig())
		e.failFirstDelivery()
		a, b := e.keyed("customer-42", time.Minute), e.keyed("customer-42", time.Minute+time.Second)
		e.clock.Set(t0.Add(time.Minute + time.Second))
		e.dispatch()
		require.Equal(t, []model.OccurrenceStatus{model.OccurrenceRetrying}, e.statuses(a.ID))
		waiting := e.occurrences(b.ID)[0]
		require.Equal(t, model.OccurrencePending, waiting.Status)
		require.Equal(t, model.ReasonConcurrencyWait, *waiting.Reason)
		require.Equal(t, 0, waiting.AttemptCount, "waiting is not an attempt")

		e.clock.Advance(10 * time.Second) // a's retry, before b looks again
		e.dispatch()
		require.Equal(t, []model.OccurrenceStatus{model.OccurrenceCompleted}, e.statuses(a.ID))
		require.Eventually(t, func() bool {
			return !e.occurrences(b.ID)[0].NextAttemptAt.After(e.clock.Now())
		}, 30*time.Second, 10*time.Millisecond, "the freed slot makes the waiter due")
		e.dispatch()
		done := e.occurrences(b.ID)[0]
		require.Equal(t, model.OccurrenceCompleted, done.Status)
		require.Nil(t, done.Reason, "it no longer says it waits")
	})
}

// A slot whose occurrence ended without its release (here the event was
// deleted while its run was under way) is freed by the rescuer, and the
// key's waiter fires.
func TestTheRescuerFreesTheSlotOfAnEndedOccurrence(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		e := newEnv(t, s, testConfig())
		a := e.create(e.event(func(ev *model.Event) {
			ev.StartTime = t0.Add(time.Minute)
			ev.Completion, ev.Concurrency = model.CompletionCallback, &model.Concurrency{Key: "nightly", Limit: 1}
		}))
		b := e.keyed("nightly", 2*time.Minute)
		e.clock.Set(t0.Add(2 * time.Minute))
		e.dispatch()
		require.Equal(t, []model.OccurrenceStatus{model.OccurrenceRunning}, e.statuses(a.ID))
		require.Equal(t, model.ReasonConcurrencyWait, *e.occurrences(b.ID)[0].Reason)

		// An operator cancels the running run out of band.
		_, err := s.CancelOverlapped(context.Background(), []string{e.occurrences(a.ID)[0].ID}, e.clock.Now())
		require.NoError(t, err)
		e.dispatch()
		require.Equal(t, model.OccurrenceCompleted, e.occurrences(b.ID)[0].Status)

		// A run waiting for its retry is cancelled with its event, which
		// leaves its slot behind: the rescuer frees it.
		c := e.keyed("weekly", 3*time.Minute)
		cOcc := e.occurrences(c.ID)[0].ID
		e.recv.Respond(func(d schedulertest.Delivery, _ int) schedulertest.Reply {
			if d.WebhookID == cOcc {
				return schedulertest.Reply{Status: http.StatusServiceUnavailable}
			}
			return schedulertest.Reply{Status: http.StatusOK}
		})
		d := e.keyed("weekly", 3*time.Minute+time.Second)
		e.clock.Set(t0.Add(3*time.Minute + time.Second))
		e.dispatch()
		require.Equal(t, []model.OccurrenceStatus{model.OccurrenceRetrying}, e.statuses(c.ID))
		require.Equal(t, model.ReasonConcurrencyWait, *e.occurrences(d.ID)[0].Reason)
		_, err = s.CancelPendingOccurrences(context.Background(), c.ID, t0, false, model.ReasonEventDeleted, e.clock.Now())
		require.NoError(t, err)
		_, err = e.resc.RunOnce(context.Background())
		require.NoError(t, err)
		e.dispatch()
		require.Equal(t, model.OccurrenceCompleted, e.occurrences(d.ID)[0].Status)
	})
}

// Backfilled instants of an event with a concurrency key wait their turn
// like any other, and the ledger still says they were a backfill once they
// ran.
func TestBackfilledInstantsKeepTheirReasonThroughAConcurrencyWait(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		e := newEnv(t, s, testConfig())
		ev := e.keyed("reports", time.Hour)
		rows := []model.Planned{}
		for h := 3; h >= 1; h-- {
			rows = append(rows, model.Planned{At: t0.Add(-time.Duration(h) * time.Hour), Status: model.OccurrencePending})
		}
		require.NoError(t, s.WithTx(ctx, func(tx *repository.Store) error {
			_, err := tx.InsertBackfill(ctx, ev.ID, rows, e.clock.Now())
			return err
		}))
		e.dispatch()
		waiting := 0
		for _, o := range e.occurrences(ev.ID) {
			if o.Reason != nil && *o.Reason == model.ReasonConcurrencyWait {
				waiting++
			}
		}
		require.Equal(t, 2, waiting, "limit 1: one runs, two wait")
		for range 20 {
			done := 0
			for _, o := range e.occurrences(ev.ID) {
				if o.Status == model.OccurrenceCompleted {
					done++
				}
			}
			if done == 3 {
				break
			}
			e.clock.Advance(15 * time.Second)
			e.dispatch()
		}
		for _, o := range e.occurrences(ev.ID) {
			if o.ScheduledAt.After(t0) {
				continue // the event's own instant, not due yet
			}
			require.Equal(t, model.OccurrenceCompleted, o.Status, "%s", o.ScheduledAt)
			require.NotNil(t, o.Reason, "%s", o.ScheduledAt)
			require.Equal(t, model.ReasonBackfill, *o.Reason, "%s: still marked backfill", o.ScheduledAt)
		}
	})
}
