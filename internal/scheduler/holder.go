package scheduler

import (
	"context"
	"time"

	"github.com/qhronos/qhronos/internal/model"
	"go.uber.org/zap"
)

// hold fires the jobs of one claim (sorted by instant), each no earlier than
// its instant by the deployment clock. Just before firing a group of due
// jobs it re-reads their leases and events, unless the claim read them
// moments ago (recheckAfter): a revoked lease (pause or edit cancelled the
// row) drops the job silently; a paused or deleted event, or an edit that
// removed the instant from the series, records `cancelled`.
// When the dispatcher stops, jobs not started are released for immediate
// pickup by another instance.
func (d *Dispatcher) hold(token string, jobs []job) {
	defer d.holders.Done()
	for i := 0; i < len(jobs); {
		if wait := fireAt(&jobs[i].occ).Sub(d.clock.Now()); wait > 0 {
			select {
			case <-d.stopping:
				d.release(token, jobs[i:])
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
			fire = d.preFire(token, group, now)
		}
		for k, jb := range fire {
			select {
			case <-d.stopping:
				d.release(token, append(fire[k:], jobs[i:]...))
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

// preFire checks leases and event state just before firing; it returns the
// jobs that may fire and resolves the others.
func (d *Dispatcher) preFire(token string, group []job, now time.Time) []job {
	ids := make([]string, len(group))
	for k := range group {
		ids[k] = group[k].occ.ID
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	checks, err := d.store.CheckLeases(ctx, token, ids)
	if err != nil {
		// Without knowing the event's state nothing fires; the rows go
		// back for immediate pickup (or, if the database is away, their
		// leases expire soon, with no heartbeat behind them).
		d.log.Warn("check leases before firing", zap.Int("occurrences", len(group)), zap.Error(err))
		d.releaseIDs(token, ids)
		return nil
	}
	var edited []string
	for _, jb := range group {
		if c, ok := checks[jb.occ.ID]; ok && c.Held && c.EventVersion != jb.ev.Version && !jb.occ.Manual {
			edited = append(edited, jb.ev.ID)
		}
	}
	var fresh map[string]model.Event
	if len(edited) > 0 {
		if fresh, err = d.store.EventsByID(ctx, edited); err != nil {
			d.log.Warn("reload edited events", zap.Error(err))
			d.releaseIDs(token, ids)
			return nil
		}
	}
	fire := make([]job, 0, len(group))
	for _, jb := range group {
		c, ok := checks[jb.occ.ID]
		if !ok || !c.Held {
			d.settled(token, jb.occ.ID) // the lease is gone: someone else owns the row now
			continue
		}
		if ev, ok := fresh[jb.ev.ID]; ok {
			jb.ev = ev
		}
		state := jb.ev
		state.Status, state.DeletedAt = c.EventStatus, c.EventDeleted
		if reason := staleReason(true, &state, &jb.occ); reason != "" {
			d.ended(&jb.occ, token, reason, now)
			continue
		}
		if _, ok := fresh[jb.ev.ID]; ok && !d.stillInSeries(&jb) {
			d.ended(&jb.occ, token, model.ReasonRuleChanged, now)
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

// release hands unstarted jobs back for immediate pickup.
func (d *Dispatcher) release(token string, jobs []job) {
	ids := make([]string, len(jobs))
	for k := range jobs {
		ids[k] = jobs[k].occ.ID
	}
	d.releaseIDs(token, ids)
}

// releaseIDs hands claimed rows that were not attempted back for immediate
// pickup, their claim uncounted. It runs on its own context: the caller's
// may be what failed. If the release fails too, the rows stop being renewed
// and the rescuer returns them once their short lease expires.
func (d *Dispatcher) releaseIDs(token string, ids []string) {
	if len(ids) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n, err := d.store.ReleaseClaims(ctx, token, ids, d.clock.Now())
	if err != nil {
		d.log.Warn("release unstarted claims; their leases will expire", zap.Int("occurrences", len(ids)), zap.Error(err))
	} else {
		d.log.Info("released unstarted claims", zap.Int("occurrences", n))
	}
	d.settled(token, ids...)
}
