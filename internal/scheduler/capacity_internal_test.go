package scheduler

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Rows whose outcome is queued for the writer need no worker: they do not
// hold back the next read, up to maxQueued of them.
func TestQueuedOutcomesLeaveRoomToRead(t *testing.T) {
	t.Parallel()
	d := &Dispatcher{cfg: Config{ClaimBatch: 10, Workers: 4, RecordBatch: 5}}
	for _, c := range []struct {
		held, queued, want int
		why                string
	}{
		{0, 0, 10, "idle: a whole batch"},
		{24, 0, 0, "two batches and the pool wait for workers"},
		{24, 24, 10, "all of them sent, waiting for their write"},
		{30, 20, 10, "ten wait for workers"},
		{40, 20, 4, "twenty wait for workers"},
		{44, 44, 0, "the writer is maxQueued behind"},
	} {
		d.held, d.queued = c.held, c.queued
		require.Equal(t, c.want, d.capacity(), c.why)
	}
}
