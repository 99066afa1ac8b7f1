package scheduler

import "time"

// drainPace measures how many rows per second this instance settles while
// it is saturated (at least a worker pool's worth held), so that it claims
// about what it can fire soon rather than a fixed amount.
//
// Why: a claimed row waits in this process for a worker. A fixed ceiling of
// two batches plus the pool (1,064 rows by default) is under a second of
// work for one instance on a machine of its own, but when instances share
// cores each drains slower and its rows wait longer: past the lease-renewal
// interval every held row is renewed by an UPDATE, and rows another
// instance could have fired sit in this one's queue. Measured (#27, two
// instances on one 2-core machine): 6,106–11,076 lease renewals for a
// 20,000 burst, against 0–3,832 with one instance.
type drainPace struct {
	start time.Time // the open window's start; zero when none is open
	n     int       // rows settled in the open window
	rate  float64   // rows/s of the last full window; 0 when unknown
}

// paceWindow is how long a saturated stretch is measured before its rate
// is used.
const paceWindow = time.Second

// settle notes n rows settled at now, leaving held rows for a pool of
// workers. A dispatcher holding less than its pool is not saturated: what
// it drains then says nothing of what it could, so the estimate is dropped
// and the next claim may take the full ceiling again.
func (p *drainPace) settle(now time.Time, n, held, workers int) {
	if held < workers {
		*p = drainPace{}
		return
	}
	if p.start.IsZero() {
		p.start = now
		return
	}
	p.n += n
	if el := now.Sub(p.start); el >= paceWindow {
		p.rate = float64(p.n) / el.Seconds()
		p.start, p.n = now, 0
	}
}

// limit is the most rows to hold: what the measured rate settles in
// holdFor, within [floor, ceiling]; the ceiling while the rate is unknown.
func (p *drainPace) limit(holdFor time.Duration, floor, ceiling int) int {
	if p.rate <= 0 {
		return ceiling
	}
	return min(ceiling, max(floor, int(p.rate*holdFor.Seconds())))
}
