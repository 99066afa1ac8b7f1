package scheduler

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
)

func TestDecideOverlap(t *testing.T) {
	for _, tc := range []struct {
		policy              string
		inProgress, waiting int
		want                overlapAction
	}{
		{model.OverlapAllow, 3, 2, overlapFire},
		{model.OverlapSkip, 0, 0, overlapFire},
		{model.OverlapSkip, 1, 0, overlapSkip},
		{model.OverlapSkip, 0, 1, overlapFire}, // parked under an earlier policy: not a run
		{model.OverlapBufferOne, 0, 0, overlapFire},
		{model.OverlapBufferOne, 1, 0, overlapPark},
		{model.OverlapBufferOne, 1, 1, overlapSkip},
		{model.OverlapBufferOne, 0, 1, overlapSkip}, // released, not fired yet: it goes first
		{model.OverlapBufferAll, 1, 5, overlapPark},
		{model.OverlapBufferAll, 0, 1, overlapPark},
		{model.OverlapBufferAll, 0, 0, overlapFire},
		{model.OverlapCancelPrevious, 0, 0, overlapFire},
		{model.OverlapCancelPrevious, 2, 1, overlapCancelPrevious},
	} {
		require.Equal(t, tc.want, decideOverlap(tc.policy, tc.inProgress, tc.waiting), "%+v", tc)
	}
}

func TestWeighsOverlap(t *testing.T) {
	backfill := model.ReasonBackfill
	require.True(t, weighsOverlap(&model.Occurrence{AttemptCount: 1}), "a planned instant")
	require.True(t, weighsOverlap(&model.Occurrence{AttemptCount: 1, ManualRetry: true, Reason: &backfill}), "a backfilled one")
	require.False(t, weighsOverlap(&model.Occurrence{AttemptCount: 2}), "a retry continues its run")
	require.False(t, weighsOverlap(&model.Occurrence{AttemptCount: 1, Manual: true}), "an operator's trigger")
	require.False(t, weighsOverlap(&model.Occurrence{AttemptCount: 1, ManualRetry: true}), "a replay")
}
