package recurrence

import (
	"math/bits"
	"strconv"
	"strings"
)

// cronSpec is a parsed five-field cron expression as bit sets.
type cronSpec struct {
	minute, hour, dom, month, dow uint64
	// domStar/dowStar record a field starting with '*'. Classic (Vixie) cron
	// matches a day when either restricted day field matches, and requires
	// both only when one of them starts with '*'.
	domStar, dowStar bool
}

var cronDescriptors = map[string]string{
	"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *",
	"@weekly": "0 0 * * 0", "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *",
}

var (
	monthNames = map[string]int{"JAN": 1, "FEB": 2, "MAR": 3, "APR": 4, "MAY": 5, "JUN": 6,
		"JUL": 7, "AUG": 8, "SEP": 9, "OCT": 10, "NOV": 11, "DEC": 12}
	dowNames = map[string]int{"SUN": 0, "MON": 1, "TUE": 2, "WED": 3, "THU": 4, "FRI": 5, "SAT": 6}
)

type cronField struct {
	name   string
	lo, hi int
	names  map[string]int
}

var cronFields = [5]cronField{
	{"minute", 0, 59, nil},
	{"hour", 0, 23, nil},
	{"day of month", 1, 31, nil},
	{"month", 1, 12, monthNames},
	{"day of week", 0, 7, dowNames},
}

// parseCron parses five fields (or an @descriptor other than @every).
func parseCron(text string) (*cronSpec, error) {
	if d, ok := cronDescriptors[strings.ToLower(text)]; ok {
		text = d
	}
	fields := strings.Fields(text)
	if len(fields) != 5 {
		return nil, errorString("expected 5 fields (minute hour day-of-month month day-of-week), an @descriptor such as @daily, or \"@every 15m\"")
	}
	var sets [5]uint64
	for i, f := range fields {
		set, err := parseCronField(f, cronFields[i])
		if err != nil {
			return nil, err
		}
		sets[i] = set
	}
	c := &cronSpec{minute: sets[0], hour: sets[1], dom: sets[2], month: sets[3], dow: sets[4],
		domStar: fields[2][0] == '*' || fields[2][0] == '?',
		dowStar: fields[4][0] == '*' || fields[4][0] == '?'}
	if c.dow&(1<<7) != 0 { // 7 is Sunday too
		c.dow = c.dow&^(1<<7) | 1
	}
	return c, nil
}

func parseCronField(text string, f cronField) (uint64, error) {
	var set uint64
	for _, item := range strings.Split(text, ",") {
		rng, stepText, hasStep := strings.Cut(item, "/")
		step := 1
		if hasStep {
			n, err := strconv.Atoi(stepText)
			if err != nil || n < 1 || n > f.hi-f.lo+1 {
				return 0, errorString("invalid step " + strconv.Quote(truncate(stepText)) + " in " + f.name + " field")
			}
			step = n
		}
		var lo, hi int
		switch {
		case rng == "*" || rng == "?":
			lo, hi = f.lo, f.hi
			if f.name == "day of week" {
				hi = 6
			}
		default:
			a, b, isRange := strings.Cut(rng, "-")
			var err error
			if lo, err = cronValue(a, f); err != nil {
				return 0, err
			}
			hi = lo
			if isRange {
				if hi, err = cronValue(b, f); err != nil {
					return 0, err
				}
			} else if hasStep {
				hi = f.hi // "a/n" means a, a+n, … up to the maximum
			}
			if lo > hi {
				return 0, errorString("range " + strconv.Quote(truncate(rng)) + " in " + f.name + " field runs backwards")
			}
		}
		for v := lo; v <= hi; v += step {
			set |= 1 << uint(v)
		}
	}
	return set, nil
}

func cronValue(s string, f cronField) (int, error) {
	if v, ok := f.names[strings.ToUpper(s)]; ok {
		return v, nil
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < f.lo || v > f.hi {
		return 0, errorString(strconv.Quote(truncate(s)) + " is not a valid " + f.name + " (" + strconv.Itoa(f.lo) + "–" + strconv.Itoa(f.hi) + ")")
	}
	return v, nil
}

// nextBit returns the smallest set bit ≥ from, or -1.
func nextBit(set uint64, from int) int {
	if from > 63 {
		return -1
	}
	rest := set >> uint(from)
	if rest == 0 {
		return -1
	}
	return from + bits.TrailingZeros64(rest)
}

// feasible reports whether some calendar day can ever match.
func (c *cronSpec) feasible() bool {
	if c.domStar || !c.dowStar {
		return true // any day of month, or the day-of-week alternative exists
	}
	for m := 1; m <= 12; m++ {
		if c.month&(1<<uint(m)) != 0 && nextBit(c.dom, 1) != -1 && nextBit(c.dom, 1) <= daysInMonthMax[m] {
			return true
		}
	}
	return false
}

// dayMatches applies the classic day-of-month / day-of-week rule.
func (c *cronSpec) dayMatches(day, weekday int) bool {
	domOK := c.dom&(1<<uint(day)) != 0
	dowOK := c.dow&(1<<uint(weekday)) != 0
	if c.domStar || c.dowStar {
		return domOK && dowOK
	}
	return domOK || dowOK
}
