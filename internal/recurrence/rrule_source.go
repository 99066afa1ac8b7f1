package recurrence

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/teambition/rrule-go"
)

// rruleSource expands an RRULE (or a mapped schedule) in wall-clock time.
// rrule-go iterates floating wall readings; each is resolved in the zone
// under the event's DST policy (by default a nonexistent reading is dropped
// and not counted, RFC 5545 §3.3.10, and a repeated one fires at its first
// occurrence). COUNT, UNTIL, EXDATE and RDATE are applied here, on real
// instants.
type rruleSource struct {
	loc   *time.Location
	opt   rrule.ROption // explicit defaults, Dtstart = wall DTSTART (whole seconds)
	base  *rrule.RRule  // iterates from DTSTART
	count int
	until time.Time // inclusive real instant; zero means none
	frac  time.Duration
	// start is DTSTART as an instant: when it is the second pass of a
	// repeated local time, its reading resolves to the first pass, an hour
	// early; the first instance fires at start instead.
	start   time.Time
	exdates map[int64]struct{} // unix seconds
	exdays  map[civilDate]struct{}
	rdates  []time.Time // sorted, unique, microsecond-rounded
	dst     dstPolicy
	// noAnchor turns re-anchoring off (tests compare both ways).
	noAnchor bool
	// lastAnchor caches the rule rebuilt at the most recent anchor:
	// consecutive expander windows nearly always share one.
	lastAnchor atomic.Pointer[anchoredRule]
}

// rulePool recycles the per-call copies of rrule.RRule (a large struct that
// rrule-go writes to while iterating, so calls cannot share one).
var rulePool = sync.Pool{New: func() any { return new(rrule.RRule) }}

// anchoredRule is an immutable template; callers iterate copies of it.
type anchoredRule struct {
	at   time.Time
	rule rrule.RRule
}

// anchoredAt returns a copy of the base rule with DTSTART moved to anchor.
func (s *rruleSource) anchoredAt(anchor time.Time) rrule.RRule {
	if a := s.lastAnchor.Load(); a != nil && a.at.Equal(anchor) {
		return a.rule
	}
	r := *s.base
	r.DTStart(anchor) // re-derives only what depends on DTSTART
	s.lastAnchor.Store(&anchoredRule{at: anchor, rule: r})
	return r
}

func newRRuleSource(p *parsedRRule, start time.Time, loc *time.Location, dst dstPolicy) (*rruleSource, error) {
	wall := wallOf(start, loc)
	d0 := wall.Truncate(time.Second)
	s := &rruleSource{
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
	base, err := rrule.NewRRule(s.opt)
	if err != nil {
		return nil, err
	}
	s.base = base
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
	// rrule-go writes to its RRule while iterating, so every call works on
	// its own copy; that keeps Rule safe for concurrent use.
	r := rulePool.Get().(*rrule.RRule)
	defer rulePool.Put(r)
	if anchor, ok := s.anchorFor(out.from); ok && s.count == 0 && !s.noAnchor {
		*r = s.anchoredAt(anchor)
	} else {
		*r = *s.base
	}
	next := r.Iterator()
	zone := s.dst.resolver(s.loc, gapSkip)
	if len(s.exdates) > 0 || len(s.exdays) > 0 {
		out.ex = s
	}
	if !out.skips && out.times == nil {
		out.times = make([]time.Time, 0, min(out.limit, 8))
	}
	n := 0 // readings counted for COUNT
	for {
		w, ok := next()
		if !ok {
			out.release(out.to)
			return nil
		}
		if !b.spend() {
			return b.err()
		}
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
		at := t.Add(s.frac)
		if at.Before(s.start) { // DTSTART on a repeated hour's second pass: never early
			at, kind = s.start, wallOnce
		}
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

// pastUntil reports whether instant t (before the DTSTART fraction) is after
// UNTIL.
func (s *rruleSource) pastUntil(t time.Time) bool {
	return !s.until.IsZero() && t.After(s.until)
}

// anchorFor returns a later DTSTART for the iteration: the start of the
// rule's period (per FREQ and INTERVAL, counted from DTSTART) that holds the
// wall reading just before from. Every instant from that period on is an
// instant of the original rule and nothing in between is lost, so a window
// years after DTSTART costs the same as one at DTSTART.
func (s *rruleSource) anchorFor(from time.Time) (time.Time, bool) {
	target := wallOf(from, s.loc).Add(-s.dst.lookback(from, s.loc))
	d0 := s.opt.Dtstart
	if !target.After(d0) {
		return time.Time{}, false
	}
	i := max(s.opt.Interval, 1)
	// fixed counts whole periods in seconds: a time.Duration saturates at
	// about 292 years, which a preview "after" year 5000 exceeds.
	fixed := func(p0 time.Time, unit time.Duration) (time.Time, bool) {
		u := int64(unit / time.Second)
		k := (target.Unix() - p0.Unix()) / u
		if k < 1 {
			return time.Time{}, false
		}
		return time.Unix(p0.Unix()+k*u, int64(p0.Nanosecond())).In(p0.Location()), true
	}
	y0, m0, day0 := d0.Date()
	ty, tm, _ := target.Date()
	switch s.opt.Freq {
	case rrule.SECONDLY:
		return fixed(d0, time.Duration(i)*time.Second)
	case rrule.MINUTELY:
		return fixed(d0.Truncate(time.Minute), time.Duration(i)*time.Minute)
	case rrule.HOURLY:
		return fixed(d0.Truncate(time.Hour), time.Duration(i)*time.Hour)
	case rrule.DAILY:
		return fixed(time.Date(y0, m0, day0, 0, 0, 0, 0, time.UTC), time.Duration(i)*24*time.Hour)
	case rrule.WEEKLY:
		back := (int(d0.Weekday()) + 6 - s.opt.Wkst.Day() + 7) % 7 // days since WKST
		p0 := time.Date(y0, m0, day0-back, 0, 0, 0, 0, time.UTC)
		return fixed(p0, time.Duration(i)*7*24*time.Hour)
	case rrule.MONTHLY:
		k := ((ty-y0)*12 + int(tm-m0)) / i
		if k < 1 {
			return time.Time{}, false
		}
		return time.Date(y0, m0+time.Month(k*i), 1, 0, 0, 0, 0, time.UTC), true
	default: // YEARLY
		k := (ty - y0) / i
		if k < 1 {
			return time.Time{}, false
		}
		return time.Date(y0+k*i, 1, 1, 0, 0, 0, 0, time.UTC), true
	}
}
