package planner

import (
	"encoding/binary"
	"errors"
	"hash/fnv"
	"sort"
	"time"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/recurrence"
)

// MaxRoll is how far a calendar may roll an instant (forward or backward)
// looking for an allowed day; an instant with none that close is skipped.
const MaxRoll = 31

// Series is one event's plan input beyond its rule: the time policy,
// calendars and exceptions that turn the rule's instants into rows. The
// zero value of every member but Rule means "none", so a plain event plans
// exactly its rule's instants.
type Series struct {
	Rule    *recurrence.Rule
	EventID string // seeds the jitter
	// Location is the event's zone: a rolled instant keeps its wall-clock
	// time there.
	Location  *time.Location
	Jitter    time.Duration
	Calendars []Calendar
	// Exceptions by the planned instant they change (UTC, µs).
	Exceptions map[time.Time]model.Exception
	// SkipBefore records instants planned before it as skipped, reason
	// paused (an event resuming from a pause whose instants are skipped).
	SkipBefore time.Time
	// Now is the moment of planning: a roll never lands before it.
	Now time.Time
}

// Calendar is an exclusion calendar as the planner uses it, with the
// event's policy for it.
type Calendar struct {
	Blocks Blocker
	Policy string // model.CalendarSkip, CalendarRollForward or CalendarRollBackward
}

// Blocker reports whether an instant falls on a blocked day
// (calendar.Compiled).
type Blocker interface {
	Blocks(t time.Time) bool
}

// Plain reports whether the series plans its rule's instants unchanged (no
// jitter, calendars, exceptions or pause).
func (s *Series) Plain() bool {
	return s.Jitter <= 0 && len(s.Calendars) == 0 && len(s.Exceptions) == 0 && s.SkipBefore.IsZero()
}

// rows turns the rule's instants into the rows to write, in this order:
// a DST-gap reading is skipped (dst_gap); a blocked day skips or rolls the
// instant (calendar); jitter spreads it; an exception skips or moves it;
// a pause skips it. Two rows never share an instant: the firing one wins.
func (s *Series) rows(instants []recurrence.Instant, from, horizon time.Time) []model.Planned {
	out := make([]model.Planned, 0, len(instants))
	out = append(out, s.earlyMoves(instants, from, horizon)...)
	plain := s.Plain()
	for _, in := range instants {
		if plain && !in.Skipped {
			out = append(out, model.Planned{At: model.RoundUp(in.At), Status: model.OccurrencePending})
			continue
		}
		if in.Skipped {
			out = append(out, model.Planned{At: model.RoundUp(in.At), Status: model.OccurrenceSkipped,
				Reason: model.ReasonDSTGap, Note: "skipped: the local time does not exist (daylight saving)"})
			continue
		}
		out = append(out, s.plan(in.At))
	}
	if plain && len(out) == len(instants) && len(s.Exceptions) == 0 {
		return out // sorted and unique as the engine returned them
	}
	return dedupe(out)
}

// earlyMoves are the rows of instants moved into [from, horizon) from an
// instant the window does not reach yet (moved earlier): they must exist
// before their new time. The planner emits them again when it reaches the
// original instant, which the unique (event, instant) key makes a no-op.
func (s *Series) earlyMoves(instants []recurrence.Instant, from, horizon time.Time) []model.Planned {
	var out []model.Planned
	last := from
	if n := len(instants); n > 0 {
		last = instants[n-1].At
	}
	for at, ex := range s.Exceptions {
		if ex.Action != model.ExceptionMove || ex.To == nil || !at.After(last) {
			continue
		}
		if to := *ex.To; !to.Before(from) && to.Before(horizon) && !to.Before(s.SkipBefore) {
			orig := at
			out = append(out, model.Planned{At: model.RoundUp(to), Original: &orig, Status: model.OccurrencePending})
		}
	}
	return out
}

// reach is how far jitter and calendar rolls can carry an instant from its
// place in the rule.
func (s *Series) reach() time.Duration {
	for _, c := range s.Calendars {
		if c.Policy != model.CalendarSkip {
			return s.Jitter + (MaxRoll+1)*24*time.Hour
		}
	}
	return s.Jitter
}

// Plans reports whether at is an instant the series plans to fire, before
// exceptions (what an exception may address). It looks as far around at as
// jitter and calendar rolls can shift an instant.
func (s *Series) Plans(at time.Time) (bool, error) {
	span := s.reach() + time.Microsecond
	probe := *s
	probe.Exceptions, probe.SkipBefore = nil, time.Time{}
	instants, err := recurrence.ExpandInstants(s.Rule, at.Add(-span), at.Add(span), 100_000)
	if err != nil && len(instants) == 0 {
		return false, err
	}
	for _, r := range probe.rows(instants, at, at) {
		if r.At.Equal(at) && r.Status == model.OccurrencePending {
			return true, nil
		}
	}
	return false, nil
}

// plan decides one firing instant of the rule.
func (s *Series) plan(nominal time.Time) model.Planned {
	at, rolled, blocked := s.applyCalendars(nominal)
	p := model.Planned{At: model.RoundUp(at.Add(s.offset(nominal))), Status: model.OccurrencePending}
	if blocked {
		p.At, p.Status, p.Reason = model.RoundUp(nominal.Add(s.offset(nominal))), model.OccurrenceSkipped, model.ReasonCalendar
		p.Note = "skipped: an exclusion calendar blocks this day"
	} else if rolled {
		orig := model.RoundUp(nominal)
		p.Original = &orig
	}
	if ex, ok := s.Exceptions[p.At]; ok {
		switch ex.Action {
		case model.ExceptionSkip:
			p.Status, p.Reason, p.Note = model.OccurrenceSkipped, model.ReasonManual, skipNote(ex)
			if ex.To != nil { // skipped where an earlier move had put it
				orig := p.At
				p.At, p.Original = model.RoundUp(*ex.To), &orig
			}
		case model.ExceptionMove:
			if ex.To != nil && p.Status == model.OccurrencePending {
				orig := p.At
				p.At, p.Original = model.RoundUp(*ex.To), &orig
			}
		}
	}
	if p.Status == model.OccurrencePending && p.At.Before(s.SkipBefore) {
		p.Status, p.Note = model.EndedBy(model.ReasonPaused)
		p.Reason = model.ReasonPaused
	}
	return p
}

func skipNote(ex model.Exception) string {
	note := "skipped"
	if ex.CreatedBy != "" {
		note += " by " + ex.CreatedBy
	}
	if ex.Reason != "" {
		note += ": " + ex.Reason
	}
	return note
}

// applyCalendars checks the nominal instant against the calendars in order:
// a blocked day under "skip" skips it; under a roll it moves to the nearest
// allowed day in that direction at the same wall-clock time, unless that
// lands before now, on an instant the series already has, or beyond MaxRoll
// days (then it is skipped too).
func (s *Series) applyCalendars(nominal time.Time) (at time.Time, rolled, blocked bool) {
	policy := ""
	for _, c := range s.Calendars {
		if c.Blocks.Blocks(nominal) {
			policy = c.Policy
			break
		}
	}
	switch policy {
	case "":
		return nominal, false, false
	case model.CalendarRollForward, model.CalendarRollBackward:
		step := 1
		if policy == model.CalendarRollBackward {
			step = -1
		}
		if cand, ok := s.roll(nominal, step); ok {
			return cand, true, false
		}
	}
	return nominal, false, true
}

// roll finds the nearest day in direction step whose same wall-clock time
// no calendar blocks.
func (s *Series) roll(nominal time.Time, step int) (time.Time, bool) {
	loc := s.Location
	if loc == nil {
		loc = time.UTC
	}
	wall := nominal.In(loc)
	for k := 1; k <= MaxRoll; k++ {
		cand := time.Date(wall.Year(), wall.Month(), wall.Day()+k*step, wall.Hour(), wall.Minute(), wall.Second(),
			wall.Nanosecond(), loc).UTC()
		if s.blocked(cand) {
			continue
		}
		if cand.Before(s.Now) || s.inRule(cand) {
			return time.Time{}, false
		}
		return cand, true
	}
	return time.Time{}, false
}

func (s *Series) blocked(t time.Time) bool {
	for _, c := range s.Calendars {
		if c.Blocks.Blocks(t) {
			return true
		}
	}
	return false
}

// inRule reports whether t is itself an instant of the rule.
func (s *Series) inRule(t time.Time) bool {
	got, err := recurrence.Expand(s.Rule, t, t.Add(time.Microsecond), 1)
	return err != nil || len(got) > 0
}

// offset is the instant's deterministic jitter in [0, Jitter): a hash of
// the event and the nominal instant, so every instance and every preview
// computes the same one.
func (s *Series) offset(nominal time.Time) time.Duration {
	if s.Jitter <= 0 {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(s.EventID))
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(nominal.UnixMicro()))
	h.Write(b[:])
	span := uint64(s.Jitter / time.Microsecond)
	if span == 0 {
		return 0
	}
	return time.Duration(h.Sum64()%span) * time.Microsecond
}

// dedupe keeps one row per instant, preferring a firing row, and sorts the
// rows by instant.
func dedupe(rows []model.Planned) []model.Planned {
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].At.Before(rows[j].At) })
	out := rows[:0]
	for _, r := range rows {
		if n := len(out); n > 0 && out[n-1].At.Equal(r.At) {
			if out[n-1].Status != model.OccurrencePending && r.Status == model.OccurrencePending {
				out[n-1] = r
			}
			continue
		}
		out = append(out, r)
	}
	return out
}

// Preview returns the series' next n rows strictly after after, as they
// will be written: jittered, rolled, moved, and skipped ones with their
// reason (a DST gap, a calendar, an exception). It looks back as far as
// jitter and rolls can carry an earlier instant past after.
func (s *Series) Preview(after time.Time, n int) ([]model.Planned, error) {
	span := s.reach()
	from := after.Add(-span)
	var instants []recurrence.Instant
	if span > 0 {
		// Earlier instants that jitter or a roll may carry past after (a
		// bounded look: a dense rule shows its nearest ones).
		back, err := recurrence.ExpandInstants(s.Rule, from, after, maxLookBack)
		if err != nil && len(back) == 0 {
			return nil, err
		}
		instants = back
	}
	ahead, err := recurrence.ExpandInstants(s.Rule, after.Add(time.Nanosecond), previewEnd, n+previewMargin)
	if err != nil && len(ahead) == 0 {
		return nil, err
	}
	instants = append(instants, ahead...)
	horizon := previewEnd
	if len(ahead) == n+previewMargin {
		horizon = ahead[len(ahead)-1].At
	}
	var out []model.Planned
	for _, r := range s.rows(instants, from, horizon) {
		if r.At.After(after) && (r.At.Before(horizon) || horizon.Equal(previewEnd)) {
			out = append(out, r)
		}
	}
	if len(out) > n {
		out = out[:n]
	}
	return out, err
}

// previewMargin is how many instants beyond the count a preview plans, so
// that instants rolled or jittered past their neighbours still show.
const previewMargin = 64

// previewEnd is where a preview stops looking: the end of year 9999.
var previewEnd = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)

// maxLookBack bounds the earlier instants a preview considers.
const maxLookBack = 10_000

// Range returns the rows of the rule's readings in [from, to] as they are
// written (jittered, rolled, moved, skipped with their reason), for a
// backfill: every reading of the range, whether it fires or not, except
// those jitter or a calendar carries out of it. ErrTooMany when the range
// holds more than max readings.
func (s *Series) Range(from, to time.Time, max int) ([]model.Planned, error) {
	end := to.Add(time.Microsecond)
	instants, err := recurrence.ExpandInstants(s.Rule, from, end, max+1)
	if err != nil {
		return nil, err
	}
	if len(instants) > max {
		return nil, ErrTooMany
	}
	var out []model.Planned
	for _, r := range s.rows(instants, from, end) {
		if !r.At.Before(from) && r.At.Before(end) {
			out = append(out, r)
		}
	}
	return out, nil
}

// ErrTooMany is Range's answer for a range with more readings than its cap.
var ErrTooMany = errors.New("too many instants in the range")
