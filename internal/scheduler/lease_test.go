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
// the test renews by calling RenewLeases as the clock moves.
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
// renews it, the rescuer leaves it alone, and it ends with one delivery and
// one recorded attempt.
func TestLeaseIsRenewedWhileTheAttemptRuns(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		e := newEnv(t, s, leaseConfig())
		release := hangingReceiver(t, e)
		ev := e.create(e.event(nil))
		e.clock.Set(t0.Add(time.Minute))
		n, err := e.disp.RunOnce(deadline(t))
		require.NoError(t, err)
		require.Equal(t, 1, n)
		require.NoError(t, e.recv.WaitFor(deadline(t), 1))

		for range 6 { // 30 s: three leases
			e.clock.Advance(4 * time.Second)
			renewed, lost, err := e.disp.RenewLeases(deadline(t))
			require.NoError(t, err)
			require.Equal(t, 1, renewed)
			require.Zero(t, lost)
			rescued, err := e.resc.RunOnce(deadline(t))
			require.NoError(t, err)
			require.Zero(t, rescued, "a renewed lease is not rescued at %s", e.clock.Now().Sub(t0))
		}
		release()
		require.NoError(t, e.disp.Wait(deadline(t)))
		occ := e.occurrences(ev.ID)[0]
		require.Equal(t, model.OccurrenceCompleted, occ.Status)
		require.Len(t, e.recv.Deliveries(), 1)
		attempts, err := s.ListAttempts(context.Background(), occ.ID)
		require.NoError(t, err)
		require.Len(t, attempts, 1)
		renewed, _, err := e.disp.RenewLeases(deadline(t))
		require.NoError(t, err)
		require.Zero(t, renewed, "nothing is held once the outcome is written")
	})
}

// A worker that stalls past its lease loses the row to another instance;
// its heartbeat then finds the lease lost and the stale attempt's outcome is
// not recorded: one final state, the new holder's.
func TestLostLeaseIsNotRecorded(t *testing.T) {
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

		// No renewal for longer than the lease: another instance rescues
		// and delivers.
		e.clock.Advance(11 * time.Second)
		rescued, err := e.resc.RunOnce(deadline(t))
		require.NoError(t, err)
		require.Equal(t, 1, rescued)
		other := e.newDispatcher(leaseConfig(), nil)
		require.Equal(t, 1, dispatchWith(t, other))
		occ := e.occurrences(ev.ID)[0]
		require.Equal(t, model.OccurrenceCompleted, occ.Status)

		renewed, lost, err := e.disp.RenewLeases(deadline(t))
		require.NoError(t, err)
		require.Zero(t, renewed)
		require.Equal(t, 1, lost)
		close(release)
		require.NoError(t, e.disp.Wait(deadline(t)))
		require.Zero(t, e.disp.Held())

		got, err := s.GetOccurrence(context.Background(), occ.ID)
		require.NoError(t, err)
		require.Equal(t, model.OccurrenceCompleted, got.Status, "the stale worker's failure is not written")
		attempts, err := s.ListAttempts(context.Background(), occ.ID)
		require.NoError(t, err)
		require.Len(t, attempts, 1, "only the new holder's attempt")
		require.Equal(t, 2, attempts[0].Attempt)
		require.Equal(t, "completed", attempts[0].Outcome)
		require.Equal(t, 2, len(e.recv.Deliveries()), "both deliveries carried the same id")
		require.Equal(t, occ.ID, e.recv.Deliveries()[1].WebhookID)
	})
}

// cancelOnClaim ends the dispatcher's context right after a claim: the
// read that follows it fails, as a dropped connection would.
type cancelOnClaim struct{ cancel context.CancelFunc }

func (o cancelOnClaim) ObserveClaim(int)                               { o.cancel() }
func (cancelOnClaim) ObserveExpansion(time.Duration, error)            {}
func (cancelOnClaim) ObserveEnded(model.OccurrenceStatus, string, int) {}

// A claim whose follow-up read fails hands its batch back at once, its
// attempt uncounted and no attempt recorded, instead of stranding it for a
// lease: the next claim fires it without any time passing.
func TestFailedReadAfterClaimReleasesTheBatch(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		e := newEnv(t, s, leaseConfig())
		var evs []*model.Event
		for range 3 {
			evs = append(evs, e.create(e.event(nil)))
		}
		e.clock.Set(t0.Add(time.Minute))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		failing := scheduler.NewDispatcher(leaseConfig(), scheduler.DispatcherDeps{Store: s, Registry: registry(t, e.clock),
			Clock: e.clock, Observer: cancelOnClaim{cancel}})
		t.Cleanup(failing.Close)
		n, err := failing.RunOnce(ctx)
		require.Error(t, err)
		require.Equal(t, 3, n, "the claim itself succeeded")
		require.Zero(t, failing.Held())
		for _, ev := range evs {
			occ := e.occurrences(ev.ID)[0]
			require.Equal(t, model.OccurrencePending, occ.Status)
			require.Zero(t, occ.AttemptCount, "the failed claim is not an attempt")
			require.Nil(t, occ.LeaseToken)
			attempts, err := s.ListAttempts(context.Background(), occ.ID)
			require.NoError(t, err)
			require.Empty(t, attempts)
		}

		require.Equal(t, 3, e.dispatch(), "claimable again at once, at the same instant")
		for _, ev := range evs {
			occ := e.occurrences(ev.ID)[0]
			require.Equal(t, model.OccurrenceCompleted, occ.Status)
			require.Equal(t, 1, occ.AttemptCount)
		}
		require.Len(t, e.recv.Deliveries(), 3)
	})
}

// With the default lease and rescue interval, work stranded by a process
// that died right after claiming (and renewing) is delivered by another
// instance within 30 s of the crash, and never before its instant.
func TestCrashedClaimIsDeliveredWithin30Seconds(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		cfg := testConfig() // default lease, renewal and rescue interval
		e := newEnv(t, s, cfg)
		var evs []*model.Event
		for range 5 {
			evs = append(evs, e.create(e.event(nil)))
		}
		crash := t0.Add(time.Minute)
		e.clock.Set(crash)
		// The dead process's claim and its last renewal, just before it died.
		got, err := s.ClaimDue(context.Background(), repository.ClaimRequest{Now: crash, Limit: 10, Owner: "dead",
			Token: "dead", LeaseUntil: crash})
		require.NoError(t, err)
		require.Len(t, got, 5)
		held := make([]repository.LeaseKey, len(got))
		for i, o := range got {
			held[i] = repository.LeaseKey{ID: o.ID, Token: "dead"}
		}
		_, err = s.RenewLeases(context.Background(), held, crash.Add(scheduler.DefaultLease))
		require.NoError(t, err)

		// The survivor's loops: the rescuer every rescue interval, the
		// dispatcher polling every max_sleep.
		nextRescue := crash.Add(scheduler.DefaultRescueInterval)
		for e.clock.Now().Sub(crash) < 30*time.Second && len(e.recv.Deliveries()) < 5 {
			e.clock.Advance(500 * time.Millisecond)
			if !e.clock.Now().Before(nextRescue) {
				_, err := e.resc.RunOnce(deadline(t))
				require.NoError(t, err)
				nextRescue = nextRescue.Add(scheduler.DefaultRescueInterval)
			}
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

// The embedded server restarted after kill -9 owns its database alone: its
// rescuer's first run returns the dead predecessor's unexpired leases at
// once (not after the lease), and later runs only expired ones.
func TestExclusiveRescuerPicksUpAKilledPredecessorsWorkAtStart(t *testing.T) {
	s := repositorytest.SQLite(t)
	cfg := leaseConfig()
	cfg.Exclusive = true
	e := newEnv(t, s, cfg)
	ev := e.create(e.event(nil))
	other := e.create(e.event(func(ev *model.Event) { ev.StartTime = t0.Add(2 * time.Minute) }))
	e.clock.Set(t0.Add(time.Minute))
	_, err := s.ClaimDue(context.Background(), repository.ClaimRequest{Now: e.clock.Now(), Limit: 10,
		Owner: "killed", Token: "killed", LeaseUntil: e.clock.Now().Add(time.Hour)})
	require.NoError(t, err)

	n, err := e.resc.RunOnce(deadline(t))
	require.NoError(t, err)
	require.Equal(t, 1, n, "the predecessor's claim is back at start")
	require.Equal(t, 1, e.dispatch())
	require.Equal(t, model.OccurrenceCompleted, e.occurrences(ev.ID)[0].Status)

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
// it no longer holds when it wakes: the lease is checked right before the
// send, so the row another instance now holds is not delivered twice.
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
		require.Len(t, e.recv.Deliveries(), 1, "the waiting row's lease lapsed: it is not sent")
		require.Zero(t, e.disp.Held())
	})
}
