// Package calendar is the exclusion calendar: a shared set of days (single
// dates, inclusive date ranges and RRULEs such as weekends) on which the
// events that honour it do not fire, read in the calendar's time zone.
// Compile turns a stored calendar into the planner's Blocker; Decode and
// Validate check a client's body; Cache compiles the calendars an event
// names, once per version. Everything but the Cache is pure.
package calendar

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/planner"
	"github.com/qhronos/qhronos/internal/recurrence"
)

// maxCachedDays bounds the per-day answers a Compiled keeps for its rules;
// when full it starts afresh (the planner asks about nearby days in runs).
const maxCachedDays = 4096

// ruleAnchor is the wall-clock DTSTART of every calendar RRULE: noon, so
// the one instance a matching day has is never a local time that daylight
// saving skips (a few zones skip midnight), and its day is the rule's day.
var ruleAnchor = struct {
	y    int
	m    time.Month
	d, h int
}{2000, time.January, 1, 12}

// Compiled is a calendar ready for the planner: safe for concurrent use.
type Compiled struct {
	loc    *time.Location
	dates  map[day]struct{}
	ranges []dayRange // sorted, disjoint
	rules  []*recurrence.Rule

	mu   sync.Mutex
	days map[day]bool // rule answers by day
}

var _ planner.Blocker = (*Compiled)(nil)

// day is a civil date as a count of days since 1970-01-01.
type day int64

// dayRange is an inclusive range of days.
type dayRange struct{ from, to day }

func dayOf(y int, m time.Month, d int) day {
	return day(time.Date(y, m, d, 12, 0, 0, 0, time.UTC).Unix() / 86400)
}

// parseDay reads YYYY-MM-DD (years 1 to 9999).
func parseDay(s string) (day, bool) {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil || t.Year() < 1 {
		return 0, false
	}
	return dayOf(t.Date()), true
}

// Compile prepares c for Blocks. The calendar is expected to be valid (see
// Validate); an invalid zone, date, range or rule is an error.
func Compile(c model.Calendar, limits recurrence.Limits) (*Compiled, error) {
	zone := c.Timezone
	if zone == "" {
		zone = "UTC"
	}
	loc, err := time.LoadLocation(zone)
	if err != nil {
		return nil, fmt.Errorf("calendar %s: timezone %q: %w", c.ID, zone, err)
	}
	out := &Compiled{loc: loc, dates: make(map[day]struct{}, len(c.Dates)), days: map[day]bool{}}
	for _, s := range c.Dates {
		d, ok := parseDay(s)
		if !ok {
			return nil, fmt.Errorf("calendar %s: date %q is not YYYY-MM-DD", c.ID, s)
		}
		out.dates[d] = struct{}{}
	}
	for _, r := range c.Ranges {
		from, ok1 := parseDay(r.From)
		to, ok2 := parseDay(r.To)
		if !ok1 || !ok2 || to < from {
			return nil, fmt.Errorf("calendar %s: range %s..%s is not an ordered pair of dates", c.ID, r.From, r.To)
		}
		out.ranges = append(out.ranges, dayRange{from, to})
	}
	out.ranges = merge(out.ranges)
	start := time.Date(ruleAnchor.y, ruleAnchor.m, ruleAnchor.d, ruleAnchor.h, 0, 0, 0, loc)
	for i, text := range c.RRules {
		rule, err := recurrence.Compile(recurrence.Spec{StartTime: start, Timezone: zone, RRule: text}, limits)
		if err != nil {
			return nil, fmt.Errorf("calendar %s: rrules[%d]: %w", c.ID, i, err)
		}
		out.rules = append(out.rules, rule)
	}
	return out, nil
}

// merge sorts ranges and joins the ones that overlap or touch.
func merge(rs []dayRange) []dayRange {
	if len(rs) < 2 {
		return rs
	}
	slices.SortFunc(rs, func(a, b dayRange) int { return int(a.from - b.from) })
	out := rs[:1]
	for _, r := range rs[1:] {
		last := &out[len(out)-1]
		if r.from <= last.to+1 {
			last.to = max(last.to, r.to)
			continue
		}
		out = append(out, r)
	}
	return out
}

// Blocks reports whether t falls on a blocked day: its local date in the
// calendar's zone is one of the dates, inside a range, or a day on which
// one of the rules has an instance.
func (c *Compiled) Blocks(t time.Time) bool {
	local := t.In(c.loc)
	y, m, d := local.Date()
	if y < 1 || y > 9998 {
		return false
	}
	key := dayOf(y, m, d)
	if _, ok := c.dates[key]; ok {
		return true
	}
	if _, in := slices.BinarySearchFunc(c.ranges, key, func(r dayRange, k day) int {
		switch {
		case r.to < k:
			return -1
		case r.from > k:
			return 1
		}
		return 0 // the ranges are disjoint: at most one holds k
	}); in {
		return true
	}
	if len(c.rules) == 0 {
		return false
	}
	c.mu.Lock()
	blocked, ok := c.days[key]
	c.mu.Unlock()
	if ok {
		return blocked
	}
	blocked = c.ruleDay(y, m, d)
	c.mu.Lock()
	if len(c.days) >= maxCachedDays {
		clear(c.days)
	}
	c.days[key] = blocked
	c.mu.Unlock()
	return blocked
}

// ruleDay reports whether a rule has an instance on the local date y-m-d.
// A rule that cannot decide within its iteration budget blocks nothing.
func (c *Compiled) ruleDay(y int, m time.Month, d int) bool {
	from := time.Date(y, m, d, 0, 0, 0, 0, c.loc)
	to := time.Date(y, m, d+1, 0, 0, 0, 0, c.loc)
	for _, r := range c.rules {
		if got, _ := recurrence.Expand(r, from, to, 1); len(got) > 0 {
			return true
		}
	}
	return false
}
