package recurrence

import (
	"fmt"
	"slices"
	"time"

	"github.com/teambition/rrule-go"
)

// explicitDefaults makes the BY* values RFC 5545 derives from DTSTART
// explicit (time of day, weekday, month day, month), so that re-anchoring the
// iteration at a later period start yields exactly the same instants.
func explicitDefaults(opt *rrule.ROption, d0 time.Time) {
	if len(opt.Byweekno) == 0 && len(opt.Byyearday) == 0 && len(opt.Bymonthday) == 0 &&
		len(opt.Byweekday) == 0 && len(opt.Byeaster) == 0 {
		switch opt.Freq {
		case rrule.YEARLY:
			if len(opt.Bymonth) == 0 {
				opt.Bymonth = []int{int(d0.Month())}
			}
			opt.Bymonthday = []int{d0.Day()}
		case rrule.MONTHLY:
			opt.Bymonthday = []int{d0.Day()}
		case rrule.WEEKLY:
			opt.Byweekday = []rrule.Weekday{pyWeekday(d0.Weekday())}
		}
	}
	if len(opt.Byhour) == 0 && opt.Freq < rrule.HOURLY {
		opt.Byhour = []int{d0.Hour()}
	}
	if len(opt.Byminute) == 0 && opt.Freq < rrule.MINUTELY {
		opt.Byminute = []int{d0.Minute()}
	}
	if len(opt.Bysecond) == 0 && opt.Freq < rrule.SECONDLY {
		opt.Bysecond = []int{d0.Second()}
	}
}

func pyWeekday(w time.Weekday) rrule.Weekday {
	return [...]rrule.Weekday{rrule.SU, rrule.MO, rrule.TU, rrule.WE, rrule.TH, rrule.FR, rrule.SA}[w]
}

// daysInMonthMax is the longest a month can be (February counts 29).
var daysInMonthMax = [13]int{0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}

// impossibleReason explains why a rule can never produce an instance, for the
// cases decidable from the BY* lists alone (the probe in Compile catches the
// rest); "" means it may produce one.
func impossibleReason(opt *rrule.ROption) string {
	months := opt.Bymonth
	if len(months) == 0 {
		months = []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	}
	if len(opt.Bymonthday) > 0 {
		ok := false
		for _, m := range months {
			for _, md := range opt.Bymonthday {
				if abs(md) <= daysInMonthMax[m] {
					ok = true
				}
			}
		}
		if !ok {
			return "BYMONTHDAY never occurs in the months the rule allows (a short month is skipped, never rolled over)"
		}
	}
	if len(opt.Byyearday) > 0 && len(opt.Bymonth) > 0 && !yearDaysMeetMonths(opt.Byyearday, opt.Bymonth) {
		return "no BYYEARDAY falls in a BYMONTH month"
	}
	monthScoped := opt.Freq == rrule.MONTHLY || (opt.Freq == rrule.YEARLY && len(opt.Bymonth) > 0)
	if monthScoped && len(opt.Byweekday) > 0 &&
		!slices.ContainsFunc(opt.Byweekday, func(w rrule.Weekday) bool { return abs(w.N()) <= 5 }) {
		return "a month has at most 5 of each weekday, so the BYDAY ordinals never occur"
	}
	return ""
}

// minGap is a lower bound on the time between two instants of the rule in
// wall-clock terms, from the time-of-day lists and the frequency step.
func minGap(opt *rrule.ROption) time.Duration {
	hours := orAll(opt.Byhour, 24)
	minutes := orAll(opt.Byminute, 60)
	seconds := orAll(opt.Bysecond, 60)
	day := make([]int, 0, len(hours)*len(minutes)*len(seconds))
	for _, h := range hours {
		for _, m := range minutes {
			for _, s := range seconds {
				day = append(day, h*3600+m*60+s)
			}
		}
	}
	gap := cyclicGap(day, 86400)
	interval := max(opt.Interval, 1)
	var step int
	var within []int
	switch opt.Freq {
	case rrule.SECONDLY:
		return time.Duration(max(gap, interval)) * time.Second
	case rrule.MINUTELY:
		step, within = 60, seconds
	case rrule.HOURLY:
		step = 3600
		for _, m := range minutes {
			for _, s := range seconds {
				within = append(within, m*60+s)
			}
		}
	case rrule.DAILY:
		step, within = 86400, day
	default:
		return time.Duration(gap) * time.Second
	}
	return time.Duration(max(gap, cyclicGap(within, step*interval))) * time.Second
}

func orAll(values []int, n int) []int {
	if len(values) > 0 {
		return values
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	return all
}

// cyclicGap is the smallest distance between the sorted unique offsets, the
// last one wrapping around to the first one a period later.
func cyclicGap(offsets []int, period int) int {
	s := slices.Clone(offsets)
	slices.Sort(s)
	s = slices.Compact(s)
	if len(s) == 0 {
		return period
	}
	gap := period - s[len(s)-1] + s[0]
	for i := 1; i < len(s); i++ {
		gap = min(gap, s[i]-s[i-1])
	}
	return gap
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

func tooFrequent(gap, minInterval time.Duration) string {
	return fmt.Sprintf("instants can be %s apart, closer than the minimum interval of %s", gap, minInterval)
}

// yearDaysMeetMonths reports whether some year day lies in one of months,
// in a common or a leap year.
func yearDaysMeetMonths(yearDays, months []int) bool {
	for _, yearLen := range []int{365, 366} {
		year := 2027
		if yearLen == 366 {
			year = 2028
		}
		for _, v := range yearDays {
			n := v
			if v < 0 {
				n = yearLen + 1 + v
			}
			if n < 1 || n > yearLen {
				continue
			}
			m := int(time.Date(year, 1, n, 0, 0, 0, 0, time.UTC).Month())
			if slices.Contains(months, m) {
				return true
			}
		}
	}
	return false
}

// latticeReaches reports whether a sub-daily rule's step lattice (DTSTART
// plus multiples of INTERVAL, wrapping around days) ever lands on a time of
// day its BYHOUR/BYMINUTE/BYSECOND lists allow. rrule-go searches for that
// time in an unbounded loop, so an unreachable combination must be rejected
// here (for example FREQ=HOURLY;INTERVAL=2;BYHOUR=1 from an even hour).
func latticeReaches(opt *rrule.ROption, d0 time.Time) bool {
	i := max(opt.Interval, 1)
	h0, m0, s0 := d0.Clock()
	switch opt.Freq {
	case rrule.HOURLY:
		g := gcd(i, 24)
		for _, h := range orAll(opt.Byhour, 24) {
			if (h-h0)%g == 0 {
				return true
			}
		}
		return false
	case rrule.MINUTELY:
		g := gcd(i, 1440)
		for _, h := range orAll(opt.Byhour, 24) {
			for _, m := range orAll(opt.Byminute, 60) {
				if (h*60+m-h0*60-m0)%g == 0 {
					return true
				}
			}
		}
		return false
	case rrule.SECONDLY:
		g := gcd(i, 86400)
		for _, h := range orAll(opt.Byhour, 24) {
			for _, m := range orAll(opt.Byminute, 60) {
				for _, s := range orAll(opt.Bysecond, 60) {
					if (h*3600+m*60+s-h0*3600-m0*60-s0)%g == 0 {
						return true
					}
				}
			}
		}
		return false
	}
	return true
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// dedupeLists sorts and de-duplicates every BY* list: rrule-go would emit an
// instant once per repetition of a value.
func dedupeLists(opt *rrule.ROption) {
	for _, l := range []*[]int{&opt.Bysetpos, &opt.Bymonth, &opt.Bymonthday, &opt.Byyearday, &opt.Byweekno,
		&opt.Byhour, &opt.Byminute, &opt.Bysecond, &opt.Byeaster} {
		slices.Sort(*l)
		*l = slices.Compact(*l)
	}
	seen := map[string]bool{}
	days := opt.Byweekday[:0:0]
	for _, d := range opt.Byweekday {
		if !seen[d.String()] {
			seen[d.String()] = true
			days = append(days, d)
		}
	}
	opt.Byweekday = days
}
