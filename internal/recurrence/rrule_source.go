package recurrence

import (
	"slices"
	"time"

	"github.com/teambition/rrule-go"
)

// rruleSource expands an RRULE (or a mapped schedule) in wall-clock time.
// Our iterator (iterate.go) produces floating wall readings; each is
// resolved in the zone under the event's DST policy (by default a
// nonexistent reading is dropped and not counted, RFC 5545 §3.3.10, and a
// repeated one fires at its first occurrence). COUNT, UNTIL, EXDATE and
// RDATE are applied here, on real instants.
type rruleSource struct {
	field string // "rrule" or "schedule", for errors
	loc   *time.Location
	opt   rrule.ROption // explicit defaults, Dtstart = wall DTSTART (whole seconds)
	plan  *rulePlan
	count int
	until time.Time // inclusive real instant; zero means none
	frac  time.Duration
	// start is DTSTART as an instant, the first instance (inSeries): its
	// reading alone cannot say which pass of a repeated local time it is.
	start   time.Time
	exdates map[int64]struct{} // unix seconds
	exdays  map[civilDate]struct{}
	rdates  []time.Time // sorted, unique, microsecond-rounded
	dst     dstPolicy
	// noAnchor makes every expansion iterate from DTSTART (tests compare
	// both ways).
	noAnchor bool
}

func newRRuleSource(field string, p *parsedRRule, start time.Time, loc *time.Location, dst dstPolicy) (*rruleSource, error) {
	wall := wallOf(start, loc)
	d0 := wall.Truncate(time.Second)
	s := &rruleSource{
		field:   field,
		loc:     loc,
		opt:     p.opt,
		count:   p.count,
		until:   p.until,
		frac:    ceilMicro(start).Sub(ceilMicro(start).Truncate(time.Second)),
		start:   ceilMicro(start),
		exdates: map[int64]struct{}{},
		exdays:  map[civilDate]struct{}{},
		dst:     dst,
	}
	s.opt.Dtstart = d0
	s.opt.Count = 0
	s.opt.Until = time.Time{}
	explicitDefaults(&s.opt, d0)
	dedupeLists(&s.opt)
	if _, err := rrule.NewRRule(s.opt); err != nil { // bounds of every BY* list
		return nil, err
	}
	s.plan = newRulePlan(&s.opt)
	for _, t := range p.exdates {
		s.exdates[t.Unix()] = struct{}{}
	}
	for _, d := range p.exdays {
		s.exdays[d] = struct{}{}
	}
	s.rdates = slices.Clone(p.rdates)
	slices.SortFunc(s.rdates, func(a, b time.Time) int { return a.Compare(b) })
	s.rdates = slices.CompactFunc(s.rdates, time.Time.Equal)
	return s, nil
}

func (s *rruleSource) excluded(t time.Time) bool {
	if len(s.exdates) == 0 && len(s.exdays) == 0 {
		return false
	}
	if _, ok := s.exdates[t.Unix()]; ok {
		return true
	}
	if len(s.exdays) > 0 {
		y, m, d := t.In(s.loc).Date()
		if _, ok := s.exdays[civilDate{y, m, d}]; ok {
			return true
		}
	}
	return false
}

// expand appends the instants in [out.from, out.to) to out.
func (s *rruleSource) expand(out *series, b *budget) error {
	var err error
	if s.until.IsZero() || !out.from.After(s.until.Add(s.frac)) {
		err = s.expandRule(out, b)
	}
	if len(s.rdates) == 0 {
		return err
	}
	i, _ := slices.BinarySearchFunc(s.rdates, out.from, func(a, b time.Time) int { return a.Compare(b) })
	var extra []time.Time
	for ; i < len(s.rdates) && s.rdates[i].Before(out.to); i++ {
		if !s.excluded(s.rdates[i]) {
			extra = append(extra, s.rdates[i])
		}
	}
	out.merge(extra)
	return err
}

func (s *rruleSource) expandRule(out *series, b *budget) error {
	b.field, b.freq = s.field, s.opt.Freq.String()
	// The iteration starts at the rule's period holding the wall reading just
	// before from (every instant from that period on is an instant of the
	// rule, so a window years after DTSTART costs the same as one at
	// DTSTART); a COUNT rule starts at DTSTART, since it must count.
	// A window that begins at or before DTSTART iterates from it: when
	// start_time is the second pass of a repeated wall time, the wall reading
	// of an earlier from (the first pass) lies past DTSTART's own reading.
	from := s.plan.d0
	if s.count == 0 && !s.noAnchor && out.from.After(s.start) {
		from = wallOf(out.from, s.loc).Add(-s.dst.lookback(out.from, s.loc)).Unix()
	}
	b.beforeWindow = s.count > 0
	// Readings more than two days of offsets after the window's end cannot
	// fire inside it.
	stop := wallOf(out.to, s.loc).Add(48 * time.Hour).Unix()
	if out.to.After(maxInstant.Add(-72 * time.Hour)) {
		stop = maxInstant.Add(72 * time.Hour).Unix()
	}
	it := s.plan.iterate(from, stop, b)
	zone := s.dst.resolver(s.loc, gapSkip)
	if len(s.exdates) > 0 || len(s.exdays) > 0 {
		out.ex = s
	}
	if !out.skips && out.times == nil {
		out.times = make([]time.Time, 0, min(out.limit, 8))
	}
	n := 0 // readings counted for COUNT
	for {
		sec, ok := it.next()
		if !ok {
			if it.err != nil {
				return it.err
			}
			out.release(out.to)
			return nil
		}
		w := time.Unix(sec, 0).UTC() // the iterator spent the budget for it
		t, kind := zone.read(w)
		switch kind {
		case wallSkipped:
			// Not counted (RFC 5545 §3.3.10); reported while the series
			// lasts, i.e. before COUNT is reached.
			if out.skips && (s.count == 0 || n < s.count) && !s.pastUntil(t) {
				out.hold(Instant{At: t.Add(s.frac), Skipped: true})
			}
			continue
		case wallGap:
			n++
			if s.count > 0 && n > s.count {
				out.release(out.to)
				return nil
			}
			if !s.pastUntil(t) {
				out.hold(Instant{At: t.Add(s.frac)})
			}
			continue
		}
		if sec == s.plan.d0 || t.Add(s.frac).Before(s.start) {
			if t, kind, ok = s.inSeries(sec, w, t, kind, zone); !ok {
				continue
			}
		}
		at := t.Add(s.frac)
		if len(out.held) > 0 {
			if out.release(at) {
				return nil
			}
			if out.taken(at) {
				continue // a gap reading already fires here: one instance, counted once
			}
		}
		n++
		if (s.count > 0 && n > s.count) || s.pastUntil(t) {
			out.release(out.to)
			return nil
		}
		if kind == wallTwice && !s.pastUntil(zone.second) {
			out.hold(Instant{At: zone.second.Add(s.frac)})
		}
		if at.Before(out.from) || s.excluded(at) {
			continue
		}
		b.beforeWindow = false
		if !at.Before(out.to) {
			return nil
		}
		if out.n > 0 && !at.After(out.last) {
			continue // a BY* list that names a value twice
		}
		out.push(at)
		if out.full() {
			return nil
		}
	}
}

// inSeries places reading w (Unix seconds sec), which the policy fires at t
// (kind), in a series that begins at start_time. DTSTART's own reading fires
// at start_time whichever pass of a repeated wall time that is (and, under
// RepeatBoth, also at the later pass when start_time is the earlier): it is
// the first instance, and a wall time fires once. Any other reading whose
// first pass precedes start_time (start_time on the second pass, readings
// after it in the repeated span) fires at its second pass, its first in the
// series, whatever the repeat policy. false: no pass of w is in the series.
func (s *rruleSource) inSeries(sec int64, w, t time.Time, kind wallKind, zone *resolver) (time.Time, wallKind, bool) {
	start := s.start.Add(-s.frac) // start_time's whole second, as the readings are
	switch {
	case sec == s.plan.d0 && kind == wallTwice && zone.second.After(start):
		return start, wallTwice, true
	case sec == s.plan.d0:
		return start, wallOnce, true
	case kind == wallTwice:
		return zone.second, wallOnce, true
	}
	later, ok := secondOccurrence(w, t, s.loc)
	return later, wallOnce, ok && !later.Before(start)
}

// pastUntil reports whether instant t (before the DTSTART fraction) is after
// UNTIL.
func (s *rruleSource) pastUntil(t time.Time) bool {
	return !s.until.IsZero() && t.After(s.until)
}
