package scheduler

import "time"

// Four writes' worth of outcomes may wait for their write; while a write
// has lasted writeStalledAfter, queueSpan of the recent peak rate may. A
// database that stops committing for a moment (an fsync of the WAL taking a
// second on a busy disk, #36) then stops no send, where four writes' worth
// (2,000 rows, half a second at 4,000 a second) stopped every send after
// half a second of it. Only while a write stalls: in a burst the writes keep
// up, the three seconds bought no speed (#36, twenty-ninth step), and a
// process killed then would leave up to three seconds of sends unrecorded,
// to be sent again. maxQueuedWrites bounds the memory: a queued outcome
// keeps its job, about two kilobytes.
const (
	writeStalledAfter = 250 * time.Millisecond
	queueSpan         = 3 * time.Second
	minQueuedWrites   = 4
	maxQueuedWrites   = 40
)

// outcomeRate measures the peak rate of outcomes handed to the writer over
// the last rateWindows windows of rateWindow. The peak, not the current
// rate: while the database stalls no outcome is written, sends wait for
// room, and a rate measured then would shrink the queue that should carry
// them through it. The dispatcher's mutex guards it.
type outcomeRate struct {
	start  time.Time // of the current window, by this process's monotonic clock
	n      int       // outcomes in the current window
	counts [rateWindows]int
	next   int // where the next closed window goes in counts
}

const (
	rateWindow  = 500 * time.Millisecond
	rateWindows = 8
)

func (r *outcomeRate) add(now time.Time, n int) {
	r.roll(now)
	r.n += n
}

// roll closes the windows that ended by now.
func (r *outcomeRate) roll(now time.Time) {
	if r.start.IsZero() {
		r.start = now
		return
	}
	for k := 0; k < rateWindows && now.Sub(r.start) >= rateWindow; k++ {
		r.counts[r.next] = r.n
		r.next = (r.next + 1) % rateWindows
		r.n = 0
		r.start = r.start.Add(rateWindow)
	}
	if now.Sub(r.start) >= rateWindow { // idle longer than the ring: every window was empty
		r.start = now
	}
}

// peak is the highest rate of the windows kept, in outcomes a second.
func (r *outcomeRate) peak(now time.Time) float64 {
	r.roll(now)
	most := r.n
	for _, c := range r.counts {
		most = max(most, c)
	}
	return float64(most) / rateWindow.Seconds()
}
