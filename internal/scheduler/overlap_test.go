package scheduler_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/scheduler/schedulertest"
)

// ledgerRow is what a test checks of an occurrence: its state and reason.
type ledgerRow struct {
	Status model.OccurrenceStatus
	Reason string
}

func (e *env) ledger(eventID string, n int) []ledgerRow {
	e.t.Helper()
	out := []ledgerRow{}
	for _, o := range e.occurrences(eventID)[:n] {
		r := ledgerRow{Status: o.Status}
		if o.Reason != nil {
			r.Reason = *o.Reason
		}
		out = append(out, r)
	}
	return out
}

// completeRun reports the run of the event's n-th occurrence (from 1)
// succeeded, as its receiver would through the API.
func (e *env) completeRun(eventID string, n int) {
	e.t.Helper()
	occ := e.occurrences(eventID)[n-1]
	_, err := e.store.CompleteRun(context.Background(), occ.ID, model.RunSucceeded, nil, e.clock.Now())
	require.NoError(e.t, err)
}

// failFirstDelivery makes the receiver answer 503 to the first delivery it
// gets, once, and 200 to everything else.
func (e *env) failFirstDelivery() {
	first := ""
	e.recv.Respond(func(d schedulertest.Delivery, n int) schedulertest.Reply {
		if first == "" {
			first = d.WebhookID
		}
		if d.WebhookID == first && n == 1 {
			return schedulertest.Reply{Status: http.StatusServiceUnavailable}
		}
		return schedulertest.Reply{Status: http.StatusOK}
	})
}

// An hourly job whose run takes longer than an hour: its receiver accepts
// each delivery and completes the run by callback. The first run is still
// going when the second and third instants come; then it ends, and so does
// the next one. Each policy does what its name says.
func TestAnHourlyJobThatOverrunsUnderEachOverlapPolicy(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		P, S, R, C := model.OccurrencePending, model.OccurrenceSkipped, model.OccurrenceRunning, model.OccurrenceCompleted
		X := model.OccurrenceCancelled
		row := func(st model.OccurrenceStatus, reason ...string) ledgerRow {
			r := ledgerRow{Status: st}
			if len(reason) > 0 {
				r.Reason = reason[0]
			}
			return r
		}
		ov := model.ReasonOverlap
		tests := []struct {
			policy string
			// the first three occurrences after the second instant, after
			// the third, after the first run ends, and after the next
			// run ends (or the second, for cancel_previous)
			second, third, firstEnds, nextEnds []ledgerRow
		}{
			{model.OverlapAllow,
				[]ledgerRow{row(R), row(R), row(P)},
				[]ledgerRow{row(R), row(R), row(R)},
				[]ledgerRow{row(C), row(R), row(R)},
				[]ledgerRow{row(C), row(C), row(R)}},
			{model.OverlapSkip,
				[]ledgerRow{row(R), row(S, ov), row(P)},
				[]ledgerRow{row(R), row(S, ov), row(S, ov)},
				[]ledgerRow{row(C), row(S, ov), row(S, ov)},
				nil},
			{model.OverlapBufferOne,
				[]ledgerRow{row(R), row(P), row(P)},
				[]ledgerRow{row(R), row(P), row(S, ov)},
				[]ledgerRow{row(C), row(R), row(S, ov)},
				[]ledgerRow{row(C), row(C), row(S, ov)}},
			{model.OverlapBufferAll,
				[]ledgerRow{row(R), row(P), row(P)},
				[]ledgerRow{row(R), row(P), row(P)},
				[]ledgerRow{row(C), row(R), row(P)},
				[]ledgerRow{row(C), row(C), row(R)}},
			{model.OverlapCancelPrevious,
				[]ledgerRow{row(X, ov), row(R), row(P)},
				[]ledgerRow{row(X, ov), row(X, ov), row(R)},
				nil, nil},
		}
		for _, tt := range tests {
			t.Run(tt.policy, func(t *testing.T) {
				cfg := testConfig()
				cfg.Lookahead = 5 * time.Hour
				e := newEnv(t, s, cfg)
				ev := e.create(e.event(func(ev *model.Event) {
					ev.RRule = ptr("FREQ=HOURLY")
					ev.Completion, ev.MaxRuntime, ev.Overlap = model.CompletionCallback, 6*time.Hour, tt.policy
				}))
				e.clock.Set(t0.Add(time.Minute))
				require.Equal(t, 1, e.dispatch())
				require.Equal(t, []ledgerRow{row(R)}, e.ledger(ev.ID, 1))

				e.clock.Set(t0.Add(time.Hour + time.Minute))
				e.dispatch()
				require.Equal(t, tt.second, e.ledger(ev.ID, 3), "the second instant")
				if tt.policy == model.OverlapBufferOne || tt.policy == model.OverlapBufferAll {
					waiting := e.occurrences(ev.ID)[1]
					require.Contains(t, *waiting.ErrorMessage, "waiting: the previous run is still in progress")
					require.Equal(t, 0, waiting.AttemptCount, "waiting is not an attempt")
				}

				e.clock.Set(t0.Add(2*time.Hour + time.Minute))
				e.dispatch()
				require.Equal(t, tt.third, e.ledger(ev.ID, 3), "the third instant")
				if tt.policy == model.OverlapCancelPrevious {
					// The receiver of a cancelled run is told so when it reports.
					first := e.occurrences(ev.ID)[0]
					_, err := s.CompleteRun(context.Background(), first.ID, model.RunSucceeded, nil, e.clock.Now())
					require.ErrorIs(t, err, repository.ErrRunEnded)
					return
				}

				// Within the waiting instant's recheck (15 s): it fires
				// because the run ended, not because it looked again.
				e.clock.Advance(5 * time.Second)
				e.completeRun(ev.ID, 1)
				e.dispatch() // the instant released by the end fires now
				require.Equal(t, tt.firstEnds, e.ledger(ev.ID, 3), "the first run ended")
				if tt.nextEnds == nil {
					return
				}
				e.clock.Advance(5 * time.Second)
				e.completeRun(ev.ID, 2)
				e.dispatch()
				require.Equal(t, tt.nextEnds, e.ledger(ev.ID, 3), "the next run ended")
			})
		}
	})
}

// A run that failed and waits for its retry is still in progress: a new
// instant under skip is skipped; once the retry succeeds, the next one
// fires. The run here is the delivery itself (completion by response).
func TestARetryingRunCountsAsInProgress(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		e := newEnv(t, s, testConfig())
		e.failFirstDelivery()
		ev := e.create(e.event(func(ev *model.Event) {
			ev.RRule, ev.Overlap = ptr("FREQ=MINUTELY;INTERVAL=5"), model.OverlapSkip
		}))
		e.clock.Set(t0.Add(time.Minute))
		e.dispatch()
		require.Equal(t, []model.OccurrenceStatus{model.OccurrenceRetrying}, e.statuses(ev.ID)[:1])
		e.clock.Set(t0.Add(6 * time.Minute)) // the retry (10 s) and the next instant
		e.dispatch()
		require.Equal(t, []ledgerRow{{model.OccurrenceCompleted, ""}, {model.OccurrenceSkipped, model.ReasonOverlap}},
			e.ledger(ev.ID, 2), "the retry is not skipped; the instant that came while it waited is")
		e.clock.Set(t0.Add(11 * time.Minute))
		e.dispatch()
		require.Equal(t, model.OccurrenceCompleted, e.occurrences(ev.ID)[2].Status)
	})
}

// A run that times out ends like any other: the instant waiting for it
// under buffer_all fires at once, before it would have looked again.
func TestAWaitingInstantFiresWhenTheRunTimesOut(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		cfg := testConfig()
		cfg.Lookahead = 3 * time.Hour
		e := newEnv(t, s, cfg)
		ev := e.create(e.event(func(ev *model.Event) {
			ev.RRule = ptr("FREQ=HOURLY")
			ev.Completion, ev.MaxRuntime, ev.Overlap = model.CompletionCallback, time.Hour+5*time.Second, model.OverlapBufferAll
		}))
		e.clock.Set(t0.Add(time.Minute))
		e.dispatch()
		e.clock.Set(t0.Add(time.Hour + time.Minute))
		e.dispatch()
		require.Equal(t, []model.OccurrenceStatus{model.OccurrenceRunning, model.OccurrencePending}, e.statuses(ev.ID)[:2])

		e.clock.Set(t0.Add(time.Hour + time.Minute + 6*time.Second)) // past the first run's deadline, before the recheck
		_, err := e.resc.RunOnce(context.Background())
		require.NoError(t, err)
		e.dispatch()
		require.Equal(t, []model.OccurrenceStatus{model.OccurrenceTimedOut, model.OccurrenceRunning}, e.statuses(ev.ID)[:2])
	})
}

// With completion by response the run is the delivery: an instant that
// comes while a slow delivery of the previous one is under way waits
// (buffer_one), and fires as soon as that delivery's outcome is recorded,
// before it would have looked again.
func TestAnInstantWaitingForASlowDeliveryFiresWhenItIsRecorded(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		e := newEnv(t, s, testConfig())
		release := hangingReceiver(t, e)
		ev := e.create(e.event(func(ev *model.Event) {
			ev.RRule, ev.Overlap = ptr("FREQ=MINUTELY;INTERVAL=5"), model.OverlapBufferOne
		}))
		e.clock.Set(t0.Add(time.Minute))
		_, err := e.disp.RunOnce(deadline(t))
		require.NoError(t, err)
		require.NoError(t, e.recv.WaitFor(deadline(t), 1))

		e.clock.Set(t0.Add(6 * time.Minute))
		_, err = e.disp.RunOnce(deadline(t))
		require.NoError(t, err)
		waiting := func() bool {
			o := e.occurrences(ev.ID)[1]
			return o.Status == model.OccurrencePending && o.ErrorMessage != nil &&
				strings.HasPrefix(*o.ErrorMessage, "waiting:")
		}
		require.Eventually(t, waiting, 30*time.Second, 10*time.Millisecond, "the second instant waits")
		require.Len(t, e.recv.Deliveries(), 1)

		release()
		require.NoError(t, e.disp.Wait(deadline(t)))
		require.Eventually(t, func() bool {
			return !e.occurrences(ev.ID)[1].NextAttemptAt.After(e.clock.Now())
		}, 30*time.Second, 10*time.Millisecond, "the recorded outcome makes the waiting instant due")
		e.dispatch()
		require.Equal(t, []model.OccurrenceStatus{model.OccurrenceCompleted, model.OccurrenceCompleted},
			e.statuses(ev.ID)[:2])
		require.Len(t, e.recv.Deliveries(), 2)
	})
}
