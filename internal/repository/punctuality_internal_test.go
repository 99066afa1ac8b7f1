package repository

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// A transaction's sparse lateness writes the same fresh row text as the
// report's histogram would, whatever the order its attempts came in.
func TestPunctualityDeltaEncodesLikeTheHistogram(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		var d punctualityDelta
		var h punctualityCounts
		for range r.IntN(12) {
			ms := r.Int64N(100_000)
			if r.IntN(3) == 0 {
				ms = r.Int64N(20)
			}
			d.late(punctualityIndex(ms), 1)
			h.late(punctualityIndex(ms), 1)
		}
		require.Equal(t, encodeLateness(h.lateness), d.encodedLateness())
		require.Equal(t, h.lateness == nil, d.empty())
	}
}
