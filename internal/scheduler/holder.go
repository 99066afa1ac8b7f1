package scheduler

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
	"go.uber.org/zap"
)

// hold fires the jobs of one read (sorted by instant), each no earlier than
// its instant by the deployment clock and once its event's overlap policy
// and concurrency key let it (overlap.go, concurrency.go). A job whose read
// would be too old when it fires (stale) has its row and event read again
// shortly before its instant (checkLead), together with every other job due
// by then: a row changed meanwhile (a pause or an edit cancelled it) drops
// the job silently; a paused or deleted event, or an edit that removed the
// instant from the series, records `cancelled`.
// The reads run ahead of the firing (readAhead): fired in the same loop, the
// read of the jobs after a window began only once its last job was sent, so
// the first jobs after it were late by the read's round trip, and by tens of
// milliseconds whenever the database was busy (#36).
// When the dispatcher stops, jobs not started are let go (they are still
// due in the database) for the next owner of their slots.
func (d *Dispatcher) hold(jobs []job) {
	defer d.holders.Done()
	windows := make(chan []job, windowsAhead)
	go d.readAhead(jobs, windows)
	stopped := false
	for w := range windows {
		if stopped {
			d.release(w)
			continue
		}
		stopped = !d.fire(w)
	}
}

// windowsAhead is how many windows of read jobs may wait for the firing:
// reads run back to back, each covering about one round trip of instants,
// while the firing is up to checkLead.ahead (two round trips) behind them.
const windowsAhead = 4

// readAhead hands hold's firing, in order, the jobs of one read in windows
// that are fresh at their instants: jobs read recently enough as they are,
// the others read again checkLead.ahead before their instant. It closes
// windows when every job was handed over or let go (stopping).
func (d *Dispatcher) readAhead(jobs []job, windows chan<- []job) {
	defer close(windows)
	for i := 0; i < len(jobs); {
		now := d.clock.Now()
		j := i
		for j < len(jobs) && !stale(&jobs[j], maxTime(fireAt(&jobs[j].occ), now)) {
			j++
		}
		if j > i { // fresh from their read
			if !d.handOver(windows, jobs[i:j]) {
				d.release(jobs[j:])
				return
			}
			i = j
			continue
		}
		ahead := d.lead.ahead()
		if wait := fireAt(&jobs[i].occ).Add(-ahead).Sub(now); wait > 0 {
			select {
			case <-d.stopping:
				d.release(jobs[i:])
				return
			case <-d.clock.After(wait):
				continue
			}
		}
		// Half the margin widens the window (fewer reads, each of more
		// jobs); half is left for a firing that runs late.
		for j < len(jobs) && !fireAt(&jobs[j].occ).After(now.Add(ahead+freshMargin/2)) {
			j++
		}
		if !d.handOver(windows, d.recheck(jobs[i:j], now)) {
			d.release(jobs[j:])
			return
		}
		i = j
	}
}

// handOver sends a window to the firing; when the dispatcher stops first it
// lets the window go and reports false.
func (d *Dispatcher) handOver(windows chan<- []job, w []job) bool {
	if len(w) == 0 {
		return true
	}
	select {
	case windows <- w:
		return true
	case <-d.stopping:
		d.release(w)
		return false
	}
}

// fire starts the jobs of one window at their instants. A job that became
// stale meanwhile (the firing waited for the pool) is read again first. It
// reports false when the dispatcher stopped, having let the rest go.
func (d *Dispatcher) fire(jobs []job) bool {
	for i := 0; i < len(jobs); {
		now := d.clock.Now()
		ahead := d.lead.ahead()
		at := fireAt(&jobs[i].occ)
		wakeAt := at
		if stale(&jobs[i], maxTime(at, now)) {
			wakeAt = at.Add(-ahead)
		}
		if wait := wakeAt.Sub(now); wait > 0 {
			select {
			case <-d.stopping:
				d.release(jobs[i:])
				return false
			case <-d.clock.After(wait):
				continue // re-read the clock: never fire early
			}
		}
		if stale(&jobs[i], maxTime(at, now)) {
			j := i
			for j < len(jobs) && !fireAt(&jobs[j].occ).After(now.Add(ahead)) {
				j++
			}
			kept := d.recheck(jobs[i:j], now)
			n := copy(jobs[i:j], kept)
			jobs = append(jobs[:i+n], jobs[j:]...)
			continue
		}
		// Every job due now whose read is fresh fires.
		j := i
		for j < len(jobs) && !fireAt(&jobs[j].occ).After(now) && !stale(&jobs[j], now) {
			j++
		}
		for k := i; k < j; k++ {
			if !d.admitOverlap(&jobs[k]) || !d.admitConcurrency(&jobs[k]) {
				continue // skipped, parked or let go
			}
			select {
			case <-d.stopping:
				d.release(jobs[k:])
				return false
			case d.sem <- struct{}{}:
			}
			// By pointer: a job is about a kilobyte, and nothing writes
			// jobs[:j] once they are handed out.
			d.startAttempt(&jobs[k])
		}
		i = j
	}
	return true
}

// startAttempt runs jb's attempt on a goroutine that waits for the next
// one when it is done, or on a new one when none waits. A new goroutine
// starts on a small stack that an attempt outgrows several times (net/http
// checks the headers on a large frame), each time copying it: 6.5 % of the
// server's CPU in a burst. A kept goroutine has grown already.
func (d *Dispatcher) startAttempt(jb *job) {
	select {
	case d.idleAttempter <- jb:
	default:
		d.attempters.Add(1)
		go d.attempter(jb)
	}
}

// attempterIdle is how long a goroutine that ran an attempt waits for the
// next one before it ends.
const attempterIdle = 5 * time.Second

// attempter runs jb's attempt, then the attempts handed to it while it
// waits, until none came for attempterIdle or the dispatcher stops.
func (d *Dispatcher) attempter(jb *job) {
	defer d.attempters.Done()
	idle := time.NewTimer(attempterIdle)
	defer idle.Stop()
	for {
		d.attempt(jb)
		idle.Reset(attempterIdle)
		select {
		case jb = <-d.idleAttempter:
		case <-idle.C:
			return
		case <-d.stopping:
			return
		}
	}
}

// A job fires on its read while the read is younger than the pre-fire
// read's lead plus freshMargin: a job due when read fires within
// milliseconds of that read, and a second read would see the same state at
// the cost of a query per row (a tenth of the database's work in a burst);
// jobs read further ahead of their instant are read again checkLead.ahead
// before it, a window of them in one query. Either way a change committed
// after the last read is seen by the outcome's fenced write, not by the
// attempt already under way.
const freshMargin = 15 * time.Millisecond

// minCheckAhead and maxCheckAhead bound how long before their instant stale
// jobs are read again.
const (
	minCheckAhead = 10 * time.Millisecond
	maxCheckAhead = 100 * time.Millisecond
)

// checkLead is how long before their instant stale jobs are read again:
// twice the pre-fire read's recent round trip, within [minCheckAhead,
// maxCheckAhead]. The read must be answered before the instant, or it sits
// between the instant and the send: reading at the instant made the median
// lateness 14 ms instead of 1.5 ms under a steady 1,500 occurrences a
// second, and a fixed 10 ms lead, with reads answered in 20–60 ms on a busy
// two-core machine at 4,000 a second, made every instant late by the
// difference (#36). It is measured on the deployment clock, which the
// instants are on.
type checkLead struct {
	rtt atomic.Int64 // the smoothed round trip, in nanoseconds
}

// observe adds a read's round trip: a slower one moves the average half
// way at once, a faster one an eighth of the way, so the lead grows within
// a read or two and shrinks over dozens. A clock stepped back in between
// counts as an instant answer.
func (l *checkLead) observe(rtt time.Duration) {
	rtt = max(rtt, 0)
	for {
		old := l.rtt.Load()
		next := old + (int64(rtt)-old)/8
		if int64(rtt) > old {
			next = old + (int64(rtt)-old)/2
		}
		if l.rtt.CompareAndSwap(old, next) {
			return
		}
	}
}

// ahead is how long before its instant a stale job is read again.
func (l *checkLead) ahead() time.Duration {
	return min(maxCheckAhead, max(minCheckAhead, 2*time.Duration(l.rtt.Load())))
}

// freshFor is how long a read serves for firing: a job read again ahead()
// before its instant fires on that read without a third one, unless its
// holder was held up.
func (l *checkLead) freshFor() time.Duration { return l.ahead() + freshMargin }

// stale reports whether jb's read is too old to fire on at t.
func stale(jb *job, t time.Time) bool { return !t.Before(jb.freshUntil) }

// fireAt is when an occurrence may fire: its next attempt, and never before
// its scheduled instant (a released claim is due "now", which may still be
// a moment before the instant).
func fireAt(occ *model.Occurrence) time.Time {
	if occ.ScheduledAt.After(occ.NextAttemptAt) {
		return occ.ScheduledAt
	}
	return occ.NextAttemptAt
}

// preFire reads rows and event state again just before firing; it returns
// the jobs that may fire, read as of the answer, and resolves the others.
func (d *Dispatcher) preFire(group []job, now time.Time) []job {
	if len(group) == 0 {
		return nil
	}
	ids, keys := make([]string, len(group)), make([]repository.HeldRow, len(group))
	for k := range group {
		ids[k] = group[k].occ.ID
		keys[k] = repository.HeldRow{ID: group[k].occ.ID, ScheduledAt: group[k].occ.ScheduledAt}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	asked := d.clock.Now()
	checks, err := d.store.CheckDue(ctx, keys)
	// What fires is read as of the answer: counted from the question, a
	// database slower than the lead would have every job read again
	// forever.
	readAt := d.clock.Now()
	d.lead.observe(readAt.Sub(asked))
	freshUntil := readAt.Add(d.lead.freshFor())
	if err != nil {
		// Without knowing the event's state nothing fires; the rows are
		// let go, still due, for the next read.
		d.log.Warn("check occurrences before firing", zap.Int("occurrences", len(group)), zap.Error(err))
		d.releaseIDs(ids...)
		return nil
	}
	var edited []string
	for _, jb := range group {
		if c, ok := checks[jb.occ.ID]; ok && c.Unchanged(jb.custody.seen) && c.EventVersion != jb.ev.Version && !jb.occ.Manual {
			edited = append(edited, jb.ev.ID)
		}
	}
	var fresh map[string]model.Event
	if len(edited) > 0 {
		if fresh, err = d.store.EventsByID(ctx, edited); err != nil {
			d.log.Warn("reload edited events", zap.Error(err))
			d.releaseIDs(ids...)
			return nil
		}
	}
	fire := make([]job, 0, len(group))
	changed := false
	for _, jb := range group {
		c, ok := checks[jb.occ.ID]
		if !ok || !c.Unchanged(jb.custody.seen) {
			// Cancelled, rescheduled or recorded by someone else meanwhile;
			// if it waits again, the next read finds it.
			d.settled(jb.occ.ID)
			changed = true
			continue
		}
		if ev, ok := fresh[jb.ev.ID]; ok {
			jb.ev = ev
		}
		state := jb.ev
		state.Status, state.DeletedAt = c.EventStatus, c.EventDeleted
		if reason := staleReason(true, &state, &jb.occ); reason != "" {
			d.ended(&jb.occ, jb.custody, reason, now)
			continue
		}
		if _, ok := fresh[jb.ev.ID]; ok && !d.stillInSeries(&jb) {
			d.ended(&jb.occ, jb.custody, model.ReasonRuleChanged, now)
			continue
		}
		jb.freshUntil = freshUntil
		fire = append(fire, jb)
	}
	if changed {
		d.Wake(d.clock.Now())
	}
	return fire
}

// stillInSeries reports whether an edited event still has the job's instant.
// A retry or a rule that cannot be compiled keeps firing (the edit's own
// transaction already cancelled what no longer belongs), and so does a row
// the planner placed off the rule's own instants — moved, rolled by a
// calendar or jittered — whose re-plan that transaction made too, and an
// operator's firing (a replay, a backfilled instant: manual_retry), which
// the rule does not decide.
func (d *Dispatcher) stillInSeries(jb *job) bool {
	if jb.occ.OriginalScheduledAt != nil || jb.occ.ManualRetry || jb.ev.Jitter > 0 || len(jb.ev.Calendars) > 0 {
		return true
	}
	rule, err := compileEvent(&jb.ev, d.cfg.Recurrence)
	if err != nil {
		d.log.Warn("compile edited event", zap.String("event_id", jb.ev.ID), zap.Error(err))
		return true
	}
	ok, err := inSeries(rule, jb.occ.ScheduledAt)
	if err != nil {
		return true
	}
	return ok
}

// release lets unstarted jobs go: they are still due in the database, for
// the next read of their slot's owner (this instance, or the one the slot
// goes to when this one stops).
func (d *Dispatcher) release(jobs []job) {
	ids := make([]string, len(jobs))
	for k := range jobs {
		ids[k] = jobs[k].occ.ID
	}
	d.releaseIDs(ids...)
}

// releaseIDs lets rows read and not attempted go. Nothing is written: their
// attempt was never counted.
func (d *Dispatcher) releaseIDs(ids ...string) {
	if len(ids) == 0 {
		return
	}
	d.log.Debug("let unstarted occurrences go", zap.Int("occurrences", len(ids)))
	d.settled(ids...)
	d.Wake(d.clock.Now()) // still waiting: read again (unless stopping)
}
