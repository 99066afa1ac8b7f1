package scheduler_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/repository/repositorytest"
	"github.com/qhronos/qhronos/internal/scheduler"
	"github.com/qhronos/qhronos/internal/scheduler/schedulertest"
)

// leaseConfig has a short lease and no heartbeat of its own within a test:
// the test renews by calling Renew as the clock moves.
func leaseConfig() scheduler.Config {
	cfg := testConfig()
	cfg.Lease = 10 * time.Second
	cfg.LeaseRenewInterval = time.Hour
	return cfg
}

// hangingReceiver holds every request until the returned func is called
// (at the latest at cleanup).
func hangingReceiver(t *testing.T, e *env) (release func()) {
	ch := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(ch) }) }
	t.Cleanup(release)
	e.recv.Respond(func(schedulertest.Delivery, int) schedulertest.Reply {
		<-ch
		return schedulertest.Reply{Status: 200}
	})
	return release
}

// An attempt that runs longer than the lease keeps its row: the heartbeat
// renews the instance's slots, no other instance can take them, and the
// attempt ends with one delivery and one recorded attempt.
func TestOwnershipIsRenewedWhileTheAttemptRuns(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		e := newEnv(t, s, leaseConfig())
		release := hangingReceiver(t, e)
		ev := e.create(e.event(nil))
		e.clock.Set(t0.Add(time.Minute))
		n, err := e.disp.RunOnce(deadline(t))
		require.NoError(t, err)
		require.Equal(t, 1, n)
		require.NoError(t, e.recv.WaitFor(deadline(t), 1))

		other := e.newDispatcher(leaseConfig(), nil)
		for range 6 { // 30 s: three leases
			e.clock.Advance(4 * time.Second)
			require.NoError(t, e.disp.Renew(deadline(t)))
			require.NoError(t, other.Renew(deadline(t)))
			require.Zero(t, dispatchWith(t, other), "the row's slot stays with its sender at %s", e.clock.Now().Sub(t0))
		}
		release()
		require.NoError(t, e.disp.Wait(deadline(t)))
		occ := e.occurrences(ev.ID)[0]
		require.Equal(t, model.OccurrenceCompleted, occ.Status)
		require.Equal(t, 1, occ.AttemptCount)
		require.Len(t, e.recv.Deliveries(), 1)
		attempts, err := s.ListAttempts(context.Background(), occ.ID)
		require.NoError(t, err)
		require.Len(t, attempts, 1)
	})
}

// A worker that stalls past its lease loses its slots to another instance,
// which sends the row again (the same delivery id); the stale attempt's
// outcome is refused by the slot's new epoch: one final state, the new
// owner's.
func TestOutcomeUnderALostSlotIsNotRecorded(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		e := newEnv(t, s, leaseConfig())
		release := make(chan struct{})
		e.recv.Respond(func(_ schedulertest.Delivery, n int) schedulertest.Reply {
			if n == 1 {
				<-release // the stalled worker's attempt
				return schedulertest.Reply{Status: 500}
			}
			return schedulertest.Reply{Status: 200}
		})
		ev := e.create(e.event(nil))
		e.clock.Set(t0.Add(time.Minute))
		n, err := e.disp.RunOnce(deadline(t))
		require.NoError(t, err)
		require.Equal(t, 1, n)
		require.NoError(t, e.recv.WaitFor(deadline(t), 1))

		// No renewal for longer than the lease: another instance takes the
		// slots and delivers.
		e.clock.Advance(11 * time.Second)
		other := e.newDispatcher(leaseConfig(), nil)
		require.Equal(t, 1, dispatchWith(t, other))
		occ := e.occurrences(ev.ID)[0]
		require.Equal(t, model.OccurrenceCompleted, occ.Status)

		close(release)
		require.NoError(t, e.disp.Wait(deadline(t)))
		require.Zero(t, e.disp.Held())

		got, err := s.GetOccurrence(context.Background(), occ.ID)
		require.NoError(t, err)
		require.Equal(t, model.OccurrenceCompleted, got.Status, "the stale worker's failure is not written")
		require.Equal(t, 1, got.AttemptCount)
		attempts, err := s.ListAttempts(context.Background(), occ.ID)
		require.NoError(t, err)
		require.Len(t, attempts, 1, "only the new owner's attempt")
		require.Equal(t, "completed", attempts[0].Outcome)
		require.Equal(t, 2, len(e.recv.Deliveries()), "both deliveries carried the same id")
		require.Equal(t, occ.ID, e.recv.Deliveries()[1].WebhookID)

		// The stalled instance, back, finds its slots gone.
		require.NoError(t, e.disp.Renew(deadline(t)))
		require.Zero(t, dispatchWith(t, e.disp))
	})
}

// cancelOnClaim ends the dispatcher's context right after a read: the
// read of the events that follows it fails, as a dropped connection would.
type cancelOnClaim struct{ cancel context.CancelFunc }

func (o cancelOnClaim) ObserveClaim(int)                               { o.cancel() }
func (cancelOnClaim) ObserveExpansion(time.Duration, error)            {}
func (cancelOnClaim) ObserveEnded(model.OccurrenceStatus, string, int) {}

// A read whose follow-up read of the events fails lets its batch go at
// once, nothing written, no attempt counted or recorded: the next read fires
// it without any time passing.
func TestFailedReadAfterTheDueReadLetsTheBatchGo(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		e := newEnv(t, s, leaseConfig())
		var evs []*model.Event
		for range 3 {
			evs = append(evs, e.create(e.event(nil)))
		}
		e.clock.Set(t0.Add(time.Minute))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		cfg := leaseConfig()
		cfg.InstanceID = "failing"
		failing := scheduler.NewDispatcher(cfg, scheduler.DispatcherDeps{Store: s, Registry: registry(t, e.clock),
			Clock: e.clock, Observer: cancelOnClaim{cancel}})
		t.Cleanup(failing.Close)
		n, err := failing.RunOnce(ctx)
		require.Error(t, err)
		require.Equal(t, 3, n, "the read itself succeeded")
		require.Zero(t, failing.Held())
		for _, ev := range evs {
			occ := e.occurrences(ev.ID)[0]
			require.Equal(t, model.OccurrencePending, occ.Status)
			require.Zero(t, occ.AttemptCount, "the failed read is not an attempt")
			attempts, err := s.ListAttempts(context.Background(), occ.ID)
			require.NoError(t, err)
			require.Empty(t, attempts)
		}
		// It could send them at once; here it stops, and its slots go to
		// the next instance at once, with the same instant on the clock.
		failing.Close()
		require.Equal(t, 3, e.dispatch())
		for _, ev := range evs {
			occ := e.occurrences(ev.ID)[0]
			require.Equal(t, model.OccurrenceCompleted, occ.Status)
			require.Equal(t, 1, occ.AttemptCount)
		}
		require.Len(t, e.recv.Deliveries(), 3)
	})
}

// With the default lease, work stranded by a process that died while it
// owned the slots is delivered by another instance within 30 s of the
// crash, and never before the dead process's lease expired.
func TestWorkOfACrashedInstanceIsDeliveredWithin30Seconds(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		cfg := testConfig() // default lease, renewal and rescue interval
		e := newEnv(t, s, cfg)
		var evs []*model.Event
		for range 5 {
			evs = append(evs, e.create(e.event(nil)))
		}
		crash := t0.Add(time.Minute)
		e.clock.Set(crash)
		// The dead process's slots, renewed just before it died.
		taken, err := s.AcquireSlots(context.Background(), "dead", allSlots(), crash, crash.Add(scheduler.DefaultLease), false)
		require.NoError(t, err)
		require.Len(t, taken, model.Slots)

		// The survivor's dispatcher, polling every max_sleep.
		for e.clock.Now().Sub(crash) < 30*time.Second && len(e.recv.Deliveries()) < 5 {
			e.clock.Advance(500 * time.Millisecond)
			e.dispatch()
		}
		took := e.clock.Now().Sub(crash)
		require.Len(t, e.recv.Deliveries(), 5, "delivered %s after the crash", took)
		require.Less(t, took, 30*time.Second)
		require.GreaterOrEqual(t, took, scheduler.DefaultLease, "not before the dead process's lease expired")
		for _, ev := range evs {
			require.Equal(t, model.OccurrenceCompleted, e.occurrences(ev.ID)[0].Status)
		}
	})
}

func allSlots() []int {
	out := make([]int, model.Slots)
	for i := range out {
		out[i] = i
	}
	return out
}

// The embedded server restarted after kill -9 owns its database alone: it
// takes the slots of its dead predecessor at once (not after their lease),
// and its rescuer's first run returns rows an older version's per-row
// lease still holds; later runs only expired ones.
func TestExclusiveInstancePicksUpAKilledPredecessorsWorkAtStart(t *testing.T) {
	s := repositorytest.SQLite(t)
	cfg := leaseConfig()
	cfg.Exclusive = true
	e := newEnv(t, s, cfg)
	ev := e.create(e.event(nil))
	legacy := e.create(e.event(nil))
	other := e.create(e.event(func(ev *model.Event) { ev.StartTime = t0.Add(2 * time.Minute) }))
	e.clock.Set(t0.Add(time.Minute))
	_, err := s.AcquireSlots(context.Background(), "killed", allSlots(), e.clock.Now(), e.clock.Now().Add(time.Hour), false)
	require.NoError(t, err)
	// A row claimed by an instance of the previous version (per-row lease).
	claimed, err := s.ClaimDue(context.Background(), repository.ClaimRequest{Now: e.clock.Now(), Limit: 1,
		Owner: "killed", Token: "killed", LeaseUntil: e.clock.Now().Add(time.Hour)})
	require.NoError(t, err)
	require.Len(t, claimed, 1)

	n, err := e.resc.RunOnce(deadline(t))
	require.NoError(t, err)
	require.Equal(t, 1, n, "the predecessor's claim is back at start")
	require.Equal(t, 2, e.dispatch(), "the predecessor's slots are taken at once")
	require.Equal(t, model.OccurrenceCompleted, e.occurrences(ev.ID)[0].Status)
	require.Equal(t, model.OccurrenceCompleted, e.occurrences(legacy.ID)[0].Status)

	e.clock.Set(t0.Add(2 * time.Minute))
	_, err = s.ClaimDue(context.Background(), repository.ClaimRequest{Now: e.clock.Now(), Limit: 10,
		Owner: "test", Token: "live", LeaseUntil: e.clock.Now().Add(time.Hour)})
	require.NoError(t, err)
	n, err = e.resc.RunOnce(deadline(t))
	require.NoError(t, err)
	require.Zero(t, n, "after start only expired leases are rescued")
	require.Equal(t, model.OccurrenceDispatching, e.occurrences(other.ID)[0].Status)
}

// A process that stalls past its lease (a SIGSTOP, here a wait for the
// destination's only slot while the clock passes the lease) sends nothing
// it no longer owns when it wakes: ownership is checked right before the
// send, so the row another instance may own now is not delivered twice.
func TestStalledAttemptDoesNotSendAfterItsLeaseLapsed(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		cfg := leaseConfig()
		cfg.MaxPerDestination = 1
		e := newEnv(t, s, cfg)
		release := hangingReceiver(t, e)
		e.create(e.event(nil))
		e.create(e.event(nil))
		e.clock.Set(t0.Add(time.Minute))
		n, err := e.disp.RunOnce(deadline(t))
		require.NoError(t, err)
		require.Equal(t, 2, n)
		require.NoError(t, e.recv.WaitFor(deadline(t), 1), "one is sent, the other waits for the slot")

		e.clock.Advance(11 * time.Second) // past the 10 s lease, no renewal
		release()
		require.NoError(t, e.disp.Wait(deadline(t)))
		require.Len(t, e.recv.Deliveries(), 1, "the waiting row's slot lapsed: it is not sent")
		require.Zero(t, e.disp.Held())
	})
}

// A pause that ends a row while its delivery is under way (nothing in
// the row says so) keeps the row skipped, as asked, and the delivery's
// attempt in its history: it happened.
func TestPauseDuringADeliveryKeepsItsAttempt(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		e := newEnv(t, s, leaseConfig())
		release := hangingReceiver(t, e)
		ev := e.create(e.event(nil))
		e.clock.Set(t0.Add(time.Minute))
		n, err := e.disp.RunOnce(deadline(t))
		require.NoError(t, err)
		require.Equal(t, 1, n)
		require.NoError(t, e.recv.WaitFor(deadline(t), 1))

		e.pause(ev.ID)
		occ := e.occurrences(ev.ID)[0]
		require.Equal(t, model.OccurrenceSkipped, occ.Status)
		release()
		require.NoError(t, e.disp.Wait(deadline(t)))

		after := e.occurrences(ev.ID)[0]
		require.Equal(t, model.OccurrenceSkipped, after.Status, "the pause's decision stands")
		attempts, err := s.ListAttempts(context.Background(), occ.ID)
		require.NoError(t, err)
		require.Len(t, attempts, 1, "the delivery under way is in the history")
		require.Equal(t, "completed", attempts[0].Outcome)
		require.Len(t, e.recv.Deliveries(), 1)
	})
}
