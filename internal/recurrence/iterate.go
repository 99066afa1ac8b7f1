package recurrence

import (
	"slices"
	"sort"
	"time"

	"github.com/teambition/rrule-go"
)

// Our own RRULE iterator. rrule-go (a port of python-dateutil) still parses
// and bounds-checks the rule text, but its iterator is not used, for three
// reasons (issue #23):
//
//   - it numbers weeks like dateutil, not like RFC 5545: an early-January day
//     is judged with the wrong year's week count, and a negative BYWEEKNO never
//     reaches the late-December days of next year's week 1;
//   - it builds a WEEKLY BYSETPOS set from DTSTART instead of from the start of
//     the WKST week ("A set of recurrence instances starts at the beginning of
//     the interval defined by the FREQ rule part");
//   - its work between two instants is invisible and unbounded (a sparse
//     SECONDLY rule scans every day to year 9999, a default UNTIL stops about
//     292 years after DTSTART), so no budget can count it or stop it.
//
// ruleIter walks the rule's periods (one FREQ interval each) in order. For
// every period it generates a superset of the matching days cheaply (the
// BYYEARDAY, BYWEEKNO, BYMONTHDAY or BYDAY days, only in BYMONTH months), keeps
// the ones every BYxxx part accepts (dayMatches, the RFC's reading), crosses
// them with the times of day, and applies BYSETPOS to the period's whole set.
// Every reading it yields, and every candidate (day, sub-daily period start,
// empty period) it examines without yielding one, is spent from the
// expansion's budget: the cost of a call is counted where it is incurred.

// rulePlan is a compiled RRULE in wall-clock (floating) time; immutable.
type rulePlan struct {
	freq     rrule.Frequency
	interval int64
	wkst     int // 0 = Monday … 6 = Sunday
	d0       int64
	d0Day    int64 // days since 1970-01-01 of d0

	months    [13]bool
	hasMonth  bool
	weekNos   []int
	yearDays  []int
	monthDays []int
	plainDays [7]bool
	nthDays   []nthDay
	hasDay    bool

	// Times of day: for DAILY and coarser every reading of a matching day
	// (seconds of day, sorted). Sub-daily rules use the limits below.
	times []int
	// Sub-daily: the period length, the allowed period starts within a day
	// (hours × minutes × seconds at the FREQ's level; empty = all) and the
	// readings within one period (offsets, after BYSETPOS).
	unit                    int64
	hours, minutes, seconds []int
	hourOK                  [24]bool
	minuteOK, secondOK      [60]bool
	within                  []int64

	setPos []int
}

type nthDay struct{ wd, n int }

const secondsPerDay = 86400

func newRulePlan(opt *rrule.ROption) *rulePlan {
	p := &rulePlan{freq: opt.Freq, interval: int64(max(opt.Interval, 1)), wkst: opt.Wkst.Day(),
		d0: opt.Dtstart.Unix(), weekNos: opt.Byweekno, yearDays: opt.Byyearday, monthDays: opt.Bymonthday,
		setPos: opt.Bysetpos}
	p.d0Day = floorDiv(p.d0, secondsPerDay)
	for _, m := range opt.Bymonth {
		p.months[m], p.hasMonth = true, true
	}
	for _, w := range opt.Byweekday {
		p.hasDay = true
		if w.N() == 0 {
			p.plainDays[w.Day()] = true
		} else {
			p.nthDays = append(p.nthDays, nthDay{w.Day(), w.N()})
		}
	}
	switch p.freq {
	case rrule.HOURLY, rrule.MINUTELY, rrule.SECONDLY:
		p.unit = map[rrule.Frequency]int64{rrule.HOURLY: 3600, rrule.MINUTELY: 60, rrule.SECONDLY: 1}[p.freq]
		p.hours = opt.Byhour
		for _, h := range p.hours {
			p.hourOK[h] = true
		}
		if p.freq != rrule.HOURLY {
			p.minutes = opt.Byminute
			for _, m := range p.minutes {
				p.minuteOK[m] = true
			}
		}
		if p.freq == rrule.SECONDLY {
			p.seconds = opt.Bysecond
			for _, s := range p.seconds {
				p.secondOK[s] = true
			}
		}
		// The readings inside one period: BYMINUTE and BYSECOND expand an
		// hour, BYSECOND a minute (explicitDefaults filled them).
		var within []int64
		switch p.freq {
		case rrule.HOURLY:
			for _, m := range opt.Byminute {
				for _, s := range opt.Bysecond {
					within = append(within, int64(m*60+s))
				}
			}
		case rrule.MINUTELY:
			for _, s := range opt.Bysecond {
				within = append(within, int64(s))
			}
		default:
			within = []int64{0}
		}
		if len(p.setPos) > 0 {
			var sel []int64
			for _, i := range setIndexes(p.setPos, len(within)) {
				sel = append(sel, within[i])
			}
			within = sel
		}
		p.within = within
	default:
		for _, h := range opt.Byhour {
			for _, m := range opt.Byminute {
				for _, s := range opt.Bysecond {
					p.times = append(p.times, h*3600+m*60+s)
				}
			}
		}
		slices.Sort(p.times)
	}
	return p
}

// never explains why the rule's BYSETPOS can select nothing in any period,
// for the sets whose size the rule fixes; "" means it may select something.
func (p *rulePlan) never() string {
	if len(p.setPos) == 0 {
		return ""
	}
	if p.unit > 0 && len(p.within) == 0 {
		return "BYSETPOS names no position of the set a FREQ=" + p.freq.String() + " period holds"
	}
	if p.unit == 0 && len(setIndexes(p.setPos, p.maxSetSize())) == 0 {
		return "BYSETPOS names no position of the set a FREQ=" + p.freq.String() + " period can hold"
	}
	return ""
}

// maxSetSize bounds the readings one coarse period can hold: a BYSETPOS
// position beyond it (from either end) never selects anything.
func (p *rulePlan) maxSetSize() int {
	days := 366
	weekdays := 0
	for _, ok := range p.plainDays {
		if ok {
			weekdays++
		}
	}
	switch {
	case p.freq == rrule.DAILY:
		days = 1
	case p.freq == rrule.WEEKLY && p.hasDay:
		days = weekdays + len(p.nthDays)
	case p.freq == rrule.WEEKLY:
		days = 7
	case p.freq == rrule.MONTHLY && len(p.monthDays) > 0:
		days = len(p.monthDays)
	case p.freq == rrule.MONTHLY && p.hasDay:
		days = 5*weekdays + len(p.nthDays)
	case p.freq == rrule.MONTHLY:
		days = 31
	}
	return days * len(p.times)
}

// setIndexes resolves BYSETPOS values against a set of n readings: the
// 0-based indexes, sorted and unique.
func setIndexes(pos []int, n int) []int {
	var out []int
	for _, v := range pos {
		i := v - 1
		if v < 0 {
			i = n + v
		}
		if i >= 0 && i < n {
			out = append(out, i)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Civil-day helpers: a day is a count of days since 1970-01-01.

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// dayOfDate is the day number of y-m-d; m and d may overflow their ranges
// (month 13 is January of the next year, day 0 the last of the previous
// month). Integer civil-calendar arithmetic (H. Hinnant's days_from_civil):
// time.Date costs several times more, and this runs once per candidate.
func dayOfDate(y int, m time.Month, d int) int64 {
	yy, mm := int64(y), int64(m)-1
	yy += floorDiv(mm, 12)
	mm -= floorDiv(mm, 12) * 12 // 0 … 11
	if mm < 2 {
		yy--
	}
	era := floorDiv(yy, 400)
	yoe := yy - era*400
	doy := (153*((mm+10)%12)+2)/5 + int64(d) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// dateOfDay is the inverse of dayOfDate (civil_from_days).
func dateOfDay(day int64) (int, time.Month, int) {
	z := day + 719468
	era := floorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d := doy - (153*mp+2)/5 + 1
	m := mp + 3
	if m > 12 {
		m -= 12
	}
	y := yoe + era*400
	if m <= 2 {
		y++
	}
	return int(y), time.Month(m), int(d)
}

// weekdayOf is 0 for Monday … 6 for Sunday (1970-01-01 was a Thursday).
func weekdayOf(day int64) int { return int((day%7 + 7 + 3) % 7) }

func isLeap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

func yearLen(y int) int {
	if isLeap(y) {
		return 366
	}
	return 365
}

func monthLen(y int, m time.Month) int {
	if m == time.February && !isLeap(y) {
		return 28
	}
	return daysInMonthMax[m]
}

// week1Start is the first day of week 1 of year y for weeks starting on
// wkst (RFC 5545 §3.3.10 BYWEEKNO: the first week with at least four days
// of the year), which is the week holding 4 January.
func week1Start(y, wkst int) int64 {
	jan4 := dayOfDate(y, time.January, 4)
	return jan4 - int64((weekdayOf(jan4)-wkst+7)%7)
}

// weeksIn is how many weeks (52 or 53) the week-numbering year y has.
func weeksIn(y, wkst int) int {
	return int((week1Start(y+1, wkst) - week1Start(y, wkst)) / 7)
}

// weekNoMatches reports whether day lies in one of the BYWEEKNO weeks. Its
// week is numbered in the week-numbering year it belongs to, which for a day
// near New Year can be the previous or the next calendar year; a negative
// value counts back from that year's last week.
func (p *rulePlan) weekNoMatches(day int64, y int) bool {
	w := y
	if day < week1Start(y, p.wkst) {
		w = y - 1
	} else if day >= week1Start(y+1, p.wkst) {
		w = y + 1
	}
	n := int((day-week1Start(w, p.wkst))/7) + 1
	last := weeksIn(w, p.wkst)
	for _, v := range p.weekNos {
		if v == n || v == n-last-1 {
			return true
		}
	}
	return false
}

// dayMatches applies every day-level BYxxx part to day: BYMONTH, BYWEEKNO,
// BYYEARDAY, BYMONTHDAY and BYDAY must all accept it. A BYDAY ordinal counts
// within the month for MONTHLY (and YEARLY with BYMONTH), else within the
// year.
func (p *rulePlan) dayMatches(day int64) bool {
	y, m, d := dateOfDay(day)
	if p.hasMonth && !p.months[m] {
		return false
	}
	if len(p.weekNos) > 0 && !p.weekNoMatches(day, y) {
		return false
	}
	yd := int(day-dayOfDate(y, time.January, 1)) + 1
	if len(p.yearDays) > 0 && !ordinalIn(p.yearDays, yd, yearLen(y)) {
		return false
	}
	if len(p.monthDays) > 0 && !ordinalIn(p.monthDays, d, monthLen(y, m)) {
		return false
	}
	if !p.hasDay {
		return true
	}
	wd := weekdayOf(day)
	if p.plainDays[wd] {
		return true
	}
	pos, size := yd, yearLen(y)
	if p.freq == rrule.MONTHLY || p.hasMonth {
		pos, size = d, monthLen(y, m)
	}
	for _, nd := range p.nthDays {
		if nd.wd == wd && (nd.n == (pos-1)/7+1 || nd.n == -((size-pos)/7+1)) {
			return true
		}
	}
	return false
}

// ordinalIn reports whether position pos (1-based) of a span of size is
// named by a value counted from the start (positive) or end (negative).
func ordinalIn(values []int, pos, size int) bool {
	for _, v := range values {
		if v == pos || size+1+v == pos {
			return true
		}
	}
	return false
}

// ruleIter yields the rule's wall readings (Unix seconds of floating time)
// in order from a start period up to a stop reading.
type ruleIter struct {
	p    *rulePlan
	b    *budget
	from int64 // no reading before it is needed (DTSTART or later)
	stop int64 // no reading at or after it is needed
	err  error

	// Coarse (DAILY and up): the current period, its matching days and the
	// position in days × times (or in sel, the BYSETPOS indexes).
	period int64
	days   []int64
	sel    []int
	i      int

	// Sub-daily: the current day, the next period start to examine and the
	// index in the day's allowed starts or the lattice.
	day     int64
	dayOpen bool
	cursor  int64 // next lattice point (lattice mode)
	combo   int   // next allowed start (allowed mode)
	lattice bool
	start   int64 // current period start
	w       int   // index in within
	inside  bool
}

// maxWallDay is the last day the iterator visits (9999-12-31).
var maxWallDay = dayOfDate(9999, time.December, 31)

// iterate returns an iterator over the readings at or after DTSTART, from
// the period holding from (a wall reading; before DTSTART means DTSTART's)
// to stop.
func (p *rulePlan) iterate(from, stop int64, b *budget) *ruleIter {
	if from < p.d0 {
		from = p.d0
	}
	it := &ruleIter{p: p, b: b, from: from, stop: stop}
	if p.unit > 0 {
		step := p.unit * p.interval
		origin := floorDiv(p.d0, p.unit) * p.unit
		it.cursor = origin + floorDiv(from-origin, step)*step
		it.day = floorDiv(it.cursor, secondsPerDay)
		return it
	}
	it.period = p.lattice(p.periodOf(floorDiv(from, secondsPerDay)))
	it.i = -1
	return it
}

// Coarse periods are numbered: YEARLY by year, MONTHLY by year*12+month-1,
// WEEKLY by the day its WKST week starts, DAILY by day.

func (p *rulePlan) periodOf(day int64) int64 {
	y, m, _ := dateOfDay(day)
	switch p.freq {
	case rrule.YEARLY:
		return int64(y)
	case rrule.MONTHLY:
		return int64(y)*12 + int64(m) - 1
	case rrule.WEEKLY:
		return day - int64((weekdayOf(day)-p.wkst+7)%7)
	default:
		return day
	}
}

// periodStep is how far apart consecutive periods of the rule are.
func (p *rulePlan) periodStep() int64 {
	if p.freq == rrule.WEEKLY {
		return 7 * p.interval
	}
	return p.interval
}

// lattice rounds period q down to one the rule's INTERVAL reaches from
// DTSTART's period.
func (p *rulePlan) lattice(q int64) int64 {
	q0 := p.periodOf(p.d0Day)
	step := p.periodStep()
	return q0 + floorDiv(q-q0, step)*step
}

// periodDays returns the first day of period q and the day after it.
func (p *rulePlan) periodDays(q int64) (int64, int64) {
	switch p.freq {
	case rrule.YEARLY:
		return dayOfDate(int(q), time.January, 1), dayOfDate(int(q)+1, time.January, 1)
	case rrule.MONTHLY:
		y, m := int(floorDiv(q, 12)), time.Month(q-floorDiv(q, 12)*12+1)
		return dayOfDate(y, m, 1), dayOfDate(y, m+1, 1)
	case rrule.WEEKLY:
		return q, q + 7
	default:
		return q, q + 1
	}
}

// candidates appends to buf, sorted and unique, a superset of the days of
// [first, end) that can match: only BYMONTH months, and only the BYYEARDAY,
// BYWEEKNO, BYMONTHDAY or BYDAY days when such a part is set.
func (p *rulePlan) candidates(buf []int64, first, end int64) []int64 {
	y, _, _ := dateOfDay(first)
	switch {
	case p.freq == rrule.YEARLY && len(p.yearDays) > 0:
		n := yearLen(y)
		for _, v := range p.yearDays {
			if v < 0 {
				v = n + 1 + v
			}
			if v >= 1 && v <= n {
				buf = append(buf, first+int64(v-1))
			}
		}
	case p.freq == rrule.YEARLY && len(p.weekNos) > 0:
		for w := y - 1; w <= y+1; w++ {
			s, last := week1Start(w, p.wkst), weeksIn(w, p.wkst)
			for _, v := range p.weekNos {
				if v < 0 {
					v = last + 1 + v
				}
				if v < 1 || v > last {
					continue
				}
				for d := s + int64(v-1)*7; d < s+int64(v)*7; d++ {
					if d >= first && d < end {
						buf = append(buf, d)
					}
				}
			}
		}
	case p.freq == rrule.DAILY || p.freq == rrule.WEEKLY:
		for d := first; d < end; d++ {
			if !p.hasDay || p.plainDays[weekdayOf(d)] {
				buf = append(buf, d)
			}
		}
	default: // MONTHLY, or YEARLY by month
		for d := first; d < end; {
			my, mm, _ := dateOfDay(d)
			next := dayOfDate(my, mm+1, 1)
			if !p.hasMonth || p.months[mm] {
				buf = p.monthCandidates(buf, d, my, mm)
			}
			d = next
		}
	}
	slices.Sort(buf)
	return slices.Compact(buf)
}

func (p *rulePlan) monthCandidates(buf []int64, first int64, y int, m time.Month) []int64 {
	n := monthLen(y, m)
	switch {
	case len(p.monthDays) > 0:
		for _, v := range p.monthDays {
			if v < 0 {
				v = n + 1 + v
			}
			if v >= 1 && v <= n {
				buf = append(buf, first+int64(v-1))
			}
		}
	case p.hasDay:
		wd1 := weekdayOf(first)
		for wd := range 7 {
			if !p.plainDays[wd] && !slices.ContainsFunc(p.nthDays, func(nd nthDay) bool { return nd.wd == wd }) {
				continue
			}
			for d := (wd - wd1 + 7) % 7; d < n; d += 7 {
				buf = append(buf, first+int64(d))
			}
		}
	default:
		for d := range n {
			buf = append(buf, first+int64(d))
		}
	}
	return buf
}

// next returns the next reading; false when there is none before stop, or
// the budget ran out (it.err).
func (it *ruleIter) next() (int64, bool) {
	if it.err != nil {
		return 0, false
	}
	if it.p.unit > 0 {
		return it.nextSubDaily()
	}
	return it.nextCoarse()
}

func (it *ruleIter) spend() bool {
	if err := it.b.spend(); err != nil {
		it.err = err
		return false
	}
	return true
}

func (it *ruleIter) nextCoarse() (int64, bool) {
	p := it.p
	nt := len(p.times)
	for {
		if it.i >= 0 {
			for {
				var k int
				if len(p.setPos) > 0 {
					if it.i >= len(it.sel) {
						break
					}
					k = it.sel[it.i]
				} else {
					if it.i >= len(it.days)*nt {
						break
					}
					k = it.i
				}
				it.i++
				if !it.spend() {
					return 0, false
				}
				return it.days[k/nt]*secondsPerDay + int64(p.times[k%nt]), true
			}
			it.period += p.periodStep()
		}
		first, end := p.periodDays(it.period)
		if first > maxWallDay || first*secondsPerDay >= it.stop {
			return 0, false
		}
		it.days = p.candidates(it.days[:0], first, end)
		matched := it.days[:0]
		for _, d := range it.days {
			if p.dayMatches(d) {
				matched = append(matched, d)
			} else if !it.spend() {
				return 0, false
			}
		}
		it.days, it.i = matched, 0
		size := len(matched) * nt
		if len(p.setPos) > 0 {
			it.sel = setIndexes(p.setPos, size)
			size = len(it.sel)
		}
		if size == 0 && !it.spend() { // a period without an instance is work too
			return 0, false
		}
		// Readings before the start are never examined one by one: a
		// period can hold millions (every second of a year).
		reading := func(i int) int64 {
			k := i
			if len(p.setPos) > 0 {
				k = it.sel[i]
			}
			return it.days[k/nt]*secondsPerDay + int64(p.times[k%nt])
		}
		it.i = sort.Search(size, func(i int) bool { return reading(i) >= it.from })
	}
}

// nextSubDaily walks days; on a day every BYxxx day part accepts it
// examines the period starts on the INTERVAL lattice that BYHOUR, BYMINUTE
// and BYSECOND allow (enumerating whichever of the two is smaller), and
// yields each period's readings.
func (it *ruleIter) nextSubDaily() (int64, bool) {
	p := it.p
	if len(p.within) == 0 {
		return 0, false // BYSETPOS selects nothing in a period (Compile refuses such rules)
	}
	step := p.unit * p.interval
	origin := floorDiv(p.d0, p.unit) * p.unit
	for {
		if it.inside {
			for it.w < len(p.within) {
				r := it.start + p.within[it.w]
				it.w++
				if r < it.from {
					continue // at most one period's readings (≤ 3600)
				}
				if !it.spend() {
					return 0, false
				}
				return r, true
			}
			it.inside = false
		}
		if it.dayOpen {
			if s, ok := it.nextStart(step, origin); ok {
				it.start, it.w, it.inside = s, 0, true
				continue
			}
			if it.err != nil {
				return 0, false
			}
			it.dayOpen = false
			it.day++
		}
		// The first lattice point at or after the day's start (and the
		// cursor): days without one cost nothing.
		c := max(it.cursor, it.day*secondsPerDay)
		it.cursor = origin + floorDiv(c-origin+step-1, step)*step
		it.day = floorDiv(it.cursor, secondsPerDay)
		if it.day > maxWallDay || it.day*secondsPerDay >= it.stop {
			return 0, false
		}
		if !p.dayMatches(it.day) {
			if !it.spend() {
				return 0, false
			}
			y, m, _ := dateOfDay(it.day)
			if p.hasMonth && !p.months[m] {
				it.day = dayOfDate(y, m+1, 1)
			} else {
				it.day++
			}
			continue
		}
		it.dayOpen = true
		it.lattice = secondsPerDay/step < int64(p.allowedPerDay())
		if !it.lattice { // the allowed starts before the cursor are never examined
			dayStart := it.day * secondsPerDay
			it.combo = sort.Search(p.allowedPerDay(), func(i int) bool { return dayStart+int64(p.allowedAt(i)) >= it.cursor })
		}
	}
}

// allowedPerDay is how many period starts BYHOUR/BYMINUTE/BYSECOND allow in
// a day.
func (p *rulePlan) allowedPerDay() int {
	n := func(l []int, all int) int {
		if len(l) == 0 {
			return all
		}
		return len(l)
	}
	switch p.freq {
	case rrule.HOURLY:
		return n(p.hours, 24)
	case rrule.MINUTELY:
		return n(p.hours, 24) * n(p.minutes, 60)
	default:
		return n(p.hours, 24) * n(p.minutes, 60) * n(p.seconds, 60)
	}
}

// nextStart returns the next period start of the open day that is on the
// lattice and allowed.
func (it *ruleIter) nextStart(step, origin int64) (int64, bool) {
	p := it.p
	dayStart := it.day * secondsPerDay
	dayEnd := dayStart + secondsPerDay
	if it.lattice {
		for it.cursor < dayEnd {
			s := it.cursor
			it.cursor += step
			if p.allowed(s - dayStart) {
				return s, true
			}
			if !it.spend() {
				return 0, false
			}
		}
		return 0, false
	}
	total := p.allowedPerDay()
	for it.combo < total {
		s := dayStart + int64(p.allowedAt(it.combo))
		it.combo++
		if (s-origin)%step == 0 {
			return s, true
		}
		if !it.spend() {
			return 0, false
		}
	}
	it.cursor = max(it.cursor, dayEnd)
	return 0, false
}

func (p *rulePlan) allowed(sec int64) bool {
	h, m, s := sec/3600, sec/60%60, sec%60
	return (len(p.hours) == 0 || p.hourOK[h]) && (len(p.minutes) == 0 || p.minuteOK[m]) &&
		(len(p.seconds) == 0 || p.secondOK[s])
}

// allowedAt is the i-th allowed period start of a day (seconds of day).
func (p *rulePlan) allowedAt(i int) int {
	pick := func(l []int, all, i int) int {
		if len(l) == 0 {
			return i
		}
		return l[i]
	}
	size := func(l []int, all int) int {
		if len(l) == 0 {
			return all
		}
		return len(l)
	}
	switch p.freq {
	case rrule.HOURLY:
		return pick(p.hours, 24, i) * 3600
	case rrule.MINUTELY:
		nm := size(p.minutes, 60)
		return pick(p.hours, 24, i/nm)*3600 + pick(p.minutes, 60, i%nm)*60
	default:
		nm, ns := size(p.minutes, 60), size(p.seconds, 60)
		return pick(p.hours, 24, i/(nm*ns))*3600 + pick(p.minutes, 60, i/ns%nm)*60 + pick(p.seconds, 60, i%ns)
	}
}
