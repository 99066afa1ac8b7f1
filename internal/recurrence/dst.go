package recurrence

import "time"

// DST is an event's policy for local times that do not exist (spring-forward
// gap) or occur twice (fall back). The zero value keeps each source's
// documented default; @every and one-time events ignore it.
type DST struct {
	Gap    string `json:"gap,omitempty"`    // "" (the source's default), GapShift or GapSkip
	Repeat string `json:"repeat,omitempty"` // "" (= RepeatFirst), RepeatFirst, RepeatLast or RepeatBoth
}

// Values of DST.Gap and DST.Repeat.
const (
	// GapShift reads a nonexistent local time with the offset in force before
	// the gap (RFC 5545 §3.3.5): 02:30 on a one-hour spring forward fires at
	// 03:30 of the new offset.
	GapShift = "shift"
	// GapSkip drops a nonexistent local time: it does not fire (and COUNT
	// does not count it).
	GapSkip = "skip"
	// RepeatFirst fires a repeated local time once, at its first occurrence.
	RepeatFirst = "first"
	// RepeatLast fires a repeated local time once, at its second occurrence.
	RepeatLast = "last"
	// RepeatBoth fires a repeated local time at both occurrences; COUNT
	// counts them as one.
	RepeatBoth = "both"
)

type gapPolicy uint8

const (
	gapDefault gapPolicy = iota // the source's own: gapSkip for rrule and schedule, gapNext for cron
	gapNext                     // fire at the first valid instant after the gap (classic cron)
	gapShift
	gapSkip
)

type repeatPolicy uint8

const (
	repeatFirst repeatPolicy = iota
	repeatLast
	repeatBoth
)

// dstPolicy is a validated DST; the zero value is every source's default.
type dstPolicy struct {
	gap    gapPolicy
	repeat repeatPolicy
}

func (d DST) compile() (dstPolicy, error) {
	var p dstPolicy
	switch d.Gap {
	case "":
	case GapShift:
		p.gap = gapShift
	case GapSkip:
		p.gap = gapSkip
	default:
		return p, fieldErrorf("dst.gap", "%q is not a gap policy: use %q, %q, or leave it empty for the source's default",
			truncate(d.Gap), GapShift, GapSkip)
	}
	switch d.Repeat {
	case "", RepeatFirst:
	case RepeatLast:
		p.repeat = repeatLast
	case RepeatBoth:
		p.repeat = repeatBoth
	default:
		return p, fieldErrorf("dst.repeat", "%q is not a repeat policy: use %q, %q or %q (empty means %q)",
			truncate(d.Repeat), RepeatFirst, RepeatLast, RepeatBoth, RepeatFirst)
	}
	return p, nil
}

// resolver returns a resolver applying the policy, with sourceGap standing in
// for gapDefault.
func (p dstPolicy) resolver(loc *time.Location, sourceGap gapPolicy) *resolver {
	gap := p.gap
	if gap == gapDefault {
		gap = sourceGap
	}
	return &resolver{loc: loc, gap: gap, repeat: p.repeat}
}

// lookback is the package's lookback plus, when a repeated reading may fire
// at its second occurrence, the fall-back jump just ahead of from: a reading
// whose first occurrence is before from can then still fire at or after it.
func (p dstPolicy) lookback(from time.Time, loc *time.Location) time.Duration {
	d := lookback(from, loc)
	if p.repeat == repeatFirst || loc == time.UTC {
		return d
	}
	t := from.In(loc)
	_, end := t.ZoneBounds()
	if end.IsZero() {
		return d
	}
	_, off := t.Zone()
	_, next := end.In(loc).Zone()
	if jump := time.Duration(off-next) * time.Second; jump > 0 && end.Sub(from) < jump {
		d += jump
	}
	return d
}

// wallKind says how a wall reading fires under a DST policy.
type wallKind uint8

const (
	wallOnce    wallKind = iota // fires once, at t; readings in order give instants in order
	wallTwice                   // repeated, "both": fires at t and at resolver.second, which is later than the next readings' t
	wallGap                     // nonexistent, fires at t, which can be later than the next readings' t
	wallSkipped                 // nonexistent, dropped; t is where it would be, read with the offset before the gap
)

// read maps a wall reading to the instant it fires at under the resolver's
// policy. The cache answers readings that exist exactly once (and, for
// RepeatFirst, repeated ones) without a zone lookup.
func (r *resolver) read(w time.Time) (time.Time, wallKind) {
	if r.loc == time.UTC {
		return w, wallOnce
	}
	if r.valid && (r.openLo || !w.Before(r.lo)) && (r.openHi || w.Before(r.hi)) {
		return w.Add(-r.off), wallOnce
	}
	t, ok := resolveWall(w, r.loc)
	if !ok {
		switch r.gap {
		case gapShift:
			return beforeGap(w, t, r.loc), wallGap
		case gapSkip:
			return beforeGap(w, t, r.loc), wallSkipped
		default:
			return t, wallGap
		}
	}
	r.remember(t)
	if r.repeat == repeatFirst {
		return t, wallOnce
	}
	later, ok := secondOccurrence(w, t, r.loc)
	switch {
	case !ok:
		return t, wallOnce
	case r.repeat == repeatLast:
		return later, wallOnce
	default:
		r.second = later
		return t, wallTwice
	}
}

// beforeGap reads w, a reading in the gap that ends at transition, with the
// offset in force before the gap (RFC 5545 §3.3.5).
func beforeGap(w, transition time.Time, loc *time.Location) time.Time {
	_, before := transition.Add(-time.Nanosecond).In(loc).Zone()
	return w.Add(-time.Duration(before) * time.Second)
}

// secondOccurrence returns the later instant showing reading w, whose first
// instant is first, when a fall back repeats it.
func secondOccurrence(w, first time.Time, loc *time.Location) (time.Time, bool) {
	local := first.In(loc)
	_, end := local.ZoneBounds()
	if end.IsZero() {
		return time.Time{}, false
	}
	_, off := local.Zone()
	_, next := end.In(loc).Zone()
	if next >= off {
		return time.Time{}, false
	}
	later := first.Add(time.Duration(off-next) * time.Second)
	if later.Before(end) || !wallOf(later, loc).Equal(w) {
		return time.Time{}, false
	}
	return later.UTC(), true
}
