package scheduler_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/actions"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/repository/repositorytest"
	"github.com/qhronos/qhronos/internal/scheduler"
	"github.com/qhronos/qhronos/internal/scheduler/schedulertest"
)

// postgresStores opens n stores (n pools, as n instances would) on one fresh
// schema.
func postgresStores(t *testing.T, n int) []*repository.Store {
	t.Helper()
	url := repositorytest.MigratedPostgresSchema(t)
	var out []*repository.Store
	for range n {
		s, err := repository.OpenPostgres(context.Background(), url, repository.Options{MaxOpenConns: 4, ConnectTimeout: 5 * time.Second})
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		out = append(out, s)
	}
	_, err := out[0].Migrate(context.Background())
	require.NoError(t, err)
	return out
}

func TestThreeDispatchersDeliverEachOccurrenceOnce(t *testing.T) {
	t.Parallel()
	stores := postgresStores(t, 3)
	e := newEnv(t, stores[0], testConfig())
	// Thirty one-time events due within a few ms, plus a secondly series.
	for i := range 30 {
		e.create(e.event(func(ev *model.Event) { ev.StartTime = t0.Add(time.Minute + time.Duration(i%3)*time.Millisecond) }))
	}
	series := e.create(e.event(func(ev *model.Event) { ev.RRule = ptr("FREQ=SECONDLY;COUNT=90") }))
	e.clock.Set(t0.Add(3 * time.Minute))

	cfg := testConfig()
	cfg.ClaimBatch = 7 // many small claims so that the instances interleave
	var wg sync.WaitGroup
	for i, s := range stores {
		name := "instance-" + string(rune('a'+i))
		cfg.InstanceID = name
		d := scheduler.NewDispatcher(cfg, scheduler.DispatcherDeps{Store: s, Registry: registry(t, e.clock),
			Clock: e.clock, Rand: func() float64 { return 0.5 }})
		t.Cleanup(d.Close)
		wg.Add(1)
		go func() {
			defer wg.Done()
			// An instance that reads nothing may only be waiting for the
			// slots the balance gives it (another instance hands them over
			// once it has recorded what it sent): it renews and reads again
			// until no row is left waiting anywhere (a generous deadline:
			// a busy machine slows every round, never the outcome).
			giveUp := time.Now().Add(3 * time.Minute)
			for time.Now().Before(giveUp) {
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				n, err := d.RunOnce(ctx)
				if err == nil {
					err = d.Wait(ctx)
				}
				if err == nil && n == 0 {
					var left int
					if left, err = waiting(ctx, s); err == nil && left == 0 {
						cancel()
						return
					}
					if err == nil {
						// Renewing is what takes over the slots handed
						// over meanwhile; the next read finds their rows.
						err = d.Renew(ctx)
					}
				}
				cancel()
				if err != nil {
					t.Errorf("dispatch: %v", err)
					return
				}
			}
			t.Errorf("%s: rows still waiting after 3 minutes", name)
		}()
	}
	wg.Wait()
	counts := e.recv.Count()
	require.Len(t, counts, 120, "every occurrence delivered")
	for id, n := range counts {
		if n != 1 {
			t.Errorf("occurrence %s delivered %d times, want once", id, n)
		}
	}
	left, err := waiting(context.Background(), stores[0])
	require.NoError(t, err)
	require.Zero(t, left)
	e.awaitEvent(series.ID, inactive, "the series ended and every instance recorded its share")
}

// waiting counts the rows not finished yet, in flight included (their rows
// stay pending until recorded).
func waiting(ctx context.Context, s *repository.Store) (int, error) {
	return s.CountOccurrences(ctx, model.OccurrenceFilter{Unrestricted: true,
		Status: []model.OccurrenceStatus{"pending", "retrying", "dispatching"}})
}

// gate is a test action, its own delivery, that blocks each attempt until
// released: a worker stalled mid-delivery (SIGSTOP) past its lease.
type gate struct {
	started chan string
	release chan struct{}
}

func (g *gate) Type() string                                      { return "webhook" }
func (g *gate) Prepare(json.RawMessage) (actions.Delivery, error) { return g, nil }
func (g *gate) Destination() string                               { return "" }
func (g *gate) AckTimeout() time.Duration                         { return 0 }
func (g *gate) Execute(ctx context.Context, req actions.Request) actions.Outcome {
	g.started <- req.OccurrenceID
	<-g.release
	return actions.Outcome{StatusCode: 200}
}

func TestStalledWorkerPastItsLeaseCannotOverwriteTheOutcome(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		e := newEnv(t, s, testConfig())
		e.recv.Respond(func(d schedulertest.Delivery, n int) schedulertest.Reply { return schedulertest.Reply{Status: 500} })
		g := &gate{started: make(chan string, 1), release: make(chan struct{})}
		reg := actions.NewRegistry()
		require.NoError(t, reg.Register(g))
		stalled := e.newDispatcher(testConfig(), reg)
		ev := e.create(e.event(nil))
		e.clock.Set(t0.Add(time.Minute))
		_, err := stalled.RunOnce(deadline(t))
		require.NoError(t, err)
		select {
		case <-g.started:
		case <-deadline(t).Done():
			t.Fatal("the stalled worker never started its attempt")
		}

		// Its slots' leases expire; a healthy instance takes them and its
		// receiver fails the attempt.
		e.clock.Advance(3 * time.Minute)
		require.Equal(t, 1, e.dispatch())
		occ := e.occurrences(ev.ID)[0]
		require.Equal(t, model.OccurrenceRetrying, occ.Status)

		// The stalled worker wakes up with a success: refused by the fence.
		close(g.release)
		require.NoError(t, stalled.Wait(deadline(t)))
		after := e.occurrences(ev.ID)[0]
		require.Equal(t, model.OccurrenceRetrying, after.Status, "one final state: the slot owner's")
		require.Equal(t, occ.NextAttemptAt, after.NextAttemptAt)
		attempts, err := s.ListAttempts(context.Background(), occ.ID)
		require.NoError(t, err)
		require.Len(t, attempts, 1, "the refused write recorded no attempt")
		require.Equal(t, 1, attempts[0].Attempt, "the stalled worker's attempt was never recorded")
	})
}
