package scheduler_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/scheduler/schedulertest"
)

// A tenant whose receiver hangs fills the dispatcher's claim capacity with
// rows waiting for its share of the workers; once its share has stalled,
// those rows go back to the store, uncounted, so another tenant's row due
// a second later is still claimed and delivered while the first tenant's
// attempts hang.
func TestStalledTenantsRowsMakeRoomForAnother(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		cfg := testConfig()
		cfg.Workers, cfg.ClaimBatch = 4, 4 // at most 2*4+4 = 12 rows held
		cfg.ScopeShare, cfg.DestinationShare = 0.5, 0.5
		// Attempts that hang longer than the test waits: waiting out their
		// timeout is not how the rows may make room.
		cfg.AttemptTimeout, cfg.MaxTimeout = 10*time.Minute, 10*time.Minute
		e := newEnv(t, s, cfg)
		hang := make(chan struct{})
		t.Cleanup(func() { close(hang) })
		e.recv.Respond(func(schedulertest.Delivery, int) schedulertest.Reply {
			<-hang
			return schedulertest.Reply{Status: 200}
		})
		other := schedulertest.NewReceiver(t)
		var hogIDs []string
		for range 12 {
			ev := e.create(e.event(func(ev *model.Event) { ev.KeyScope, ev.Tags = "tags:hog", []string{"hog"} }))
			hogIDs = append(hogIDs, ev.ID)
		}
		params, _ := json.Marshal(map[string]string{"url": other.URL + "/hook"})
		otherEv := e.create(e.event(func(ev *model.Event) {
			ev.KeyScope, ev.Tags, ev.StartTime = "tags:other", []string{"other"}, t0.Add(time.Minute+time.Second)
			ev.Action.Params = params
		}))

		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		e.clock.Set(t0.Add(time.Minute))
		claimed := 0
		for range 4 {
			n, err := e.disp.RunOnce(ctx)
			require.NoError(t, err)
			claimed += n
		}
		require.Equal(t, 12, claimed, "the hog's rows fill the claim capacity")
		// Two attempts hang (the tenant's share), ten wait for it.
		require.Eventually(t, func() bool { return e.disp.WaitingForShares() == 10 }, 30*time.Second,
			time.Millisecond, "ten attempts wait for the hog's share")
		require.Equal(t, 2, e.disp.Shares().Busy)

		// The share stalls and the other row is due: waiting rows go back
		// until the next claim has room (a claim of at least 2 rows).
		e.clock.Advance(time.Second)
		// Within 20 s: a hanging request ends after 30 s (the outbound
		// client's response-header timeout), which must not be what frees
		// the room.
		require.Eventually(t, func() bool { return e.disp.Held() <= 12-2 }, 20*time.Second, time.Millisecond,
			"waiting rows went back")
		n, err := e.disp.RunOnce(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, n, "the other tenant's row is claimed")
		require.NoError(t, other.WaitFor(ctx, 1), "and delivered while the hog's attempts hang")
		require.Eventually(t, func() bool {
			return e.statuses(otherEv.ID)[0] == model.OccurrenceCompleted
		}, 60*time.Second, 5*time.Millisecond, "its outcome is recorded")

		// The hog's rows that went back are due later, no attempt counted,
		// when its running attempts reach their deadline; the two in
		// flight are still pending as they were read.
		back := 0
		for _, id := range hogIDs {
			occ := e.occurrences(id)[0]
			require.Equal(t, model.OccurrencePending, occ.Status)
			require.Zero(t, occ.AttemptCount)
			if occ.ErrorMessage != nil {
				back++
				require.False(t, occ.NextAttemptAt.Before(t0.Add(time.Minute+2*time.Second)), "due later, not at once")
				require.Contains(t, *occ.ErrorMessage, "share of the workers")
			}
		}
		require.GreaterOrEqual(t, back, 2)
	})
}

// An attempt that waited for its destination's share sends with its whole
// timeout: the wait does not eat into it. A receiver that takes 3 s of a
// 5 s timeout gets two rows due together through a share of one; the
// second, sent after a 3 s wait, completes instead of timing out while the
// receiver works on it (a duplicate charged to its retry budget).
func TestWaitForAShareLeavesTheWholeTimeout(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		cfg := testConfig()
		cfg.Workers, cfg.ClaimBatch = 2, 2
		cfg.ScopeShare, cfg.DestinationShare = 1, 0.5 // one attempt at a time to the receiver
		cfg.AttemptTimeout, cfg.MaxTimeout = 5*time.Second, 5*time.Second
		e := newEnv(t, s, cfg)
		e.recv.Respond(func(schedulertest.Delivery, int) schedulertest.Reply {
			time.Sleep(3 * time.Second) // the receiver's own work
			return schedulertest.Reply{Status: 200}
		})
		first := e.create(e.event(nil))
		second := e.create(e.event(nil))

		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		e.clock.Set(t0.Add(time.Minute))
		n, err := e.disp.RunOnce(ctx)
		require.NoError(t, err)
		require.Equal(t, 2, n)
		require.NoError(t, e.recv.WaitFor(ctx, 2))
		for _, id := range []string{first.ID, second.ID} {
			require.Eventually(t, func() bool {
				return e.statuses(id)[0] == model.OccurrenceCompleted
			}, 60*time.Second, 5*time.Millisecond, "both rows complete at their first attempt")
			require.Equal(t, 1, e.occurrences(id)[0].AttemptCount)
		}
	})
}

// A lone tenant whose receiver answers is not held to its share while the
// rest of the pool idles: with a share of 2 of 8 workers, once its first
// attempts have ended it runs up to 6 at once (a quarter of the pool stays
// free). The receiver answers its first two requests at once, then holds
// every request until 6 run together (or a generous deadline passes).
func TestALoneTenantBorrowsIdleWorkers(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		cfg := testConfig()
		cfg.Workers, cfg.ClaimBatch = 8, 8
		cfg.ScopeShare, cfg.DestinationShare = 0.25, 1
		e := newEnv(t, s, cfg)
		var mu sync.Mutex
		arrived, running, most := 0, 0, 0
		gate, opened := make(chan struct{}), sync.Once{}
		open := func() { opened.Do(func() { close(gate) }) }
		// The first two attempts end quickly, each once the next has
		// arrived: the tenant's share then never empties, so the attempts'
		// ends are remembered as its progress (an emptied share forgets
		// them, and on a busy machine both could end before a third began).
		next := []chan struct{}{make(chan struct{}), make(chan struct{}), make(chan struct{})}
		e.recv.Respond(func(schedulertest.Delivery, int) schedulertest.Reply {
			mu.Lock()
			arrived++
			running++
			most = max(most, running)
			k, six := arrived, most == 6
			mu.Unlock()
			if k <= len(next) {
				close(next[k-1])
			}
			if six {
				open()
			}
			wait := gate
			if k <= 2 {
				wait = next[k]
			}
			select {
			case <-wait:
			case <-time.After(30 * time.Second): // never 6 at once: let the rest through
				open()
			}
			mu.Lock()
			running--
			mu.Unlock()
			return schedulertest.Reply{Status: 200}
		})
		const n = 60
		for range n {
			e.create(e.event(nil))
		}
		e.clock.Set(t0.Add(time.Minute))
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		for delivered := 0; delivered < n; {
			got, err := e.disp.RunOnce(ctx)
			require.NoError(t, err)
			delivered += got
			require.NoError(t, e.disp.Wait(ctx))
		}
		require.NoError(t, e.recv.WaitFor(ctx, n))
		mu.Lock()
		defer mu.Unlock()
		require.Greater(t, most, 2, "more attempts at once than the tenant's share")
		require.LessOrEqual(t, most, 6, "a quarter of the pool stays free")
	})
}
