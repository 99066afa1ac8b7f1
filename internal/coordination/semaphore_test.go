package coordination_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSemaphoreBoundsHoldersAcrossInstances: two instances share the slots
// of a key; a released or expired slot is free again; renewing keeps it.
func TestSemaphoreBoundsHoldersAcrossInstances(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, in instances) {
		ctx := t.Context()
		ok, err := in.a.Acquire(ctx, "ep", "h1", 2, time.Minute)
		require.NoError(t, err)
		require.True(t, ok, "first of two slots")
		ok, err = in.b.Acquire(ctx, "ep", "h2", 2, time.Minute)
		require.NoError(t, err)
		require.True(t, ok, "second of two slots, on the other instance")
		ok, err = in.a.Acquire(ctx, "ep", "h3", 2, time.Minute)
		require.NoError(t, err)
		require.False(t, ok, "a third holder while two hold the key")
		ok, err = in.b.Acquire(ctx, "ep", "h1", 2, time.Minute)
		require.NoError(t, err)
		require.True(t, ok, "a holder renews its own slot")
		ok, err = in.a.Acquire(ctx, "other", "h3", 1, time.Minute)
		require.NoError(t, err)
		require.True(t, ok, "keys are independent")

		require.NoError(t, in.b.Release(ctx, "ep", "h2"))
		require.NoError(t, in.b.Release(ctx, "ep", "never-held"))
		ok, err = in.a.Acquire(ctx, "ep", "h3", 2, time.Minute)
		require.NoError(t, err)
		require.True(t, ok, "a released slot is free for another holder")

		// A crashed holder's slot frees itself when its lease ends.
		ok, err = in.a.Acquire(ctx, "short", "crashed", 1, 50*time.Millisecond)
		require.NoError(t, err)
		require.True(t, ok)
		ok, err = in.b.Acquire(ctx, "short", "next", 1, time.Minute)
		require.NoError(t, err)
		require.False(t, ok, "the lease still runs")
		in.clock.Step(60 * time.Millisecond)
		ok, err = in.b.Acquire(ctx, "short", "next", 1, time.Minute)
		require.NoError(t, err)
		require.True(t, ok, "the expired lease's slot is free")

		_, err = in.a.Acquire(ctx, "ep", "h4", 0, time.Minute)
		require.Error(t, err, "a limit below one is refused")
	})
}
