package scheduler

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

// Rows whose outcome is queued for the writer need no worker: they do not
// hold back the next read, up to maxQueuedLocked of them.
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
		{44, 44, 0, "the writer is four writes behind"},
	} {
		d.held, d.queued = c.held, c.queued
		require.Equal(t, c.want, d.capacity(), c.why)
	}
}

// While a write has stalled, the outcomes waiting for their write may be
// queueSpan of the recent peak rate, up to maxQueuedWrites writes' worth: a
// database that stops committing for a moment stops no read. Otherwise (a
// burst, whose writes keep up) four writes' worth.
func TestQueuedOutcomesMayHoldSecondsOfThePeakRateWhileAWriteStalls(t *testing.T) {
	t.Parallel()
	d := &Dispatcher{cfg: Config{ClaimBatch: 10, Workers: 4, RecordBatch: 5}}
	d.rec = newRecorder(nil, zap.NewNop(), 5, time.Millisecond, time.Second, nil)
	d.rate.add(time.Now(), 30) // 60 a second: 180 may wait in a stall
	d.held, d.queued = 44, 44
	require.Equal(t, 0, d.capacity(), "four writes behind, no write stalled")
	d.rec.w.writingSince.Store(time.Now().Add(-writeStalledAfter).UnixNano())
	require.Equal(t, 10, d.capacity(), "four writes behind, a write stalled")
	d.held, d.queued = 24+180, 24+180
	require.Equal(t, 0, d.capacity(), "three seconds behind")
	d.rate.add(time.Now(), 1000) // the bound: maxQueuedWrites writes
	d.held, d.queued = 24+maxQueuedWrites*5-10, 24+maxQueuedWrites*5-10
	require.Equal(t, 10, d.capacity(), "ten short of maxQueuedWrites")
	d.held, d.queued = 24+maxQueuedWrites*5, 24+maxQueuedWrites*5
	require.Equal(t, 0, d.capacity(), "maxQueuedWrites behind")
	d.rec.w.writingSince.Store(0)
	d.held, d.queued = 24+19, 24+19
	require.Equal(t, 1, d.capacity(), "the write done: one short of four writes")
}

// The peak outlasts a stall: windows without outcomes do not lower it until
// the ring has turned, and a second without any returns it to zero then.
func TestOutcomeRateKeepsItsPeakThroughAStall(t *testing.T) {
	t.Parallel()
	var r outcomeRate
	at := time.Unix(1000, 0)
	r.add(at, 0)
	for i := range 4 { // 2 s at 800 a second
		r.add(at.Add(time.Duration(i)*rateWindow), 400)
	}
	at = at.Add(4 * rateWindow)
	require.InDelta(t, 800, r.peak(at.Add(time.Second)), 0.1, "a second into a stall")
	require.InDelta(t, 800, r.peak(at.Add(rateWindows*rateWindow-rateWindow)), 0.1, "the ring's last window")
	require.InDelta(t, 0, r.peak(at.Add(rateWindows*rateWindow+time.Hour)), 0.1, "an hour idle")
}
