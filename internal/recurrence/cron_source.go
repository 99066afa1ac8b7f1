package recurrence

import "time"

// cronSource expands a five-field cron expression in wall-clock time. A
// reading that does not exist (spring-forward gap) fires at the first valid
// instant after the gap, as classic cron does; a repeated reading fires once,
// at its first occurrence.
type cronSource struct {
	spec  *cronSpec
	loc   *time.Location
	lower time.Time // inclusive lower bound (start_time); zero means none
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

func (s *cronSource) expand(from, to time.Time, limit int, b *budget) ([]time.Time, error) {
	if from.Before(s.lower) {
		from = s.lower
	}
	w := wallOf(from, s.loc).Add(-lookback(from, s.loc))
	if t := w.Truncate(time.Minute); t.Before(w) {
		w = t.Add(time.Minute)
	}
	zone := newResolver(s.loc)
	var out []time.Time
	for len(out) < limit {
		match, ok := s.next(w)
		if !ok {
			return out, nil
		}
		if !b.spend() {
			return out, b.err()
		}
		w = match.Add(time.Minute)
		t, _ := zone.resolve(match) // a gap reading resolves to the end of the gap
		t = ceilMicro(t)
		if t.Before(from) {
			continue
		}
		if !t.Before(to) {
			return out, nil
		}
		if len(out) > 0 && !t.After(out[len(out)-1]) {
			continue // several gap readings collapse onto one instant
		}
		out = append(out, t)
	}
	return out, nil
}
