package scheduler

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/repository"
)

// A heartbeat's answer marks lost only rows still waiting to fire or
// running: a row settled meanwhile, or whose outcome is already with the
// recorder (the write may have landed between the snapshot and the
// renewal), is no loss and no warning.
func TestHeldLeasesMarkOnlyRealLosses(t *testing.T) {
	t0 := time.Date(2031, 3, 4, 10, 0, 0, 0, time.UTC)
	h := newHeldLeases()
	h.add("a", t0.Add(10*time.Second), []string{"running", "recorded", "settled", "renewed"})
	h.add("b", t0.Add(10*time.Second), []string{"other"})
	snap := h.snapshot()
	require.Len(t, snap["a"], 4)

	h.recording("a", "recorded")
	h.remove("a", "settled")
	lost := h.renewed(snap, []repository.LeaseKey{{ID: "renewed", Token: "a"}}, t0.Add(20*time.Second))
	require.ElementsMatch(t, []string{"running", "other"}, lost)

	require.True(t, h.lost("a", "running"))
	require.False(t, h.usable("a", "running", t0))
	require.False(t, h.lost("a", "recorded"))
	require.True(t, h.usable("a", "renewed", t0.Add(15*time.Second)), "the renewal extended token a's lease")
	require.False(t, h.usable("b", "other", t0), "b's only row was lost")
	require.False(t, h.usable("a", "renewed", t0.Add(20*time.Second)), "not past the renewed expiry")

	again := h.snapshot()
	require.ElementsMatch(t, []string{"recorded", "renewed"}, again["a"], "lost rows are not renewed again")
	require.Empty(t, again["b"])
}
