// Package planner decides which instants of an event's rule become
// occurrence rows next. It is pure: (rule, cursor, window, now) in, instants,
// the next cursor and next_run_at out — no clock, no I/O. The events service
// uses it for an event's first rows when it is created, edited or resumed,
// and the expander loop for every later window, so both agree by
// construction.
package planner

import (
	"errors"
	"fmt"
	"time"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/recurrence"
)

// Window bounds what one plan materializes.
type Window struct {
	// CatchUp is how far behind now instants are still materialized (the
	// catch-up window); older ones are never planned.
	CatchUp time.Duration
	// Lookahead is how far ahead of now rows exist before their instant.
	Lookahead time.Duration
	// MaxRows caps the instants of one plan; a longer window continues at
	// the next plan from the returned cursor.
	MaxRows int
}

// Plan is what to write: the rows to insert, where the event's cursor
// (expanded_until) moves — every instant of the rule before it is planned —
// and the series' first instant at or past the cursor when the window was
// complete (nil when the series has none left, or the window was cut
// short).
type Plan struct {
	Rows   []model.Planned
	Cursor time.Time
	After  *time.Time
}

// NextRunAt is the first instant the plan makes due: its first firing row,
// else the instant after the window.
func (p Plan) NextRunAt() *time.Time {
	for _, r := range p.Rows {
		if r.Status == model.OccurrencePending {
			at := r.At
			return &at
		}
	}
	return p.After
}

// Next plans the window [max(now − CatchUp, cursor), now + Lookahead) of
// the series. cursor is the event's expanded_until, nil for a new or
// restarted event.
func (w Window) Next(s *Series, cursor *time.Time, now time.Time) (Plan, error) {
	rule := s.Rule
	from := w.From(cursor, now)
	horizon := now.Add(w.Lookahead)
	if s.Now.IsZero() {
		s.Now = now
	}
	var missed []model.Planned
	if cursor != nil && cursor.Before(from) {
		missed = s.missed(*cursor, from, w.CatchUp)
	}
	if !from.Before(horizon) {
		// The cursor already sits on the next instant, beyond the horizon.
		p := Plan{Rows: missed, Cursor: from.UTC()}
		if from.Before(model.SeriesEnd) {
			next := from.UTC()
			p.After = &next
		}
		return p, nil
	}
	instants, complete, err := w.window(rule, from, horizon)
	if err != nil {
		return Plan{}, err
	}
	var p Plan
	if complete {
		p.Cursor, p.After = beyond(rule, horizon)
		if p.After != nil {
			p.After = s.nextFiring(*p.After)
		}
	} else {
		p.Cursor = instants[len(instants)-1].At.Add(time.Microsecond)
	}
	p.Cursor = p.Cursor.UTC()
	p.Rows = append(missed, s.rows(instants, from, horizon)...)
	return p, nil
}

// MaxMissedRows bounds the instants one plan records missed because they
// fell behind the catch-up window unplanned (every instance was down
// longer than the lookahead): an every-second event down for a day is one
// ledger entry per instant up to this many, not 86,400.
const MaxMissedRows = 100

// missed are the rows of the instants in [cursor, from) — the catch-up
// window clipped them from the plan, so they will never fire — recorded
// `missed` (reason catch_up_window) so that the ledger and the `missed`
// notice show the outage. Instants a calendar or an exception skipped stay
// skipped; one moved to from or later is planned by the window instead.
// At most MaxMissedRows, the earliest; the last one says when more were
// left unrecorded.
func (s *Series) missed(cursor, from time.Time, window time.Duration) []model.Planned {
	readings, err := recurrence.ExpandInstants(s.Rule, cursor, from, MaxMissedRows+1)
	if err != nil && len(readings) == 0 {
		return nil
	}
	more := len(readings) > MaxMissedRows
	readings = readings[:min(len(readings), MaxMissedRows)]
	note := "missed: older than the catch-up window of " + window.String() + " when it was planned (no instance was running)"
	var out []model.Planned
	for _, in := range readings {
		if in.Skipped {
			continue
		}
		p := s.plan(in.At)
		if !p.At.Before(from) {
			continue
		}
		if p.Status == model.OccurrencePending {
			p.Status, p.Reason, p.Note = model.OccurrenceMissed, model.ReasonCatchUpWindow, note
		}
		out = append(out, p)
	}
	if more && len(out) > 0 {
		last := &out[len(out)-1]
		last.Note += fmt.Sprintf("; later instants before %s are not recorded (at most %d per outage)",
			from.UTC().Format(time.RFC3339), MaxMissedRows)
	}
	return dedupe(out)
}

// From is where the next plan starts: the cursor, but never further back
// than the catch-up window.
func (w Window) From(cursor *time.Time, now time.Time) time.Time {
	from := now.Add(-w.CatchUp)
	if cursor != nil && cursor.After(from) {
		from = *cursor
	}
	return from
}

// window returns the instants in [from, to), at most MaxRows; complete is
// false when the cap (or the engine's iteration budget) cut it short, in
// which case the next plan continues after the last instant.
func (w Window) window(rule *recurrence.Rule, from, to time.Time) (instants []recurrence.Instant, complete bool, err error) {
	limit := max(w.MaxRows, 1)
	instants, err = recurrence.ExpandInstants(rule, from, to, limit+1)
	if errors.Is(err, recurrence.ErrIterationBudget) && len(instants) > 0 {
		return instants[:min(len(instants), limit)], false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if len(instants) > limit {
		return instants[:limit], false, nil
	}
	return instants, true, nil
}

// beyond finds where the cursor goes after a complete window up to horizon:
// the series' next reading — a skipped DST-gap reading too, so that the
// next window records it — or SeriesEnd when there is none; next is its
// next firing instant. If the engine cannot tell within its budget the
// cursor stays at the horizon and the next plan looks again.
func beyond(rule *recurrence.Rule, horizon time.Time) (cursor time.Time, next *time.Time) {
	after, err := recurrence.ExpandInstants(rule, horizon, model.SeriesEnd, 2)
	switch {
	case len(after) > 0:
		for i := range after {
			if !after[i].Skipped {
				next = &after[i].At
				break
			}
		}
		return after[0].At, next
	case err != nil:
		return horizon, nil
	default:
		return model.SeriesEnd, nil
	}
}

// nextFiringReadings bounds how many of the rule's readings nextFiring
// looks through for one that fires.
const nextFiringReadings = 1024

// nextFiring is the first instant at or after from (a reading of the rule)
// that the series will fire: jittered, and past every reading a calendar or
// an exception skips, so that next_run_at never names a skipped instant.
// nil when none of the next nextFiringReadings readings fires.
func (s *Series) nextFiring(from time.Time) *time.Time {
	const chunk = 64
	for seen := 0; seen < nextFiringReadings; seen += chunk {
		readings, err := recurrence.ExpandInstants(s.Rule, from, model.SeriesEnd, chunk)
		for _, in := range readings {
			if in.Skipped {
				continue
			}
			if p := s.plan(in.At); p.Status == model.OccurrencePending {
				at := p.At
				return &at
			}
		}
		if err != nil || len(readings) < chunk {
			return nil
		}
		from = readings[len(readings)-1].At.Add(time.Microsecond)
	}
	return nil
}
