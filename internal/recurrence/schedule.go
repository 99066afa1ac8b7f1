package recurrence

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// frequencies of the schedule object; SECONDLY is deliberately absent (the
// original Qhronos never offered it).
var scheduleFrequencies = map[string]string{
	"minutely": "MINUTELY", "hourly": "HOURLY", "daily": "DAILY",
	"weekly": "WEEKLY", "monthly": "MONTHLY", "yearly": "YEARLY",
}

var byDayPattern = regexp.MustCompile(`^([+-]?[0-9]{1,2})?(MO|TU|WE|TH|FR|SA|SU)$`)

// RRule returns the RRULE line ("RRULE:FREQ=…") the schedule maps to. It
// assumes Validate passed; exdates are not part of the line (they become
// EXDATE values when compiled).
func (s Schedule) RRule() string {
	parts := []string{"FREQ=" + scheduleFrequencies[strings.ToLower(strings.TrimSpace(s.Frequency))]}
	interval := s.Interval
	if interval == 0 {
		interval = 1
	}
	parts = append(parts, "INTERVAL="+strconv.Itoa(interval))
	if s.Count != nil {
		parts = append(parts, "COUNT="+strconv.Itoa(*s.Count))
	}
	if s.Until != nil {
		parts = append(parts, "UNTIL="+s.Until.UTC().Format("20060102T150405Z"))
	}
	if len(s.ByDay) > 0 {
		days := make([]string, len(s.ByDay))
		for i, d := range s.ByDay {
			days[i] = strings.ToUpper(strings.TrimSpace(d))
		}
		parts = append(parts, "BYDAY="+strings.Join(days, ","))
	}
	parts = appendInts(parts, "BYMONTHDAY", s.ByMonthDay)
	parts = appendInts(parts, "BYMONTH", s.ByMonth)
	parts = appendInts(parts, "BYHOUR", s.ByHour)
	parts = appendInts(parts, "BYMINUTE", s.ByMinute)
	parts = appendInts(parts, "BYSETPOS", s.BySetPos)
	return "RRULE:" + strings.Join(parts, ";")
}

func appendInts(parts []string, key string, values []int) []string {
	if len(values) == 0 {
		return parts
	}
	s := make([]string, len(values))
	for i, v := range values {
		s[i] = strconv.Itoa(v)
	}
	return append(parts, key+"="+strings.Join(s, ","))
}

// validate checks every member so that errors name the schedule field the
// client sent, before the mapped RRULE is compiled.
func (s Schedule) validate(start time.Time, limits Limits) error {
	if _, ok := scheduleFrequencies[strings.ToLower(strings.TrimSpace(s.Frequency))]; !ok {
		return fieldErrorf("schedule.frequency", "must be one of minutely, hourly, daily, weekly, monthly, yearly")
	}
	if s.Interval < 0 || s.Interval > maxInterval {
		return fieldErrorf("schedule.interval", "must be between 1 and %d", maxInterval)
	}
	if len(s.ByDay) > maxListLen {
		return fieldErrorf("schedule.by_day", "too many values (at most %d)", maxListLen)
	}
	for _, d := range s.ByDay {
		m := byDayPattern.FindStringSubmatch(strings.ToUpper(strings.TrimSpace(d)))
		if m == nil {
			return fieldErrorf("schedule.by_day", "%q is not a weekday such as \"MO\" or \"-1FR\"", truncate(d))
		}
		if m[1] != "" {
			if f := strings.ToLower(strings.TrimSpace(s.Frequency)); f != "monthly" && f != "yearly" {
				return fieldErrorf("schedule.by_day", "ordinals such as %q need frequency monthly or yearly", d)
			}
			n, _ := strconv.Atoi(m[1])
			if n == 0 || n > 53 || n < -53 {
				return fieldErrorf("schedule.by_day", "ordinal in %q must be between 1 and 53 or -53 and -1", d)
			}
		}
	}
	checks := []struct {
		field    string
		values   []int
		lo, hi   int
		negative bool
	}{
		{"schedule.by_month_day", s.ByMonthDay, 1, 31, true},
		{"schedule.by_month", s.ByMonth, 1, 12, false},
		{"schedule.by_hour", s.ByHour, 0, 23, false},
		{"schedule.by_minute", s.ByMinute, 0, 59, false},
		{"schedule.by_set_pos", s.BySetPos, 1, 366, true},
	}
	for _, c := range checks {
		if len(c.values) > maxListLen {
			return fieldErrorf(c.field, "too many values (at most %d)", maxListLen)
		}
		for _, v := range c.values {
			inRange := v >= c.lo && v <= c.hi
			if c.negative && v <= -c.lo && v >= -c.hi {
				inRange = true
			}
			if !inRange {
				if c.negative {
					return fieldErrorf(c.field, "%d is out of range (%d…%d or %d…%d)", v, c.lo, c.hi, -c.hi, -c.lo)
				}
				return fieldErrorf(c.field, "%d is out of range (%d…%d)", v, c.lo, c.hi)
			}
		}
	}
	if len(s.ByMonthDay) > 0 && strings.EqualFold(strings.TrimSpace(s.Frequency), "weekly") {
		return fieldErrorf("schedule.by_month_day", "cannot be used with frequency weekly")
	}
	if s.Count != nil && (*s.Count < 1 || *s.Count > limits.MaxCount) {
		return fieldErrorf("schedule.count", "must be between 1 and %d", limits.MaxCount)
	}
	if s.Until != nil && s.Until.Before(start) {
		return fieldErrorf("schedule.until", "is before start_time")
	}
	if s.Count != nil && s.Until != nil {
		return fieldErrorf("schedule.until", "cannot be combined with count")
	}
	if len(s.Exdates) > maxExdates {
		return fieldErrorf("schedule.exdates", "too many values (at most %d)", maxExdates)
	}
	return nil
}

// truncate shortens echoed input in error messages.
func truncate(s string) string {
	if len(s) > 40 {
		return strings.ToValidUTF8(s[:40], "") + "…"
	}
	return s
}
