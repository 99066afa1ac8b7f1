package scheduler

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The hold limit follows the rate measured while saturated, within its
// bounds, and falls back to the ceiling when the instance stops being busy.
func TestDrainPaceLimit(t *testing.T) {
	const workers, floor, ceiling = 64, 314, 1064
	hold := 1500 * time.Millisecond
	var p drainPace
	t0 := time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC)
	require.Equal(t, ceiling, p.limit(hold, floor, ceiling), "unknown rate: the ceiling")

	// 400 rows/s for two seconds while holding more than the pool.
	for i := 1; i <= 80; i++ {
		p.settle(t0.Add(time.Duration(i)*25*time.Millisecond), 10, 500, workers)
	}
	require.InDelta(t, 400, p.rate, 20)
	require.Equal(t, 600, p.limit(hold, floor, ceiling), "1.5 s of 400 rows/s")

	// A slow instance never goes below the floor; a fast one never above the ceiling.
	require.Equal(t, floor, (&drainPace{rate: 10}).limit(hold, floor, ceiling))
	require.Equal(t, ceiling, (&drainPace{rate: 5000}).limit(hold, floor, ceiling))

	// Held below the pool: not saturated, the estimate is dropped.
	p.settle(t0.Add(3*time.Second), 10, workers-1, workers)
	require.Equal(t, ceiling, p.limit(hold, floor, ceiling))
}

// A dispatcher with a measured slow pace claims less, but always at least a
// worthwhile claim once its pool is free.
func TestDispatcherCapacityFollowsPace(t *testing.T) {
	d := &Dispatcher{cfg: Config{ClaimBatch: 500, Workers: 64, LeaseRenewInterval: 3 * time.Second}}
	require.Equal(t, 500, d.capacityLocked())
	d.held = 600
	require.Equal(t, 464, d.capacityLocked(), "unknown pace: two batches plus the pool")
	d.pace.rate = 300 // 450 rows in 1.5 s
	require.LessOrEqual(t, d.capacityLocked(), 0, "holding more than 1.5 s of work: no claim")
	d.held = 64
	require.Equal(t, 386, d.capacityLocked())
	d.pace.rate = 100 // 150 rows in 1.5 s: the floor (pool + half a batch) applies
	require.Equal(t, d.minClaim(), d.capacityLocked(), "a free pool still makes a worthwhile claim")
	d.cfg.LeaseRenewInterval = 0 // tests that renew by hand: no pacing
	d.held = 600
	require.Equal(t, 464, d.capacityLocked())
}
