package recurrence

import "time"

// Wall-clock readings are carried as time.Time values in UTC whose fields are
// the local fields ("floating" time). Arithmetic on them is DST-free, which is
// what RRULE and cron iteration need; resolveWall maps a reading back to a
// real instant once, at the end.

// wallOf returns the wall-clock reading of instant t in loc, as floating time.
func wallOf(t time.Time, loc *time.Location) time.Time {
	if loc == time.UTC {
		return t.UTC()
	}
	_, off := t.In(loc).Zone()
	return t.UTC().Add(time.Duration(off) * time.Second)
}

// resolveWall maps a floating wall-clock reading to the first instant at which
// the clocks in loc show it. ok is false when the reading does not exist (it
// falls in a spring-forward gap); t is then the first valid instant after the
// gap (the transition itself), which is where cron fires.
func resolveWall(w time.Time, loc *time.Location) (t time.Time, ok bool) {
	if loc == time.UTC {
		return w, true
	}
	y, mo, d := w.Date()
	h, mi, s := w.Clock()
	t = time.Date(y, mo, d, h, mi, s, w.Nanosecond(), loc)
	got := wallOf(t, loc)
	if !got.Equal(w) {
		start, end := t.ZoneBounds()
		if got.After(w) {
			return start.UTC(), false
		}
		return end.UTC(), false
	}
	// A reading repeated by a fall-back transition exists in the previous
	// zone period too; the earlier instant wins.
	start, _ := t.ZoneBounds()
	if !start.IsZero() {
		_, off := t.Zone()
		_, prevOff := start.Add(-time.Nanosecond).Zone()
		if prevOff > off {
			cand := t.Add(-time.Duration(prevOff-off) * time.Second)
			if cand.Before(start) && wallOf(cand, loc).Equal(w) {
				return cand.UTC(), true
			}
		}
	}
	return t.UTC(), true
}

// resolveExplicit maps an explicit local DATE-TIME (RDATE, EXDATE, UNTIL,
// a natural-language start) to an instant as RFC 5545 §3.3.5 says: a reading
// in a gap is read with the offset in force before the gap (02:30 becomes
// 03:30 on a one-hour spring-forward), a repeated one means its first
// occurrence. The result is never earlier than the reading intended.
func resolveExplicit(w time.Time, loc *time.Location) time.Time {
	t, ok := resolveWall(w, loc)
	if ok {
		return t
	}
	return beforeGap(w, t, loc)
}

// lookback is how far before from's wall reading an iteration over wall
// readings must begin so that it visits every reading whose instant is at or
// after from: the largest forward offset jump in the 48 hours before from,
// plus one second for a DTSTART's sub-second part.
func lookback(from time.Time, loc *time.Location) time.Duration {
	margin := time.Second
	if loc == time.UTC {
		return margin
	}
	t := from.In(loc)
	_, off := t.Zone()
	floor := from.Add(-48 * time.Hour)
	maxJump := 0
	for range 8 {
		start, _ := t.ZoneBounds()
		if start.IsZero() || start.Before(floor) {
			break
		}
		t = start.Add(-time.Nanosecond).In(loc)
		_, prev := t.Zone()
		if off-prev > maxJump {
			maxJump = off - prev
		}
	}
	return margin + time.Duration(maxJump)*time.Second
}

// ceilMicro rounds t up to the next microsecond: stored instants have
// microsecond precision and must never be early.
func ceilMicro(t time.Time) time.Time {
	tr := t.Truncate(time.Microsecond)
	if tr.Before(t) {
		tr = tr.Add(time.Microsecond)
	}
	return tr.UTC()
}

// resolver maps an expansion's wall readings to instants under a DST policy
// (read), with a cache of the zone period last resolved: consecutive readings
// of one expansion nearly always fall in the same period, where a reading
// that exists once maps to an instant by subtracting one offset. A resolver
// belongs to one Expand call (it is not safe for concurrent use).
type resolver struct {
	loc    *time.Location
	gap    gapPolicy // never gapDefault
	repeat repeatPolicy
	second time.Time // the later instant of the last wallTwice reading

	valid  bool
	lo, hi time.Time // wall readings in [lo, hi) map to reading - off
	openLo bool      // no lower bound (first period of the zone)
	openHi bool      // no upper bound (last period of the zone)
	off    time.Duration
}

// newResolver resolves as resolveWall does: first occurrence, end of the gap.
func newResolver(loc *time.Location) *resolver {
	return &resolver{loc: loc, gap: gapNext}
}

// resolve is resolveWall, answered from the cache when it can be (for a
// resolver made by newResolver).
func (r *resolver) resolve(w time.Time) (time.Time, bool) {
	t, kind := r.read(w)
	return t, kind != wallGap
}

// remember caches the period holding instant t, minus the readings the
// policy does not map into it: those repeated from the previous period (their
// first occurrence lies there) unless the policy is RepeatLast, and, unless it
// is RepeatFirst, those the next period repeats.
func (r *resolver) remember(t time.Time) {
	local := t.In(r.loc)
	start, end := local.ZoneBounds()
	_, off := local.Zone()
	r.off = time.Duration(off) * time.Second
	r.openLo, r.openHi = start.IsZero(), end.IsZero()
	if !r.openLo {
		lo := off
		if r.repeat != repeatLast {
			_, prev := start.Add(-time.Nanosecond).In(r.loc).Zone()
			lo = max(off, prev)
		}
		r.lo = start.UTC().Add(time.Duration(lo) * time.Second)
	}
	if !r.openHi {
		hi := off
		if r.repeat != repeatFirst {
			_, next := end.In(r.loc).Zone()
			hi = min(off, next)
		}
		r.hi = end.UTC().Add(time.Duration(hi) * time.Second)
	}
	r.valid = true
}
