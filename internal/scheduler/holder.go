package scheduler

import (
	"context"
	"time"

	"github.com/qhronos/qhronos/internal/model"
	"go.uber.org/zap"
)

// hold fires the jobs of one read (sorted by instant), each no earlier than
// its instant by the deployment clock. Just before firing a group of due
// jobs it re-reads their rows and events, unless the read was moments ago
// (recheckAfter): a row changed meanwhile (a pause or an edit cancelled it)
// drops the job silently; a paused or deleted event, or an edit that
// removed the instant from the series, records `cancelled`.
// When the dispatcher stops, jobs not started are let go (they are still
// due in the database) for the next owner of their slots.
func (d *Dispatcher) hold(jobs []job) {
	defer d.holders.Done()
	for i := 0; i < len(jobs); {
		if wait := fireAt(&jobs[i].occ).Sub(d.clock.Now()); wait > 0 {
			select {
			case <-d.stopping:
				d.release(jobs[i:])
				return
			case <-d.clock.After(wait):
				continue // re-read the clock: never fire early
			}
		}
		now := d.clock.Now()
		j := i
		for j < len(jobs) && !fireAt(&jobs[j].occ).After(now) {
			j++
		}
		group := jobs[i:j]
		i = j
		fire := group
		if now.Sub(group[0].readAt) >= recheckAfter {
			fire = d.preFire(group, now)
		}
		for k, jb := range fire {
			select {
			case <-d.stopping:
				d.release(append(fire[k:], jobs[i:]...))
				return
			case d.sem <- struct{}{}:
			}
			go d.attempt(jb)
		}
	}
}

// recheckAfter is how old the claim's read of the events may be before a
// group fires without reading them again. A group due when claimed fires
// within milliseconds of that read, and a second read would see the same
// state at the cost of a query per row (a tenth of the database's work in
// a burst); rows claimed ahead of their instant are always re-read. Either
// way a change committed after the last read is seen by the outcome's
// fenced write, not by the attempt already under way.
const recheckAfter = 25 * time.Millisecond

// fireAt is when an occurrence may fire: its next attempt, and never before
// its scheduled instant (a released claim is due "now", which may still be
// a moment before the instant).
func fireAt(occ *model.Occurrence) time.Time {
	if occ.ScheduledAt.After(occ.NextAttemptAt) {
		return occ.ScheduledAt
	}
	return occ.NextAttemptAt
}

// preFire checks rows and event state just before firing; it returns the
// jobs that may fire and resolves the others.
func (d *Dispatcher) preFire(group []job, now time.Time) []job {
	ids := make([]string, len(group))
	for k := range group {
		ids[k] = group[k].occ.ID
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	checks, err := d.store.CheckDue(ctx, ids)
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
	for _, jb := range group {
		c, ok := checks[jb.occ.ID]
		if !ok || !c.Unchanged(jb.custody.seen) {
			d.settled(jb.occ.ID) // cancelled, rescheduled or recorded by someone else meanwhile
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
		fire = append(fire, jb)
	}
	return fire
}

// stillInSeries reports whether an edited event still has the job's instant.
// A retry or a rule that cannot be compiled keeps firing (the edit's own
// transaction already cancelled what no longer belongs), and so does a row
// the planner placed off the rule's own instants — moved, rolled by a
// calendar or jittered — whose re-plan that transaction made too.
func (d *Dispatcher) stillInSeries(jb *job) bool {
	if jb.occ.OriginalScheduledAt != nil || jb.ev.Jitter > 0 || len(jb.ev.Calendars) > 0 {
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
}
