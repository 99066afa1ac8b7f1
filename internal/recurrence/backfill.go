package recurrence

import (
	"errors"
	"math/big"
	"time"

	"github.com/teambition/rrule-go"
)

// ErrNoPattern is CompileBackfill's answer for a one-time spec: it has no
// pattern to evaluate over a past range.
var ErrNoPattern = errors.New("a one-time event has no pattern to backfill")

// CompileBackfill compiles spec as a backfill of a range starting at from
// evaluates it: the same wall-clock pattern in the spec's zone, as if the
// series had begun early enough to cover from, with COUNT and UNTIL lifted.
// DTSTART moves back by whole periods of the pattern (so that INTERVAL keeps
// its phase and the BY* defaults DTSTART implies stay the same), to a moment
// strictly before from: an RFC 5545 DTSTART is an instance even when the
// pattern does not match it, and the moved one must never be. A cron
// expression loses its lower bound; "@every" moves its base back by whole
// intervals.
func CompileBackfill(spec Spec, from time.Time, limits Limits) (*Rule, error) {
	r, err := Compile(spec, limits)
	if err != nil {
		return nil, err
	}
	if !r.recurring {
		return nil, ErrNoPattern
	}
	back := *r
	switch src := r.src.(type) {
	case *cronSource:
		c := *src
		c.lower = time.Time{}
		back.src, back.start = &c, time.Time{}
	case everySource:
		if src.start.After(from) {
			// k = ceil((start - from) / every) intervals back.
			d := big.NewInt(int64(src.every))
			k := nanosBetween(from, src.start)
			k.Add(k, new(big.Int).Sub(d, big.NewInt(1))).Quo(k, d)
			src.start = addNanos(src.start, k.Neg(k).Mul(k, d))
		}
		back.src, back.start = src, src.start
	case *rruleSource:
		p, err := backfillParse(spec, r.loc, r.limits)
		if err != nil {
			return nil, err
		}
		start := r.start
		if !start.Before(from) {
			if start, err = earlierStart(r.start, from, r.loc, &src.opt); err != nil {
				return nil, err
			}
		}
		s, err := buildRRule(src.field, p, start, r.loc, src.dst, r.limits)
		if err != nil {
			return nil, err
		}
		back.src, back.start = s, s.start
	}
	return &back, nil
}

// backfillParse reads spec's rule again with COUNT and UNTIL lifted.
func backfillParse(spec Spec, loc *time.Location, limits Limits) (*parsedRRule, error) {
	field, text := "rrule", spec.RRule
	var exdates []time.Time
	if spec.Schedule != nil {
		field, text, exdates = "schedule", spec.Schedule.RRule(), spec.Schedule.Exdates
	}
	p, err := parseRRuleText(field, text, loc, limits.MaxCount)
	if err != nil {
		return nil, err
	}
	p.exdates = append(p.exdates, exdates...)
	p.count, p.until = 0, time.Time{}
	return p, nil
}

// earlierStart moves start back by whole periods of the rule until it is
// before from, keeping its wall-clock reading in loc. The period is where
// the rule's pattern repeats in wall-clock terms: INTERVAL units of its
// frequency, rounded up to whole days (a sub-daily INTERVAL's phase
// repeats every lcm(INTERVAL, units a day)) or, for months, to whole years
// (month lengths differ; a year keeps the day of the month). A reading
// that the earlier date lacks (a DST gap, 29 February) takes another period.
func earlierStart(start, from time.Time, loc *time.Location, opt *rrule.ROption) (time.Time, error) {
	interval := max(opt.Interval, 1)
	var years, days int
	switch opt.Freq {
	case rrule.YEARLY:
		years = interval
	case rrule.MONTHLY:
		years = lcm(interval, 12) / 12
	case rrule.WEEKLY:
		days = 7 * interval
	case rrule.DAILY:
		days = interval
	case rrule.HOURLY:
		days = lcm(interval, 24) / 24
	case rrule.MINUTELY:
		days = lcm(interval, 24*60) / (24 * 60)
	default: // SECONDLY
		days = lcm(interval, 24*60*60) / (24 * 60 * 60)
	}
	wall := wallOf(start, loc)
	y, mo, d := wall.Date()
	h, mi, sec := wall.Clock()
	// Enough periods to pass from, estimated in elapsed time (a day is at
	// least 23 hours, a year at least 365 days), then one at a time.
	span := float64(start.Unix()-from.Unix()) / 3600
	k := 1
	if years > 0 {
		k += int(span / (24 * 365 * float64(years)))
	} else {
		k += int(span / (23 * float64(days)))
	}
	for tries := 0; tries < 64; tries, k = tries+1, k+1 {
		w := time.Date(y-k*years, mo, d-k*days, h, mi, sec, wall.Nanosecond(), time.UTC)
		if w.Year() < 1 {
			break
		}
		if years > 0 && (w.Month() != mo || w.Day() != d) {
			continue // 29 February in a year without one
		}
		t, ok := resolveWall(w, loc)
		if ok && t.Before(from) {
			return t, nil
		}
	}
	return time.Time{}, fieldErrorf("from", "is too far before the event's start_time for its pattern")
}

func lcm(a, b int) int {
	x, y := a, b
	for y != 0 {
		x, y = y, x%y
	}
	return a / x * b
}
