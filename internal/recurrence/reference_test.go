package recurrence

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// A slow, deliberately naive reading of RFC 5545 §3.3.10, independent of
// iterate.go and of rrule-go: it walks the calendar day by day, tries every
// time of day the BYHOUR/BYMINUTE/BYSECOND lists allow, keeps a candidate
// when each BYxxx part accepts it (weeks and ordinals found by stepping
// through the calendar, not by formula), groups the survivors by their FREQ
// period, keeps the periods INTERVAL reaches from DTSTART's, applies
// BYSETPOS to each whole period, drops what precedes DTSTART, resolves wall
// readings in the zone (a reading in a DST gap is dropped and not counted, a
// repeated one is its first pass) and applies COUNT and UNTIL.

type refRule struct {
	freq     string // SECONDLY … YEARLY
	interval int
	wkst     time.Weekday
	count    int
	until    time.Time // UTC instant, inclusive; zero means none

	byMonth, byWeekNo, byYearDay, byMonthDay []int
	byHour, byMinute, bySecond, bySetPos     []int
	byDay                                    []refDay

	weeks map[refWeekKey][3]int // refWeek's cache; nil for none
}

type refDay struct {
	n  int // 0: every such weekday
	wd time.Weekday
}

var refDayNames = map[time.Weekday]string{time.Monday: "MO", time.Tuesday: "TU", time.Wednesday: "WE",
	time.Thursday: "TH", time.Friday: "FR", time.Saturday: "SA", time.Sunday: "SU"}

// text renders the rule for the engine.
func (r refRule) text() string {
	parts := []string{"FREQ=" + r.freq}
	if r.interval > 1 {
		parts = append(parts, fmt.Sprintf("INTERVAL=%d", r.interval))
	}
	if r.wkst != time.Monday {
		parts = append(parts, "WKST="+refDayNames[r.wkst])
	}
	if r.count > 0 {
		parts = append(parts, fmt.Sprintf("COUNT=%d", r.count))
	}
	if !r.until.IsZero() {
		parts = append(parts, "UNTIL="+r.until.UTC().Format("20060102T150405Z"))
	}
	list := func(key string, v []int) {
		if len(v) > 0 {
			s := make([]string, len(v))
			for i, x := range v {
				s[i] = fmt.Sprint(x)
			}
			parts = append(parts, key+"="+strings.Join(s, ","))
		}
	}
	list("BYMONTH", r.byMonth)
	list("BYWEEKNO", r.byWeekNo)
	list("BYYEARDAY", r.byYearDay)
	list("BYMONTHDAY", r.byMonthDay)
	if len(r.byDay) > 0 {
		s := make([]string, len(r.byDay))
		for i, d := range r.byDay {
			s[i] = refDayNames[d.wd]
			if d.n != 0 {
				s[i] = fmt.Sprint(d.n) + s[i]
			}
		}
		parts = append(parts, "BYDAY="+strings.Join(s, ","))
	}
	list("BYHOUR", r.byHour)
	list("BYMINUTE", r.byMinute)
	list("BYSECOND", r.bySecond)
	list("BYSETPOS", r.bySetPos)
	return "RRULE:" + strings.Join(parts, ";")
}

var refFreqRank = map[string]int{"SECONDLY": 0, "MINUTELY": 1, "HOURLY": 2, "DAILY": 3, "WEEKLY": 4, "MONTHLY": 5, "YEARLY": 6}

// civil dates are time.Time values at midnight UTC.
func refDate(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

// refWeek returns the week-numbering year of day, its week number in that
// year and how many weeks that year has: a week (seven days from a WKST)
// belongs to the year holding at least four of its days, i.e. its fourth
// day.
// cache (may be nil) remembers the answer by the week's first day: a walk
// asks about each week seven times.
func refWeek(day time.Time, wkst time.Weekday, cache map[refWeekKey][3]int) (year, week, weeks int) {
	start := day
	for start.Weekday() != wkst {
		start = start.AddDate(0, 0, -1)
	}
	key := refWeekKey{start.Unix(), wkst}
	if v, ok := cache[key]; ok {
		return v[0], v[1], v[2]
	}
	if cache != nil {
		defer func() { cache[key] = [3]int{year, week, weeks} }()
	}
	year = start.AddDate(0, 0, 3).Year()
	week = 1
	for s := start.AddDate(0, 0, -7); s.AddDate(0, 0, 3).Year() == year; s = s.AddDate(0, 0, -7) {
		week++
	}
	weeks = week
	for s := start.AddDate(0, 0, 7); s.AddDate(0, 0, 3).Year() == year; s = s.AddDate(0, 0, 7) {
		weeks++
	}
	return year, week, weeks
}

type refWeekKey struct {
	start int64
	wkst  time.Weekday
}

// refOrdinal counts day's weekday in [lo, hi]: its position from the start
// and from the end (as a negative number).
func refOrdinal(day, lo, hi time.Time) (fromStart, fromEnd int) {
	for d := day; !d.Before(lo); d = d.AddDate(0, 0, -7) {
		fromStart++
	}
	for d := day; !d.After(hi); d = d.AddDate(0, 0, 7) {
		fromEnd--
	}
	return fromStart, fromEnd
}

func refNamed(values []int, pos, size int) bool {
	for _, v := range values {
		if v == pos || v == pos-size-1 {
			return true
		}
	}
	return false
}

// refDayOK applies BYMONTH, BYWEEKNO, BYYEARDAY, BYMONTHDAY and BYDAY.
func (r refRule) refDayOK(day time.Time) bool {
	y, m, d := day.Date()
	if len(r.byMonth) > 0 && !slices.Contains(r.byMonth, int(m)) {
		return false
	}
	if len(r.byWeekNo) > 0 {
		_, week, weeks := refWeek(day, r.wkst, r.weeks)
		if !refNamed(r.byWeekNo, week, weeks) {
			return false
		}
	}
	yearEnd := refDate(y, 12, 31)
	if len(r.byYearDay) > 0 && !refNamed(r.byYearDay, day.YearDay(), yearEnd.YearDay()) {
		return false
	}
	monthEnd := refDate(y, m+1, 0)
	if len(r.byMonthDay) > 0 && !refNamed(r.byMonthDay, d, monthEnd.Day()) {
		return false
	}
	if len(r.byDay) == 0 {
		return true
	}
	lo, hi := refDate(y, 1, 1), yearEnd
	if r.freq == "MONTHLY" || len(r.byMonth) > 0 {
		lo, hi = refDate(y, m, 1), monthEnd
	}
	for _, bd := range r.byDay {
		if bd.wd != day.Weekday() {
			continue
		}
		if bd.n == 0 {
			return true
		}
		if a, b := refOrdinal(day, lo, hi); bd.n == a || bd.n == b {
			return true
		}
	}
	return false
}

// withDefaults fills what the rule leaves to DTSTART (RFC 5545: "derived
// from DTSTART").
func (r refRule) withDefaults(d0 time.Time) refRule {
	noDay := len(r.byWeekNo) == 0 && len(r.byYearDay) == 0 && len(r.byMonthDay) == 0 && len(r.byDay) == 0
	switch {
	case noDay && r.freq == "YEARLY":
		if len(r.byMonth) == 0 {
			r.byMonth = []int{int(d0.Month())}
		}
		r.byMonthDay = []int{d0.Day()}
	case noDay && r.freq == "MONTHLY":
		r.byMonthDay = []int{d0.Day()}
	case noDay && r.freq == "WEEKLY":
		r.byDay = []refDay{{wd: d0.Weekday()}}
	}
	rank := refFreqRank[r.freq]
	if len(r.byHour) == 0 && rank > refFreqRank["HOURLY"] {
		r.byHour = []int{d0.Hour()}
	}
	if len(r.byMinute) == 0 && rank > refFreqRank["MINUTELY"] {
		r.byMinute = []int{d0.Minute()}
	}
	if len(r.bySecond) == 0 && rank > refFreqRank["SECONDLY"] {
		r.bySecond = []int{d0.Second()}
	}
	return r
}

// refPeriod numbers the FREQ period holding wall reading w; INTERVAL counts
// these numbers.
func (r refRule) refPeriod(w time.Time) int64 {
	day := time.Date(w.Year(), w.Month(), w.Day(), 0, 0, 0, 0, time.UTC)
	days := day.Unix() / 86400
	switch r.freq {
	case "YEARLY":
		return int64(w.Year())
	case "MONTHLY":
		return int64(w.Year())*12 + int64(w.Month())
	case "WEEKLY":
		for day.Weekday() != r.wkst {
			day = day.AddDate(0, 0, -1)
		}
		return day.Unix() / 86400 / 7 // week starts are 7 days apart
	case "DAILY":
		return days
	case "HOURLY":
		return w.Unix() / 3600
	case "MINUTELY":
		return w.Unix() / 60
	default:
		return w.Unix()
	}
}

func orEvery(v []int, n int) []int {
	if len(v) > 0 {
		return v
	}
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// refReadings returns the rule's wall readings (floating time in UTC) from
// DTSTART d0 on, up to the first period starting after end, in order.
func (r refRule) refReadings(d0, end time.Time) []time.Time {
	r = r.withDefaults(d0)
	// Begin at the first day of DTSTART's period so BYSETPOS sees it whole.
	day := time.Date(d0.Year(), d0.Month(), d0.Day(), 0, 0, 0, 0, time.UTC)
	switch r.freq {
	case "YEARLY":
		day = refDate(d0.Year(), 1, 1)
	case "MONTHLY":
		day = refDate(d0.Year(), d0.Month(), 1)
	case "WEEKLY":
		for day.Weekday() != r.wkst {
			day = day.AddDate(0, 0, -1)
		}
	}
	p0 := r.refPeriod(d0)
	hours, minutes, seconds := orEvery(r.byHour, 24), orEvery(r.byMinute, 60), orEvery(r.bySecond, 60)
	// A recurrence set is a set: a value named twice is one candidate.
	for _, l := range []*[]int{&hours, &minutes, &seconds} {
		*l = slices.Clone(*l)
		slices.Sort(*l)
		*l = slices.Compact(*l)
	}
	var out, group []time.Time
	groupKey := int64(-1 << 62)
	flush := func() {
		sel := group
		if len(r.bySetPos) > 0 {
			sel = nil
			for i := range group {
				if slices.Contains(r.bySetPos, i+1) || slices.Contains(r.bySetPos, i-len(group)) {
					sel = append(sel, group[i])
				}
			}
		}
		for _, w := range sel {
			if !w.Before(d0) {
				out = append(out, w)
			}
		}
		group = group[:0]
	}
	for ; day.Year() <= 9999; day = day.AddDate(0, 0, 1) {
		if day.After(end) && r.refPeriod(day) != groupKey {
			break
		}
		if !r.refDayOK(day) {
			continue
		}
		for _, h := range hours {
			for _, mi := range minutes {
				for _, s := range seconds {
					w := day.Add(time.Duration(h)*time.Hour + time.Duration(mi)*time.Minute + time.Duration(s)*time.Second)
					k := r.refPeriod(w)
					if (k-p0)%int64(r.interval) != 0 {
						continue
					}
					if k != groupKey {
						flush()
						groupKey = k
					}
					group = append(group, w)
				}
			}
		}
	}
	flush()
	slices.SortFunc(out, func(a, b time.Time) int { return a.Compare(b) })
	return slices.CompactFunc(out, time.Time.Equal)
}

// refShows returns the instants whose wall clock in loc reads w (floating
// time), in order: none in a spring-forward gap, one, or two when a fall back
// repeats w. It tries every offset the zone uses within a day of w.
func refShows(w time.Time, loc *time.Location) []time.Time {
	var out []time.Time
	for k := -2; k <= 2; k++ {
		_, off := w.Add(time.Duration(k) * 12 * time.Hour).In(loc).Zone()
		t := w.Add(-time.Duration(off) * time.Second)
		l := t.In(loc)
		if time.Date(l.Year(), l.Month(), l.Day(), l.Hour(), l.Minute(), l.Second(), 0, time.UTC).Equal(w) &&
			!slices.ContainsFunc(out, t.Equal) {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, time.Time.Compare)
	return out
}

// refResolve maps a wall reading to the first instant showing it in loc;
// false when no instant does (a spring-forward gap).
func refResolve(w time.Time, loc *time.Location) (time.Time, bool) {
	shows := refShows(w, loc)
	if len(shows) == 0 {
		return time.Time{}, false
	}
	return shows[0], true
}

// refBeforeGap reads w, which no instant shows, with the offset in force
// before the gap: that of the last minute whose wall clock is before w.
func refBeforeGap(w time.Time, loc *time.Location) time.Time {
	t := w.Add(-14 * time.Hour) // an instant whose wall clock is before w
	for {
		l := t.Add(time.Minute).In(loc)
		if !time.Date(l.Year(), l.Month(), l.Day(), l.Hour(), l.Minute(), l.Second(), 0, time.UTC).Before(w) {
			_, off := t.In(loc).Zone()
			return w.Add(-time.Duration(off) * time.Second)
		}
		t = t.Add(time.Minute)
	}
}

// refSeries is a rule's wall readings from DTSTART start in loc, resolved
// to instants on demand (shows[i], computed once whatever the policy).
type refSeries struct {
	r        refRule
	start    time.Time
	loc      *time.Location
	d0       time.Time
	readings []time.Time
	shows    [][]time.Time
	resolved []bool
}

// refSeries returns the rule's readings far enough to plan up to to.
func (r refRule) refSeries(start time.Time, loc *time.Location, to time.Time) *refSeries {
	l := start.In(loc)
	d0 := time.Date(l.Year(), l.Month(), l.Day(), l.Hour(), l.Minute(), l.Second(), 0, time.UTC)
	// Wall readings are within a day or so of their instants.
	end := time.Date(to.Year(), to.Month(), to.Day(), 0, 0, 0, 0, time.UTC).AddDate(0, 0, 3)
	readings := r.refReadings(d0, end)
	return &refSeries{r: r, start: start, loc: loc, d0: d0, readings: readings,
		shows: make([][]time.Time, len(readings)), resolved: make([]bool, len(readings))}
}

// refInstants is the rule's instants in [from, to) for DTSTART start in loc
// under DST policy p.
func (r refRule) refInstants(start time.Time, loc *time.Location, p DST, from, to time.Time) []time.Time {
	return r.refSeries(start, loc, to).instants(p, from, to)
}

// instants plans the series under DST policy p, read from docs/recurrence.md:
// a reading in a gap is dropped and not counted (gap shift: read with the
// offset before the gap, and counted); a repeated one fires at its first
// pass (last: its second; both: both, counted once). The series begins at
// start_time: DTSTART's own reading fires at start_time, whichever pass that
// is (under both, also at a later pass), and a pass before start_time never
// fires, so a reading whose first pass precedes it fires at its second. A
// reading whose instants all fire already is the same instance, not counted
// again. to must not be later than the series was built for.
func (s *refSeries) instants(p DST, from, to time.Time) []time.Time {
	r, start := s.r, s.start
	fired := map[time.Time]bool{}
	n := 0
	for i, w := range s.readings {
		if !s.resolved[i] {
			s.shows[i], s.resolved[i] = refShows(w, s.loc), true
		}
		shows := s.shows[i]
		var passes []time.Time // the reading's instants in the series, the first one deciding UNTIL
		for _, t := range shows {
			if !t.Before(start) {
				passes = append(passes, t)
			}
		}
		gap := len(shows) == 0
		switch {
		case gap && p.Gap == GapShift:
			passes = []time.Time{refBeforeGap(w, s.loc)}
		case gap:
			continue // not counted
		case w.Equal(s.d0):
			later := slices.DeleteFunc(passes, func(t time.Time) bool { return !t.After(start) || p.Repeat != RepeatBoth })
			passes = append([]time.Time{start}, later...)
		case len(passes) == 0:
			continue // every pass precedes the series
		case p.Repeat == RepeatLast:
			passes = passes[len(passes)-1:]
		case p.Repeat != RepeatBoth:
			passes = passes[:1]
		}
		if !slices.ContainsFunc(passes, func(t time.Time) bool { return !fired[t] }) {
			continue
		}
		n++
		if r.count > 0 && n > r.count {
			break
		}
		if !r.until.IsZero() && passes[0].After(r.until) {
			if gap {
				continue
			}
			break
		}
		for _, t := range passes {
			if r.until.IsZero() || !t.After(r.until) {
				fired[t] = true
			}
		}
		// Later readings fire at most a few hours before this one (offsets
		// differ by an hour, a pass or a shift moves by one jump).
		if passes[0].After(to.Add(3 * time.Hour)) {
			break
		}
	}
	var out []time.Time
	for t := range fired {
		if !t.Before(from) && t.Before(to) {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, time.Time.Compare)
	return out
}
