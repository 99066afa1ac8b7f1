package scheduler_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/scheduler"
)

// endedCounts records ObserveEnded.
type endedCounts struct {
	mu sync.Mutex
	n  map[string]int
}

func (o *endedCounts) ObserveClaim(int)                      {}
func (o *endedCounts) ObserveExpansion(time.Duration, error) {}
func (o *endedCounts) ObserveEnded(status model.OccurrenceStatus, reason string, n int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.n[string(status)+"/"+reason] += n
}

func TestLedgerCountsDecisionsOnceTheirInstantPassed(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		e := newEnv(t, s, testConfig())
		ev := e.create(e.event(every10m)) // +1, +11, +21, …
		e.pause(ev.ID)
		obs := &endedCounts{n: map[string]int{}}
		ledger := scheduler.NewLedger(s, e.clock, nil, "test", time.Second, obs)

		e.clock.Advance(15 * time.Minute)
		n, err := ledger.RunOnce(context.Background())
		require.NoError(t, err)
		require.Equal(t, 2, n, "+1 and +11 passed while paused")

		e.resume(ev.ID) // the rows still ahead are reinstated: never counted
		e.clock.Advance(20 * time.Minute)
		n, err = ledger.RunOnce(context.Background())
		require.NoError(t, err)
		require.Zero(t, n)
		require.Equal(t, map[string]int{"skipped/paused": 2}, obs.n)
	})
}
