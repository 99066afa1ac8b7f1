package scheduler

import (
	"time"

	"github.com/qhronos/qhronos/internal/model"
)

// Catch-up modes of an event's `catch_up` field.
const (
	CatchUpAll    = "all"    // fire every missed instant within the window
	CatchUpLatest = "latest" // fire only the newest overdue instant
	CatchUpNone   = "none"   // fire no overdue instant
)

// CatchUp decides what happens to occurrences found late, typically after
// every instance was down for a while.
//
// An occurrence is OVERDUE when its first attempt is claimed more than Grace
// after it became due (its instant, or later when an endpoint's limits or
// open circuit deferred it: that wait is delivery, not downtime). A
// dispatcher that is running claims rows up to claim-ahead before their
// instant, so only downtime (or a backlog far beyond normal load) makes a row
// overdue. Retries (attempt 2+) and manual triggers are never overdue: their
// lateness is by design or by request.
//
// Overdue rows older than Window are `missed` whatever the mode; within the
// window, `all` fires them, `none` marks them `missed`, and `latest` fires
// only the event's newest overdue instant and marks the rest `missed`.
type CatchUp struct {
	Window time.Duration
	Grace  time.Duration
}

// Overdue reports whether occ, claimed at now, is overdue.
func (c CatchUp) Overdue(occ *model.Occurrence, now time.Time) bool {
	if occ.Manual || occ.ManualRetry || occ.AttemptCount > 1 {
		return false
	}
	return now.Sub(fireAt(occ)) > c.Grace
}

// Cutoff is the latest scheduled instant that counts as overdue at now.
func (c CatchUp) Cutoff(now time.Time) time.Time { return now.Add(-c.Grace) }

// Miss reports whether occ must be recorded `missed` instead of fired, the
// ledger's reason and a description. latest is the event's newest overdue
// instant (used by `latest`).
func (c CatchUp) Miss(mode string, occ *model.Occurrence, now time.Time, latest time.Time) (miss bool, reason, msg string) {
	if !c.Overdue(occ, now) {
		return false, "", ""
	}
	if now.Sub(occ.ScheduledAt) > c.Window {
		return true, model.ReasonCatchUpWindow, "missed: older than the catch-up window of " + c.Window.String()
	}
	switch mode {
	case CatchUpNone:
		return true, model.ReasonCatchUpPolicy, "missed: catch_up is none"
	case CatchUpLatest:
		if occ.ScheduledAt.Before(latest) {
			return true, model.ReasonCatchUpPolicy, "missed: catch_up is latest and a newer instant is due"
		}
	}
	return false, "", ""
}
