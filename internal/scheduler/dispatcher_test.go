package scheduler_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/repository/repositorytest"
	"github.com/qhronos/qhronos/internal/scheduler/schedulertest"
)

func deadline(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestDispatcherFiresOnTimeAndNeverEarly(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		e := newEnv(t, s, testConfig())
		ev := e.create(e.event(nil)) // one-time at t0+1m
		e.clock.Set(t0.Add(time.Minute - 100*time.Millisecond))
		n, err := e.disp.RunOnce(deadline(t))
		require.NoError(t, err)
		require.Equal(t, 1, n, "claimed within claim-ahead")
		require.NoError(t, e.clock.WaitForWaiters(deadline(t), 1), "the row is held until its instant")
		require.Empty(t, e.recv.Deliveries(), "nothing fires before its instant")

		e.clock.Advance(100 * time.Millisecond)
		require.NoError(t, e.recv.WaitFor(deadline(t), 1))
		require.NoError(t, e.disp.Wait(deadline(t)))
		occ := e.occurrences(ev.ID)
		require.Equal(t, model.OccurrenceCompleted, occ[0].Status)
		require.Equal(t, occ[0].ID, e.recv.Deliveries()[0].WebhookID, "the delivery id is the occurrence id")
		attempts, err := s.ListAttempts(context.Background(), occ[0].ID)
		require.NoError(t, err)
		require.Len(t, attempts, 1)
		require.GreaterOrEqual(t, attempts[0].LatenessMS, int64(0))
		require.Equal(t, 200, *attempts[0].StatusCode)
		got := e.awaitEvent(ev.ID, inactive, "a one-time event is inactive once it fired")
		require.Equal(t, t0.Add(time.Minute), *got.LastRunAt)
		require.Contains(t, got.LastStatus, "completed")
	})
}

func TestRetriesWithBackoffThenFailsWithoutBlockingTheSeries(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		e := newEnv(t, s, testConfig()) // 3 attempts from 10 s, jitter fixed at 0.5
		e.recv.Respond(func(schedulertest.Delivery, int) schedulertest.Reply {
			return schedulertest.Reply{Status: http.StatusServiceUnavailable}
		})
		ev := e.create(e.event(func(ev *model.Event) { ev.RRule = ptr("FREQ=MINUTELY") }))
		e.clock.Set(t0.Add(time.Minute))
		require.Equal(t, 1, e.dispatch())
		first := e.occurrences(ev.ID)[0]
		require.Equal(t, model.OccurrenceRetrying, first.Status)
		require.Equal(t, t0.Add(time.Minute+5*time.Second), first.NextAttemptAt, "half of the 10 s jitter range")

		e.clock.Advance(5 * time.Second)
		require.Equal(t, 1, e.dispatch())
		first = e.occurrences(ev.ID)[0]
		require.Equal(t, model.OccurrenceRetrying, first.Status)
		require.Equal(t, t0.Add(time.Minute+15*time.Second), first.NextAttemptAt, "the range doubles")

		e.clock.Advance(10 * time.Second)
		require.Equal(t, 1, e.dispatch())
		first = e.occurrences(ev.ID)[0]
		require.Equal(t, model.OccurrenceFailed, first.Status)
		require.Equal(t, 3, first.AttemptCount)
		require.Contains(t, *first.ErrorMessage, "gave up after 3 attempts")
		require.Equal(t, 3, e.recv.Count()[first.ID], "three deliveries with one webhook-id")

		// The next instant fires as usual.
		e.recv.Respond(nil)
		e.clock.Set(t0.Add(2 * time.Minute))
		require.Equal(t, 1, e.dispatch())
		require.Equal(t, model.OccurrenceCompleted, e.occurrences(ev.ID)[1].Status)
		require.Equal(t, model.EventActive, e.reload(ev.ID).Status)
	})
}

func TestReceiverAnswers(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		tests := []struct {
			name       string
			reply      schedulertest.Reply
			wantStatus model.OccurrenceStatus
			wantNext   time.Duration // after the instant, for retrying
			wantEvent  model.EventStatus
		}{
			{"410 fails and pauses the event", schedulertest.Reply{Status: http.StatusGone}, "failed", 0, "paused"},
			{"404 fails without retry", schedulertest.Reply{Status: http.StatusNotFound}, "failed", 0, "active"},
			{"429 honours Retry-After", schedulertest.Reply{Status: http.StatusTooManyRequests,
				Headers: map[string]string{"Retry-After": "120"}}, "retrying", 2 * time.Minute, "active"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				e := newEnv(t, s, testConfig())
				e.recv.Respond(func(schedulertest.Delivery, int) schedulertest.Reply { return tt.reply })
				ev := e.create(e.event(func(ev *model.Event) { ev.RRule = ptr("FREQ=MINUTELY") }))
				e.clock.Set(t0.Add(time.Minute))
				require.Equal(t, 1, e.dispatch())
				occ := e.occurrences(ev.ID)
				require.Equal(t, tt.wantStatus, occ[0].Status)
				require.Equal(t, tt.reply.Status, *occ[0].StatusCode)
				if tt.wantNext > 0 {
					require.Equal(t, t0.Add(time.Minute+tt.wantNext), occ[0].NextAttemptAt)
				}
				got := e.reload(ev.ID)
				require.Equal(t, tt.wantEvent, got.Status)
				if tt.wantEvent == model.EventPaused {
					require.Contains(t, got.LastStatus, "410")
					for _, o := range occ[1:] {
						require.Equal(t, model.OccurrenceSkipped, o.Status, "a paused event's future rows are skipped")
						require.Equal(t, model.ReasonPaused, *o.Reason)
					}
				}
				require.Len(t, e.recv.Deliveries(), 1)
			})
		}
	})
}

func TestPausedOrDeletedWhileHeldEndsWithoutDelivery(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		for _, change := range []string{"paused", "deleted"} {
			t.Run(change, func(t *testing.T) {
				e := newEnv(t, s, testConfig())
				ev := e.create(e.event(nil))
				e.holdTillInstant(t, 1)
				// The API changes the event while its occurrence is held
				// (without the scheduler's helpers: the fire-time check alone
				// must refuse it).
				if change == "paused" {
					cur := e.reload(ev.ID)
					cur.Status = model.EventPaused
					require.NoError(t, s.UpdateEvent(context.Background(), &cur, cur.Version))
				} else {
					require.NoError(t, s.DeleteEvent(context.Background(), ev.ID, 0, e.clock.Now()))
				}
				e.clock.Advance(200 * time.Millisecond)
				require.NoError(t, e.disp.Wait(deadline(t)))
				occ := e.occurrences(ev.ID)
				want, reason := model.OccurrenceCancelled, model.ReasonEventDeleted
				if change == "paused" {
					want, reason = model.OccurrenceSkipped, model.ReasonPaused
				}
				require.Equal(t, want, occ[0].Status)
				require.Equal(t, reason, *occ[0].Reason)
				require.Equal(t, 0, occ[0].AttemptCount, "no attempt was made")
				require.Contains(t, *occ[0].ErrorMessage, change)
				require.Empty(t, e.recv.Deliveries())
			})
		}
	})
}

// An occurrence moved to another moment while its owner holds it is not
// sent at the moment it was read for, and stays pending at its new one.
func TestMovedWhileHeldIsNotSentAtItsOldInstant(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		e := newEnv(t, s, testConfig())
		ev := e.create(e.event(nil))
		e.holdTillInstant(t, 1)
		held := e.occurrences(ev.ID)[0]
		to := held.ScheduledAt.Add(time.Hour)
		require.NoError(t, s.MoveOccurrence(context.Background(), held.ID, to, held.ScheduledAt, e.clock.Now()))
		e.clock.Advance(200 * time.Millisecond)
		require.NoError(t, e.disp.Wait(deadline(t)))
		require.Empty(t, e.recv.Deliveries(), "not sent at the instant it was moved from")
		occ := e.occurrences(ev.ID)
		require.Len(t, occ, 1)
		require.Equal(t, model.OccurrencePending, occ[0].Status)
		require.True(t, occ[0].ScheduledAt.Equal(to), "pending at %s, moved to %s", occ[0].ScheduledAt, to)
		require.Zero(t, occ[0].AttemptCount)
	})
}

// An occurrence skipped through the API while its owner holds it is not
// sent: the skip notes its bucket, and the read before the instant sees it.
// Its neighbour in time, of another event nothing happened to, is sent.
func TestSkippedWhileHeldIsNotSent(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		e := newEnv(t, s, testConfig())
		skipped, kept := e.create(e.event(nil)), e.create(e.event(nil))
		e.holdTillInstant(t, 2)
		held := e.occurrences(skipped.ID)[0]
		require.NoError(t, s.SkipOccurrence(context.Background(), held.ID, model.ReasonManual, "by hand", e.clock.Now()))
		e.clock.Advance(200 * time.Millisecond)
		require.NoError(t, e.disp.Wait(deadline(t)))
		require.Equal(t, []model.OccurrenceStatus{"skipped"}, e.statuses(skipped.ID))
		require.Equal(t, []model.OccurrenceStatus{"completed"}, e.statuses(kept.ID))
		got := e.recv.Deliveries()
		require.Len(t, got, 1)
		require.Equal(t, e.occurrences(kept.ID)[0].ID, got[0].WebhookID)
	})
}

func TestPauseHelperRevokesHeldRow(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		e := newEnv(t, s, testConfig())
		ev := e.create(e.event(nil))
		e.holdTillInstant(t, 1)
		e.pause(ev.ID)
		e.clock.Advance(200 * time.Millisecond)
		require.NoError(t, e.disp.Wait(deadline(t)))
		require.Equal(t, []model.OccurrenceStatus{"skipped"}, e.statuses(ev.ID))
		require.Empty(t, e.recv.Deliveries())
	})
}

func TestCatchUpAfterDowntime(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		tests := []struct {
			mode      string
			wantFired []int // minutes after t0
		}{
			{"all", []int{61, 71, 81, 91, 101, 111}},
			{"latest", []int{111}},
			{"none", nil},
		}
		for _, tt := range tests {
			t.Run(tt.mode, func(t *testing.T) {
				cfg := testConfig()
				cfg.Lookahead = 3 * time.Hour
				e := newEnv(t, s, cfg)
				ev := e.create(e.event(func(ev *model.Event) {
					every10m(ev)
					ev.CatchUp = tt.mode
				}))
				e.clock.Advance(2 * time.Hour) // everything was down for two hours
				require.Equal(t, 12, e.dispatch())
				fired := map[string]bool{}
				for id := range e.recv.Count() {
					fired[id] = true
				}
				var gotFired []int
				for _, o := range e.occurrences(ev.ID)[:12] {
					m := int(o.ScheduledAt.Sub(t0) / time.Minute)
					if fired[o.ID] {
						gotFired = append(gotFired, m)
						require.Equal(t, model.OccurrenceCompleted, o.Status)
						continue
					}
					require.Equal(t, model.OccurrenceMissed, o.Status, "+%dm is missed, never dropped", m)
					require.Equal(t, 0, o.AttemptCount)
					if m < 60 {
						require.Contains(t, *o.ErrorMessage, "older than the catch-up window")
					}
				}
				require.Equal(t, tt.wantFired, gotFired)
			})
		}
	})
}

func TestGracefulShutdownReleasesUnstartedClaims(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		e := newEnv(t, s, testConfig())
		ev := e.create(e.event(nil))
		e.clock.Set(t0.Add(time.Minute - 200*time.Millisecond))
		cancel, done := e.runLoop()
		// Run reads the row and holds it until its instant (one waiter),
		// and sleeps (another). Nothing is written for it meanwhile.
		require.NoError(t, e.clock.WaitForWaiters(deadline(t), 2))
		require.Equal(t, 1, e.disp.Held())
		require.Equal(t, model.OccurrencePending, e.occurrences(ev.ID)[0].Status)
		cancel()
		select {
		case <-done:
		case <-deadline(t).Done():
			t.Fatal("Run did not return after its context ended")
		}
		occ := e.occurrences(ev.ID)[0]
		require.Equal(t, model.OccurrencePending, occ.Status, "released for immediate pickup")
		require.Equal(t, 0, occ.AttemptCount)
		require.Nil(t, occ.LeaseToken)
		require.Empty(t, e.recv.Deliveries())

		// Another instance picks it up at once, and still holds it until
		// its instant.
		other := e.newDispatcher(testConfig(), nil)
		waiting := e.clock.Waiters()
		n, err := other.RunOnce(deadline(t))
		require.NoError(t, err)
		require.Equal(t, 1, n)
		require.NoError(t, e.clock.WaitForWaiters(deadline(t), waiting+1))
		require.Empty(t, e.recv.Deliveries(), "a released row never fires before its instant")
		e.clock.Advance(200 * time.Millisecond)
		require.NoError(t, other.Wait(deadline(t)))
		require.Equal(t, model.OccurrenceCompleted, e.occurrences(ev.ID)[0].Status)
		require.Equal(t, occ.ID, e.recv.Deliveries()[0].WebhookID, "same delivery id")
	})
}

// The loop sleeps till the instant its last read found after its window;
// a row that comes back to waiting sooner (here a retry) wakes it for its
// own instant. max_sleep is an hour here, so nothing else would.
func TestARetryDueBeforeTheNextReadInstantWakesTheLoop(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		cfg := testConfig()
		cfg.MaxSleep = time.Hour
		e := newEnv(t, s, cfg)
		e.recv.Respond(func(d schedulertest.Delivery, n int) schedulertest.Reply {
			if n == 1 {
				return schedulertest.Reply{Status: http.StatusInternalServerError}
			}
			return schedulertest.Reply{Status: http.StatusOK}
		})
		failing := e.create(e.event(nil)) // due at t0+1m
		e.create(e.event(func(ev *model.Event) { ev.StartTime = t0.Add(30 * time.Minute) }))
		e.clock.Set(t0.Add(time.Minute - 200*time.Millisecond))
		cancel, done := e.runLoop()
		defer func() { cancel(); <-done }()
		require.NoError(t, e.clock.WaitForWaiters(deadline(t), 2), "the holder waits for the instant, the loop sleeps")
		e.clock.Set(t0.Add(time.Minute))
		require.NoError(t, e.recv.WaitFor(deadline(t), 1))
		var retryAt time.Time
		require.Eventually(t, func() bool {
			o := e.occurrences(failing.ID)[0]
			retryAt = o.NextAttemptAt
			return o.Status == model.OccurrenceRetrying
		}, 50*time.Second, 5*time.Millisecond, "the failure is recorded, to be retried")
		require.True(t, retryAt.Before(t0.Add(30*time.Minute)))
		e.clock.Set(retryAt)
		require.NoError(t, e.recv.WaitFor(deadline(t), 2), "the retry is sent at its instant")
		require.Eventually(t, func() bool {
			return e.occurrences(failing.ID)[0].Status == model.OccurrenceCompleted
		}, 50*time.Second, 5*time.Millisecond)
	})
}

// lapseClaims has a dead worker claim the due row and the rescuer return
// it, n times: an instance cut from the database after its claim.
func lapseClaims(t *testing.T, e *env, s *repository.Store, n int) {
	t.Helper()
	for i := range n {
		_, err := s.ClaimDue(context.Background(), repository.ClaimRequest{Now: e.clock.Now(), Limit: 1,
			Token: fmt.Sprintf("dead-%d", i), LeaseUntil: e.clock.Now().Add(time.Minute)})
		require.NoError(t, err)
		e.clock.Advance(2 * time.Minute)
		rescued, err := e.resc.RunOnce(deadline(t))
		require.NoError(t, err)
		require.Equal(t, 1, rescued)
	}
}

// Claims that lapsed with nothing recorded are the deployment's fault, not
// the receiver's: an event allowed one attempt is still delivered after
// three of them, under the next attempt number.
func TestLapsedClaimsDoNotUseUpTheRetryBudget(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		e := newEnv(t, s, testConfig())
		ev := e.create(e.event(func(ev *model.Event) { one := 1; ev.Retry = &model.Retry{MaxAttempts: &one} }))
		e.clock.Set(t0.Add(time.Minute))
		lapseClaims(t, e, s, 3)

		require.Equal(t, 1, e.dispatch())
		occ := e.occurrences(ev.ID)[0]
		require.Equal(t, model.OccurrenceCompleted, occ.Status)
		got := e.recv.Deliveries()
		require.Len(t, got, 1)
		require.Equal(t, occ.ID, got[0].WebhookID)
		attempts, err := s.ListAttempts(context.Background(), occ.ID)
		require.NoError(t, err)
		require.Len(t, attempts, 1)
		require.Equal(t, 4, attempts[0].Attempt, "the attempt numbers of the lapsed claims are not reused")
	})
}

// Past the free lapses a lapse is charged: a row whose claims keep lapsing
// ends failed without another send once its budget is spent.
func TestRowClaimedAfterItsLastAttemptFailsWithoutSending(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		e := newEnv(t, s, testConfig())
		ev := e.create(e.event(func(ev *model.Event) { one := 1; ev.Retry = &model.Retry{MaxAttempts: &one} }))
		e.clock.Set(t0.Add(time.Minute))
		lapseClaims(t, e, s, repository.MaxFreeLapses+1)

		require.Equal(t, 1, e.dispatch())
		occ := e.occurrences(ev.ID)[0]
		require.Equal(t, model.OccurrenceFailed, occ.Status)
		require.Contains(t, *occ.ErrorMessage, "attempts exhausted")
		require.Empty(t, e.recv.Deliveries())
	})
}

func TestEditWhileHeldCancelsAnInstantNoLongerInTheSeries(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		e := newEnv(t, s, testConfig())
		ev := e.create(e.event(every10m))
		e.clock.Set(t0.Add(11*time.Minute - 100*time.Millisecond))
		n, err := e.disp.RunOnce(deadline(t))
		require.NoError(t, err)
		require.Equal(t, 2, n, "+1 (overdue) and +11 (held)")
		require.NoError(t, e.recv.WaitFor(deadline(t), 1))
		require.NoError(t, e.clock.WaitForWaiters(deadline(t), 1))
		// The schedule changes to every 20 minutes: +11 no longer belongs.
		cur, err := s.GetEvent(ctx, ev.ID)
		require.NoError(t, err)
		cur.RRule = ptr("FREQ=MINUTELY;INTERVAL=20")
		require.NoError(t, s.UpdateEvent(ctx, &cur, cur.Version))
		e.clock.Advance(100 * time.Millisecond)
		require.NoError(t, e.disp.Wait(deadline(t)))
		occ := e.occurrences(ev.ID)
		require.Equal(t, model.OccurrenceCompleted, occ[0].Status)
		require.Equal(t, model.OccurrenceCancelled, occ[1].Status)
		require.Contains(t, *occ[1].ErrorMessage, "edited")
		require.Len(t, e.recv.Deliveries(), 1)
	})
}

// Rows read ahead of their instants are read again shortly before them, a
// window of instants at a time, and each still fires at its own instant and
// never before: the one whose event was paused after the read is skipped,
// the others are delivered one by one as their instants come.
func TestRowsReadAheadAreCheckedBeforeTheirInstantsAndFireOnTime(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		e := newEnv(t, s, testConfig())
		offsets := []time.Duration{0, 3 * time.Millisecond, 6 * time.Millisecond, 90 * time.Millisecond}
		ids := make([]string, len(offsets))
		for i, off := range offsets {
			ids[i] = e.create(e.event(func(ev *model.Event) { ev.StartTime = t0.Add(time.Minute + off) })).ID
		}
		paused := e.create(e.event(func(ev *model.Event) { ev.StartTime = t0.Add(time.Minute + 3*time.Millisecond) }))
		e.clock.Set(t0.Add(time.Minute - 150*time.Millisecond)) // claim-ahead 250 ms
		n, err := e.disp.RunOnce(deadline(t))
		require.NoError(t, err)
		require.Equal(t, len(offsets)+1, n, "every row is read within claim-ahead")
		require.NoError(t, e.clock.WaitForWaiters(deadline(t), 1))
		cur := e.reload(paused.ID)
		cur.Status = model.EventPaused
		require.NoError(t, s.UpdateEvent(context.Background(), &cur, cur.Version))

		received := func(want int) {
			t.Helper()
			require.NoError(t, e.recv.WaitFor(deadline(t), want))
			if want < len(offsets) {
				require.NoError(t, e.clock.WaitForWaiters(deadline(t), 1), "the holder waits for the next instant")
			}
			require.Len(t, e.recv.Deliveries(), want, "nothing fires before its instant")
		}
		// Ten milliseconds before the first instant the holder reads again
		// the rows due by that instant, and sends nothing yet.
		e.clock.Set(t0.Add(time.Minute - 10*time.Millisecond))
		require.NoError(t, e.clock.WaitForWaiters(deadline(t), 1))
		require.Empty(t, e.recv.Deliveries())
		for i, off := range offsets {
			e.clock.Set(t0.Add(time.Minute + off))
			received(i + 1)
			require.Equal(t, e.occurrences(ids[i])[0].ID, e.recv.Deliveries()[i].WebhookID, "delivered in instant order")
			if i == 0 {
				// The rows due within ten milliseconds were read again
				// meanwhile: the paused event's is skipped before its instant.
				require.Eventually(t, func() bool {
					st := e.statuses(paused.ID)
					return len(st) == 1 && st[0] == model.OccurrenceSkipped
				}, 50*time.Second, 5*time.Millisecond, "the paused event's row is skipped before its instant")
			}
		}
		require.NoError(t, e.disp.Wait(deadline(t)))
		require.Equal(t, 0, e.occurrences(paused.ID)[0].AttemptCount, "no attempt was made")
	})
}

// Work that can wait (the rollups' folding, the bookkeeping) waits while the
// dispatcher drains a backlog (Behind): a full read of rows already due. A
// full read of rows ahead of their instants is a steady stream on time, and
// is no backlog.
func TestAFullReadIsABacklogOnlyWhenItsRowsAreDue(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		cfg := testConfig()
		cfg.ClaimBatch = 2
		e := newEnv(t, s, cfg)
		for _, at := range []time.Duration{10, 20, 30} {
			e.create(e.event(func(ev *model.Event) { ev.StartTime = t0.Add(time.Minute + at*time.Millisecond) }))
		}
		e.clock.Set(t0.Add(time.Minute - 100*time.Millisecond))
		n, err := e.disp.RunOnce(deadline(t))
		require.NoError(t, err)
		require.Equal(t, 2, n, "a full read, ahead of the instants")
		require.False(t, e.disp.Behind(time.Hour), "rows ahead of their instants are no backlog")

		for range 3 {
			e.create(e.event(func(ev *model.Event) { ev.StartTime = t0.Add(2 * time.Minute) }))
		}
		e.clock.Set(t0.Add(2*time.Minute + time.Second))
		n, err = e.disp.RunOnce(deadline(t))
		require.NoError(t, err)
		require.Equal(t, 2, n, "a full read of rows already due")
		require.True(t, e.disp.Behind(time.Hour), "rows due and more behind them are a backlog")
	})
}

// During a rolling upgrade an instance of the build before migration 0036
// completes a row with a plain update, which notes no held change (an
// owner's outcome never does). The queue's trigger takes the row out all
// the same: the next owner never reads it and sends nothing twice. Its
// neighbour, still waiting, is sent.
func TestARowAnOlderBuildCompletedIsNotSentAgain(t *testing.T) {
	s := repositorytest.Postgres(t)
	e := newEnv(t, s, testConfig())
	done, kept := e.create(e.event(nil)), e.create(e.event(nil))
	_, err := s.DB().Exec(`UPDATE occurrences SET status = 'completed', attempt_count = attempt_count + 1,
		completed_at = $1, updated_at = $1 WHERE event_id = $2`, t0.Add(time.Minute), done.ID)
	require.NoError(t, err)
	e.holdTillInstant(t, 1)
	e.clock.Advance(200 * time.Millisecond)
	require.NoError(t, e.disp.Wait(deadline(t)))
	got := e.recv.Deliveries()
	require.Len(t, got, 1)
	require.Equal(t, e.occurrences(kept.ID)[0].ID, got[0].WebhookID)
	var queued int
	require.NoError(t, s.DB().Get(&queued, `SELECT COUNT(*) FROM occurrence_queue`))
	require.Zero(t, queued)
}
