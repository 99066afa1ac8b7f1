package recurrence

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/teambition/rrule-go"
)

// parsedRRule is the RRULE text split into what rrule-go iterates (opt, in
// floating wall time) and what this package applies itself on real instants
// (COUNT, UNTIL, EXDATE, RDATE), because those must see DST-resolved times.
type parsedRRule struct {
	opt     rrule.ROption
	count   int
	until   time.Time // real instant, inclusive; zero means none
	exdates []time.Time
	exdays  []civilDate
	rdates  []time.Time
}

// civilDate is a local calendar date (a date-only EXDATE excludes a day).
type civilDate struct {
	y int
	m time.Month
	d int
}

// parseRRuleText reads "RRULE:…" (or a bare "FREQ=…") with optional EXDATE
// and RDATE lines. field names the input in errors ("rrule" or "schedule").
func parseRRuleText(field, text string, loc *time.Location, maxCount int) (*parsedRRule, error) {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\n ", "") // RFC 5545 line folding
	text = strings.ReplaceAll(text, "\n\t", "")
	p := &parsedRRule{}
	var ruleLine string
	for _, raw := range strings.Split(text, "\n") {
		line := strings.TrimSpace(raw)
		if line == "" {
			continue
		}
		upper := strings.ToUpper(line)
		switch {
		case strings.HasPrefix(upper, "RRULE:"), strings.HasPrefix(upper, "FREQ="):
			if ruleLine != "" {
				return nil, fieldErrorf(field, "only one RRULE line is supported")
			}
			ruleLine = strings.TrimPrefix(upper, "RRULE:")
		case strings.HasPrefix(upper, "EXDATE"):
			if err := p.parseDates(field, line[len("EXDATE"):], loc, true); err != nil {
				return nil, err
			}
		case strings.HasPrefix(upper, "RDATE"):
			if err := p.parseDates(field, line[len("RDATE"):], loc, false); err != nil {
				return nil, err
			}
		case strings.HasPrefix(upper, "DTSTART"):
			return nil, fieldErrorf(field, "DTSTART is taken from start_time; remove the DTSTART line")
		case strings.HasPrefix(upper, "EXRULE"):
			return nil, fieldErrorf(field, "EXRULE is not supported (deprecated by RFC 5545); use EXDATE")
		default:
			return nil, fieldErrorf(field, "unrecognised line %q (expected RRULE, EXDATE or RDATE)", truncate(line))
		}
	}
	if ruleLine == "" {
		return nil, fieldErrorf(field, "missing RRULE line (e.g. \"RRULE:FREQ=DAILY\")")
	}
	if err := p.parseRule(field, ruleLine, loc, maxCount); err != nil {
		return nil, err
	}
	return p, nil
}

// parseRule parses the RRULE value. COUNT and UNTIL are kept out of rrule-go:
// COUNT must skip instances that DST makes nonexistent, and UNTIL compares
// real instants.
func (p *parsedRRule) parseRule(field, value string, loc *time.Location, maxCount int) error {
	seen := map[string]bool{}
	var rest []string
	for _, part := range strings.Split(value, ";") {
		key, val, ok := strings.Cut(part, "=")
		if !ok || key == "" || val == "" {
			return fieldErrorf(field, "malformed rule part %q (expected KEY=VALUE)", truncate(part))
		}
		if seen[key] {
			return fieldErrorf(field, "%s appears more than once", key)
		}
		seen[key] = true
		switch key {
		case "DTSTART":
			return fieldErrorf(field, "DTSTART is taken from start_time")
		case "BYEASTER":
			// A dateutil extension, not RFC 5545; our iterator does not read it.
			return fieldErrorf(field, "BYEASTER is not part of RFC 5545")
		case "COUNT":
			n, err := strconv.Atoi(val)
			if err != nil || n < 1 || n > maxCount {
				return fieldErrorf(field, "COUNT must be between 1 and %d", maxCount)
			}
			p.count = n
		case "UNTIL":
			t, err := parseICalTime(val, loc, true)
			if err != nil {
				return fieldErrorf(field, "UNTIL %q is not a date or date-time such as 20261231T235959Z", truncate(val))
			}
			p.until = t
		case "INTERVAL":
			n, err := strconv.Atoi(val)
			if err != nil || n < 1 || n > maxInterval {
				return fieldErrorf(field, "INTERVAL must be between 1 and %d", maxInterval)
			}
			rest = append(rest, part)
		case "BYDAY":
			for _, d := range strings.Split(val, ",") {
				m := byDayPattern.FindStringSubmatch(d)
				if m == nil {
					return fieldErrorf(field, "BYDAY value %q is not a weekday such as MO or -1FR", truncate(d))
				}
				if m[1] != "" {
					if n, _ := strconv.Atoi(m[1]); n == 0 {
						return fieldErrorf(field, "BYDAY ordinal in %q must not be 0", d)
					}
				}
			}
			rest = append(rest, part)
		default:
			rest = append(rest, part)
		}
	}
	if !seen["FREQ"] {
		return fieldErrorf(field, "FREQ is required (e.g. FREQ=DAILY)")
	}
	if p.count > 0 && !p.until.IsZero() {
		return fieldErrorf(field, "COUNT and UNTIL cannot both be set")
	}
	opt, err := rrule.StrToROptionInLocation(strings.Join(rest, ";"), time.UTC)
	if err != nil {
		return fieldErrorf(field, "%s", err.Error())
	}
	if _, err := rrule.NewRRule(*opt); err != nil { // bounds of every BY* list
		return fieldErrorf(field, "%s", err.Error())
	}
	if err := checkPartsForFreq(opt); err != nil {
		return fieldErrorf(field, "%s", err.Error())
	}
	p.opt = *opt
	return nil
}

// parseDates reads the ";params:values" tail of an EXDATE or RDATE line.
func (p *parsedRRule) parseDates(field, tail string, loc *time.Location, exclude bool) error {
	name := "RDATE"
	if exclude {
		name = "EXDATE"
	}
	params, values, ok := strings.Cut(tail, ":")
	if !ok {
		return fieldErrorf(field, "%s line needs a ':' before its values", name)
	}
	zone := loc
	for _, param := range strings.Split(params, ";") {
		if param == "" {
			continue
		}
		key, val, _ := strings.Cut(param, "=")
		switch strings.ToUpper(key) {
		case "TZID":
			z, err := loadZone(strings.Trim(val, `"`))
			if err != nil {
				return fieldErrorf(field, "%s TZID %q is not a known IANA time zone", name, truncate(val))
			}
			zone = z
		case "VALUE":
			if v := strings.ToUpper(val); v != "DATE" && v != "DATE-TIME" {
				return fieldErrorf(field, "%s VALUE=%s is not supported (use DATE or DATE-TIME)", name, truncate(val))
			}
		default:
			return fieldErrorf(field, "%s parameter %q is not supported", name, truncate(key))
		}
	}
	for _, v := range strings.Split(values, ",") {
		v = strings.ToUpper(strings.TrimSpace(v))
		if exclude && len(v) == len("20060102") {
			t, err := time.Parse("20060102", v)
			if err != nil {
				return fieldErrorf(field, "%s value %q is not a date", name, truncate(v))
			}
			p.exdays = append(p.exdays, civilDate{t.Year(), t.Month(), t.Day()})
			continue
		}
		t, err := parseICalTime(v, zone, false)
		if err != nil {
			return fieldErrorf(field, "%s value %q is not a date-time such as 20261224T090000Z", name, truncate(v))
		}
		if exclude {
			p.exdates = append(p.exdates, t)
		} else {
			p.rdates = append(p.rdates, ceilMicro(t))
		}
	}
	return nil
}

// parseICalTime reads an RFC 5545 DATE or DATE-TIME. A date-only UNTIL
// (endOfDay) includes the whole local day.
func parseICalTime(v string, loc *time.Location, endOfDay bool) (time.Time, error) {
	switch len(v) {
	case len("20060102"):
		d, err := time.Parse("20060102", v)
		if err != nil {
			return time.Time{}, err
		}
		if endOfDay {
			return resolveExplicit(d.AddDate(0, 0, 1), loc).Add(-time.Nanosecond), nil
		}
		return resolveExplicit(d, loc), nil
	case len("20060102T150405"):
		w, err := time.Parse("20060102T150405", v)
		if err != nil {
			return time.Time{}, err
		}
		return resolveExplicit(w, loc), nil
	default:
		return time.Parse("20060102T150405Z", v)
	}
}

// checkPartsForFreq rejects combinations RFC 5545 §3.3.10 forbids, which
// rrule-go would otherwise silently reinterpret.
func checkPartsForFreq(opt *rrule.ROption) error {
	f := opt.Freq
	if len(opt.Byweekno) > 0 && f != rrule.YEARLY {
		return errorString("BYWEEKNO is only valid with FREQ=YEARLY")
	}
	if len(opt.Byyearday) > 0 && (f == rrule.DAILY || f == rrule.WEEKLY || f == rrule.MONTHLY) {
		return errorString("BYYEARDAY is not valid with FREQ=DAILY, WEEKLY or MONTHLY")
	}
	if len(opt.Bymonthday) > 0 && f == rrule.WEEKLY {
		return errorString("BYMONTHDAY is not valid with FREQ=WEEKLY")
	}
	hasOrdinal := slices.ContainsFunc(opt.Byweekday, func(w rrule.Weekday) bool { return w.N() != 0 })
	if hasOrdinal && f != rrule.MONTHLY && f != rrule.YEARLY {
		return errorString("BYDAY ordinals (like 1MO) are only valid with FREQ=MONTHLY or YEARLY")
	}
	if hasOrdinal && f == rrule.YEARLY && len(opt.Byweekno) > 0 {
		return errorString("BYDAY ordinals cannot be combined with BYWEEKNO")
	}
	return nil
}

type errorString string

func (e errorString) Error() string { return string(e) }
