package recurrence

import "time"

// cronSource expands a five-field cron expression in wall-clock time under
// the event's DST policy. By default a reading that does not exist
// (spring-forward gap) fires at the first valid instant after the gap, as
// classic cron does, and a repeated reading fires once, at its first
// occurrence.
type cronSource struct {
	spec  *cronSpec
	loc   *time.Location
	lower time.Time // inclusive lower bound (start_time); zero means none
	dst   dstPolicy
}

// maxCronYear bounds the search for the next match.
const maxCronYear = 9999

// next returns the first matching wall reading at or after w (floating,
// whole minutes).
func (s *cronSource) next(w time.Time) (time.Time, bool) {
	c := s.spec
	for w.Year() <= maxCronYear {
		y, mo, d := w.Date()
		if c.month&(1<<uint(mo)) == 0 {
			w = time.Date(y, mo+1, 1, 0, 0, 0, 0, time.UTC)
			continue
		}
		if !c.dayMatches(d, int(w.Weekday())) {
			w = time.Date(y, mo, d+1, 0, 0, 0, 0, time.UTC)
			continue
		}
		h := nextBit(c.hour, w.Hour())
		if h < 0 {
			w = time.Date(y, mo, d+1, 0, 0, 0, 0, time.UTC)
			continue
		}
		if h != w.Hour() {
			w = time.Date(y, mo, d, h, 0, 0, 0, time.UTC)
		}
		m := nextBit(c.minute, w.Minute())
		if m < 0 {
			w = time.Date(y, mo, d, h+1, 0, 0, 0, time.UTC)
			continue
		}
		return time.Date(y, mo, d, h, m, 0, 0, time.UTC), true
	}
	return time.Time{}, false
}

func (s *cronSource) expand(out *series, b *budget) error {
	b.field = "cron"
	if out.from.Before(s.lower) {
		out.from = s.lower
	}
	from := out.from
	w := wallOf(from, s.loc).Add(-s.dst.lookback(from, s.loc))
	if t := w.Truncate(time.Minute); t.Before(w) {
		w = t.Add(time.Minute)
	}
	zone := s.dst.resolver(s.loc, gapNext)
	for !out.full() {
		match, ok := s.next(w)
		if !ok {
			break
		}
		if err := b.spend(); err != nil {
			return err
		}
		w = match.Add(time.Minute)
		t, kind := zone.read(match)
		t = ceilMicro(t)
		switch kind {
		case wallSkipped:
			if out.skips {
				out.hold(Instant{At: t, Skipped: true})
			}
			continue
		case wallGap:
			// Several readings in one gap collapse onto its end by default;
			// held, they merge with the instants after the gap.
			out.hold(Instant{At: t})
			continue
		}
		if len(out.held) > 0 {
			if out.release(t) {
				return nil
			}
			if out.taken(t) {
				continue
			}
		}
		if kind == wallTwice {
			out.hold(Instant{At: ceilMicro(zone.second)})
		}
		if t.Before(from) {
			continue
		}
		if !t.Before(out.to) {
			return nil
		}
		if out.n > 0 && !t.After(out.last) {
			continue // unique whatever the zone data does
		}
		out.push(t)
	}
	out.release(out.to)
	return nil
}
