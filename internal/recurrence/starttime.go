package recurrence

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// ParseStartTime resolves a start_time as sent by a client (see
// ParseInstant), within the years a series may be anchored in.
func ParseStartTime(text string, loc *time.Location, now time.Time) (time.Time, error) {
	t, err := ParseInstant("start_time", text, loc, now)
	if err != nil {
		return t, err
	}
	if t.Before(minStartTime) || t.After(maxStartTime) {
		return time.Time{}, fieldErrorf("start_time", "must be between %d and %d", minStartTime.Year(), maxStartTime.Year())
	}
	return t, nil
}

// The start times accepted: a series anchored in year 1 (or past 9999) is a
// mistake, and the zero time would read as "missing" further down.
var (
	minStartTime = time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)
	maxStartTime = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)
)

// ParseInstant resolves any instant a client gives (start_time, until, to,
// at, after, since): RFC 3339, a local date-time without offset (read in
// loc), or natural language relative to now in loc ("now", "in 30
// minutes", "tomorrow at 9am", "next friday at 3pm", "today at 17:30", "at
// 9am", "noon", "midnight", weekday names). It is the one parser of every
// such field, so they all accept the same forms. A local time that does not
// exist is read with the offset before the gap (never early). Errors are
// *FieldError naming field.
func ParseInstant(field, text string, loc *time.Location, now time.Time) (time.Time, error) {
	if loc == nil {
		loc = time.UTC
	}
	if len(text) > maxTextLen {
		return time.Time{}, fieldErrorf(field, "longer than %d bytes", maxTextLen)
	}
	text = strings.TrimSpace(text)
	if t, err := time.Parse(time.RFC3339Nano, text); err == nil {
		return t.UTC(), nil
	}
	for _, layout := range localLayouts {
		if w, err := time.Parse(layout, text); err == nil {
			return resolveExplicit(w, loc), nil
		}
	}
	if t, ok := parseNatural(strings.ToLower(text), loc, now); ok {
		return t.UTC(), nil
	}
	return time.Time{}, fieldErrorf(field,
		"cannot read %q: use RFC 3339 (2026-12-24T09:00:00+01:00) or forms like \"in 30 minutes\", \"tomorrow at 9am\", \"next friday at 3pm\", \"7 days ago\"",
		truncate(text))
}

var localLayouts = []string{
	"2006-01-02T15:04:05.999999999", "2006-01-02T15:04", "2006-01-02 15:04:05.999999999", "2006-01-02 15:04", "2006-01-02",
}

var (
	clockPattern = regexp.MustCompile(`^([0-9]{1,2})(?:[:.]([0-9]{2}))?(?::([0-9]{2}))?(am|pm|a\.m\.|p\.m\.)?$`)
	weekdays     = map[string]time.Weekday{
		"sunday": time.Sunday, "monday": time.Monday, "tuesday": time.Tuesday, "wednesday": time.Wednesday,
		"thursday": time.Thursday, "friday": time.Friday, "saturday": time.Saturday,
		"sun": time.Sunday, "mon": time.Monday, "tue": time.Tuesday, "tues": time.Tuesday, "wed": time.Wednesday,
		"thu": time.Thursday, "thur": time.Thursday, "thurs": time.Thursday, "fri": time.Friday, "sat": time.Saturday,
	}
	units = map[string]time.Duration{
		"s": time.Second, "sec": time.Second, "secs": time.Second, "second": time.Second, "seconds": time.Second,
		"m": time.Minute, "min": time.Minute, "mins": time.Minute, "minute": time.Minute, "minutes": time.Minute,
		"h": time.Hour, "hr": time.Hour, "hrs": time.Hour, "hour": time.Hour, "hours": time.Hour,
		"d": 24 * time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour,
		"w": 7 * 24 * time.Hour, "week": 7 * 24 * time.Hour, "weeks": 7 * 24 * time.Hour,
	}
)

// parseNatural handles the natural-language forms; text is lower case.
func parseNatural(text string, loc *time.Location, now time.Time) (time.Time, bool) {
	text = strings.TrimRight(text, ".!")
	if text == "now" || text == "right now" {
		return now, true
	}
	tokens := strings.Fields(text)
	if len(tokens) > 0 && tokens[0] == "in" {
		return parseRelative(tokens[1:], loc, now, 1)
	}
	if len(tokens) > 1 && tokens[len(tokens)-1] == "ago" { // "7 days ago": a report's window
		return parseRelative(tokens[:len(tokens)-1], loc, now, -1)
	}
	return parseDayAndClock(tokens, loc, now)
}

// parseRelative reads "<n> <unit> [and <n> <unit>…]" or a Go duration,
// ahead of now (sign 1) or before it (-1). Hours and smaller are elapsed
// time; days and weeks keep the wall-clock time.
func parseRelative(tokens []string, loc *time.Location, now time.Time, sign int) (time.Time, bool) {
	if len(tokens) == 1 {
		if d, err := time.ParseDuration(tokens[0]); err == nil && d >= 0 && d < 100*365*24*time.Hour {
			return now.Add(time.Duration(sign) * d), true
		}
	}
	var elapsed time.Duration
	days := 0
	seen := false
	for i := 0; i < len(tokens); i++ {
		if tokens[i] == "and" && seen {
			continue
		}
		n := 0
		numText, unitText := tokens[i], ""
		if j := strings.IndexFunc(numText, func(r rune) bool { return r < '0' || r > '9' }); j > 0 {
			numText, unitText = numText[:j], numText[j:] // "30min"
		}
		switch numText {
		case "a", "an", "one":
			n = 1
		default:
			v, err := strconv.Atoi(numText)
			if err != nil || v < 0 || v > 100000 {
				return time.Time{}, false
			}
			n = v
		}
		if unitText == "" {
			if i+1 >= len(tokens) {
				return time.Time{}, false
			}
			i++
			unitText = tokens[i]
		}
		unit, ok := units[unitText]
		if !ok {
			return time.Time{}, false
		}
		if unit >= 24*time.Hour {
			days += n * int(unit/(24*time.Hour))
		} else {
			elapsed += time.Duration(n) * unit
		}
		seen = true
	}
	if !seen {
		return time.Time{}, false
	}
	t := now
	if days > 0 {
		w := wallOf(now, loc)
		t = resolveExplicit(w.AddDate(0, 0, sign*days), loc)
	}
	return t.Add(time.Duration(sign) * elapsed), true
}

// parseDayAndClock reads an optional day ("today", "tomorrow", a weekday,
// "next <weekday>") and an optional clock time ("9am", "17:30", "noon",
// "midnight"), in either order, with "at"/"on"/"this" as fillers.
func parseDayAndClock(tokens []string, loc *time.Location, now time.Time) (time.Time, bool) {
	var (
		dayKind  string // "", "today", "tomorrow", "weekday", "next"
		weekday  time.Weekday
		hasClock bool
		hour     int
		minute   int
		second   int
	)
	for i := 0; i < len(tokens); i++ {
		tok := tokens[i]
		switch {
		case tok == "at" || tok == "on" || tok == "this":
		case tok == "today" || tok == "tomorrow":
			if dayKind != "" {
				return time.Time{}, false
			}
			dayKind = tok
		case tok == "next":
			if dayKind != "" || i+1 >= len(tokens) {
				return time.Time{}, false
			}
			wd, ok := weekdays[tokens[i+1]]
			if !ok {
				return time.Time{}, false
			}
			dayKind, weekday = "next", wd
			i++
		case tok == "noon" || tok == "midday" || tok == "midnight":
			if hasClock {
				return time.Time{}, false
			}
			hasClock, hour, minute, second = true, 12, 0, 0
			if tok == "midnight" {
				hour = 0
			}
		default:
			if wd, ok := weekdays[tok]; ok {
				if dayKind != "" {
					return time.Time{}, false
				}
				dayKind, weekday = "weekday", wd
				continue
			}
			if hasClock {
				return time.Time{}, false
			}
			clock := tok
			if i+1 < len(tokens) && isMeridiem(tokens[i+1]) {
				clock += tokens[i+1]
				i++
			}
			h, m, s, ok := parseClock(clock)
			if !ok {
				return time.Time{}, false
			}
			hasClock, hour, minute, second = true, h, m, s
		}
	}
	if dayKind == "" && !hasClock {
		return time.Time{}, false
	}
	wallNow := wallOf(now, loc)
	y, mo, d := wallNow.Date()
	if !hasClock {
		hour, minute, second = wallNow.Clock()
	}
	at := func(offsetDays int) time.Time {
		return resolveExplicit(time.Date(y, mo, d+offsetDays, hour, minute, second, 0, time.UTC), loc)
	}
	switch dayKind {
	case "today":
		if !hasClock {
			return now, true
		}
		return at(0), true
	case "tomorrow":
		return at(1), true
	case "next":
		ahead := (int(weekday) - int(wallNow.Weekday()) + 7) % 7
		if ahead == 0 {
			ahead = 7
		}
		return at(ahead), true
	case "weekday":
		ahead := (int(weekday) - int(wallNow.Weekday()) + 7) % 7
		if t := at(ahead); t.After(now) {
			return t, true
		}
		return at(ahead + 7), true
	default: // a clock time alone means its next occurrence
		if t := at(0); t.After(now) {
			return t, true
		}
		return at(1), true
	}
}

func isMeridiem(s string) bool {
	return s == "am" || s == "pm" || s == "a.m." || s == "p.m."
}

// parseClock reads "9", "9am", "9:30pm", "17:30", "17:30:15".
func parseClock(s string) (h, m, sec int, ok bool) {
	g := clockPattern.FindStringSubmatch(s)
	if g == nil {
		return 0, 0, 0, false
	}
	h, _ = strconv.Atoi(g[1])
	if g[2] != "" {
		m, _ = strconv.Atoi(g[2])
	}
	if g[3] != "" {
		sec, _ = strconv.Atoi(g[3])
	}
	if m > 59 || sec > 59 {
		return 0, 0, 0, false
	}
	switch strings.ReplaceAll(g[4], ".", "") {
	case "am":
		if h < 1 || h > 12 {
			return 0, 0, 0, false
		}
		if h == 12 {
			h = 0
		}
	case "pm":
		if h < 1 || h > 12 {
			return 0, 0, 0, false
		}
		if h != 12 {
			h += 12
		}
	default:
		if h > 23 || g[2] == "" {
			return 0, 0, 0, false // a bare number is not a time of day
		}
	}
	return h, m, sec, true
}
