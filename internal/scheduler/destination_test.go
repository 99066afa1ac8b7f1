package scheduler_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/repository/repositorytest"
	"github.com/qhronos/qhronos/internal/scheduler/schedulertest"
)

// One slow receiver never gets more than MaxPerDestination attempts at once.
func TestAttemptsPerDestinationAreCapped(t *testing.T) {
	cfg := testConfig()
	cfg.MaxPerDestination = 2
	e := newEnv(t, repositorytest.SQLite(t), cfg)
	var inflight, peak atomic.Int32
	release := make(chan struct{})
	e.recv.Respond(func(schedulertest.Delivery, int) schedulertest.Reply {
		n := inflight.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		<-release
		inflight.Add(-1)
		return schedulertest.Reply{Status: 200}
	})
	for range 6 {
		e.create(e.event(nil))
	}
	e.clock.Set(t0.Add(time.Minute))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, err := e.disp.RunOnce(ctx)
	require.NoError(t, err)
	// Each time, wait until as many attempts as the cap allows are running
	// (two, until fewer remain): releasing on the first arrival let a run
	// end with a peak of one when the second request was still on its way.
	for left := 6; left > 0; left-- {
		want := int32(min(left, 2))
		require.Eventually(t, func() bool { return inflight.Load() == want }, 60*time.Second, time.Millisecond,
			"%d attempts at once with %d left", want, left)
		release <- struct{}{}
	}
	require.NoError(t, e.disp.Wait(ctx))
	require.Len(t, e.recv.Deliveries(), 6, "every occurrence delivered")
	require.Equal(t, int32(2), peak.Load(), "never more than two at once at one destination")
}
