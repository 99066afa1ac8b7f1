package recurrence

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestResolveWallAgainstBruteForce checks, minute by minute around every 2027
// transition of the three reference zones, that a wall reading resolves to
// the first instant showing it, that a missing reading is reported missing
// and resolves to the end of the gap, and that the cached resolver agrees.
func TestResolveWallAgainstBruteForce(t *testing.T) {
	t.Parallel()
	for _, zone := range []string{"America/New_York", "Europe/Prague", "Australia/Lord_Howe"} {
		loc := mustLoc(t, zone)
		probe := time.Date(2027, 1, 1, 0, 0, 0, 0, loc)
		for range 2 {
			_, transition := probe.ZoneBounds()
			require.False(t, transition.IsZero())
			probe = transition
			first := map[time.Time]time.Time{} // wall reading -> first instant
			for i := -30 * 60; i <= 30*60; i++ {
				inst := transition.Add(time.Duration(i) * time.Minute).UTC()
				w := wallOf(inst, loc)
				if _, seen := first[w]; !seen {
					first[w] = inst
				}
			}
			cached := newResolver(loc)
			lo := wallOf(transition, loc).Add(-24 * time.Hour)
			for w := lo; w.Before(lo.Add(48 * time.Hour)); w = w.Add(time.Minute) {
				got, ok := resolveWall(w, loc)
				want, exists := first[w]
				require.Equal(t, exists, ok, "%s wall %s: exists", zone, w.Format("2006-01-02 15:04"))
				if exists {
					require.True(t, want.Equal(got), "%s wall %s: got %s, want %s", zone, w.Format("15:04"), got, want)
				} else {
					require.True(t, got.Equal(transition), "%s wall %s in the gap: got %s, want the transition %s", zone, w.Format("15:04"), got, transition)
				}
				cg, cok := cached.resolve(w)
				require.Equal(t, ok, cok, "%s wall %s: cached resolver disagrees on existence", zone, w.Format("15:04"))
				require.True(t, got.Equal(cg), "%s wall %s: cached resolver got %s, want %s", zone, w.Format("15:04"), cg, got)
			}
		}
	}
}

func TestLookbackCoversTheJump(t *testing.T) {
	t.Parallel()
	ny := mustLoc(t, "America/New_York")
	require.Equal(t, time.Second, lookback(utc("2027-06-01T00:00:00Z"), ny), "no transition in the last 48 hours")
	require.Equal(t, time.Hour+time.Second, lookback(utc("2027-03-14T08:00:00Z"), ny), "just after spring forward")
	require.Equal(t, time.Second, lookback(utc("2027-11-07T08:00:00Z"), ny), "fall back needs no extra lookback")
}
