package recurrence

import (
	"context"
	"errors"
	"strings"
	"time"
)

// source is one way of producing instants; every Rule has exactly one.
type source interface {
	// expand appends to out its instants in [out.from, out.to), sorted,
	// unique, at most out.limit, spending one unit of b per candidate
	// examined.
	expand(out *series, b *budget) error
}

// Rule is a compiled Spec: immutable and safe for concurrent use.
type Rule struct {
	src       source
	loc       *time.Location
	start     time.Time
	recurring bool
	limits    Limits
	ctx       context.Context // nil: expansions run to their budget
}

// WithContext returns the rule bound to ctx: every expansion of the copy
// stops when ctx ends (a client that went away, a request deadline), with
// an error wrapping ctx.Err(). The compiled rule itself is shared.
func (r *Rule) WithContext(ctx context.Context) *Rule {
	c := *r
	c.ctx = ctx
	return &c
}

// Recurring reports whether the rule can produce more than its start instant.
func (r *Rule) Recurring() bool { return r.recurring }

// Location is the zone the rule is evaluated in.
func (r *Rule) Location() *time.Location { return r.loc }

// Start is the start time in UTC rounded up to the microsecond; zero for a
// cron rule without a lower bound.
func (r *Rule) Start() time.Time { return r.start }

// Compile validates spec and prepares it for expansion. Every error is a
// *FieldError naming the input field.
func Compile(spec Spec, limits Limits) (*Rule, error) {
	limits = limits.withDefaults()
	loc, err := loadZone(spec.Timezone)
	if err != nil {
		return nil, err
	}
	dst, err := spec.DST.compile()
	if err != nil {
		return nil, err
	}
	sources := 0
	for _, set := range []bool{spec.RRule != "", spec.Schedule != nil, spec.Cron != ""} {
		if set {
			sources++
		}
	}
	if sources > 1 {
		return nil, fieldErrorf(secondSource(spec), "only one of rrule, schedule and cron may be set")
	}
	r := &Rule{loc: loc, limits: limits, recurring: sources == 1}
	if !spec.StartTime.IsZero() {
		if y := spec.StartTime.UTC().Year(); y < 1 || y > 9998 {
			return nil, fieldErrorf("start_time", "year %d is out of range", y)
		}
		r.start = ceilMicro(spec.StartTime)
	}
	if r.start.IsZero() && spec.Cron == "" {
		return nil, fieldErrorf("start_time", "is required")
	}
	switch {
	case spec.Cron != "":
		r.src, err = compileCron(spec.Cron, r.start, loc, dst, limits)
	case spec.RRule != "":
		if len(spec.RRule) > maxTextLen {
			return nil, fieldErrorf("rrule", "longer than %d bytes", maxTextLen)
		}
		r.src, err = compileRRule("rrule", spec.RRule, nil, r.start, loc, dst, limits)
	case spec.Schedule != nil:
		if err := spec.Schedule.validate(r.start, limits); err != nil {
			return nil, err
		}
		r.src, err = compileRRule("schedule", spec.Schedule.RRule(), spec.Schedule.Exdates, r.start, loc, dst, limits)
	default:
		r.src = onceSource{at: r.start}
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

func secondSource(spec Spec) string {
	if spec.Cron != "" {
		return "cron"
	}
	return "schedule"
}

// loadZone resolves an IANA name from the embedded zone data; "" is UTC.
func loadZone(name string) (*time.Location, error) {
	if name == "" || name == "UTC" {
		return time.UTC, nil
	}
	if len(name) > 64 || name == "Local" || strings.ContainsAny(name, " \\") {
		return nil, fieldErrorf("timezone", "%q is not an IANA time zone name such as Europe/Prague", truncate(name))
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fieldErrorf("timezone", "%q is not an IANA time zone name such as Europe/Prague", truncate(name))
	}
	return loc, nil
}

func compileRRule(field, text string, exdates []time.Time, start time.Time, loc *time.Location, dst dstPolicy, limits Limits) (source, error) {
	p, err := parseRRuleText(field, text, loc, limits.MaxCount)
	if err != nil {
		return nil, err
	}
	p.exdates = append(p.exdates, exdates...)
	return buildRRule(field, p, start, loc, dst, limits)
}

// buildRRule checks a parsed rule against its start and prepares its source.
func buildRRule(field string, p *parsedRRule, start time.Time, loc *time.Location, dst dstPolicy, limits Limits) (*rruleSource, error) {
	if !p.until.IsZero() && p.until.Before(start) {
		return nil, fieldErrorf(field, "UNTIL is before start_time")
	}
	s, err := newRRuleSource(field, p, start, loc, dst)
	if err != nil {
		return nil, fieldErrorf(field, "%s", err.Error())
	}
	if reason := s.plan.never(); reason != "" {
		return nil, fieldErrorf(field, "the rule can never produce an instance: %s", reason)
	}
	if reason := impossibleReason(&s.opt); reason != "" {
		return nil, fieldErrorf(field, "the rule can never produce an instance: %s", reason)
	}
	if !latticeReaches(&s.opt, s.opt.Dtstart) {
		return nil, fieldErrorf(field, "the rule can never produce an instance: its INTERVAL steps never reach the BYHOUR/BYMINUTE/BYSECOND times")
	}
	if gap := minGap(&s.opt); gap < limits.MinInterval {
		return nil, fieldErrorf(field, "%s", tooFrequent(gap, limits.MinInterval))
	}
	if len(s.rdates) == 0 {
		// The first instance, found within the budget: a rule that cannot
		// produce one is refused now, after bounded work, rather than on
		// every later expansion.
		first := newSeries(start, maxInstant, 1, false)
		err := s.expandRule(&first, newBudget(limits.MaxIterations))
		switch {
		case errors.Is(err, ErrIterationBudget):
			return nil, fieldErrorf(field, "too sparse for FREQ=%s: no instance found within %d candidates "+
				"(use a coarser FREQ or fewer BYxxx limits)", s.opt.Freq, limits.MaxIterations)
		case err == nil && first.n == 0:
			return nil, fieldErrorf(field, "the rule never produces an instance at or after start_time (within its COUNT/UNTIL)")
		}
	}
	return s, nil
}

// compileCron ignores dst for "@every", which is elapsed time.
func compileCron(text string, lower time.Time, loc *time.Location, dst dstPolicy, limits Limits) (source, error) {
	if len(text) > maxTextLen {
		return nil, fieldErrorf("cron", "longer than %d bytes", maxTextLen)
	}
	text = strings.TrimSpace(text)
	if rest, ok := strings.CutPrefix(strings.ToLower(text), "@every"); ok {
		d, ok := parseEvery(strings.TrimSpace(rest))
		if !ok {
			return nil, fieldErrorf("cron", "@every needs a positive duration such as \"@every 15m\" or \"@every 1h30m\"")
		}
		if d < limits.MinInterval {
			return nil, fieldErrorf("cron", "%s", tooFrequent(d, limits.MinInterval))
		}
		if lower.IsZero() {
			return nil, fieldErrorf("start_time", "is required for @every (instants are start_time + k·interval)")
		}
		return everySource{start: lower, every: d}, nil
	}
	spec, err := parseCron(text)
	if err != nil {
		return nil, fieldErrorf("cron", "%s", err.Error())
	}
	if !spec.feasible() {
		return nil, fieldErrorf("cron", "the expression can never match a calendar day")
	}
	if gap := cronGap(spec); gap < limits.MinInterval {
		return nil, fieldErrorf("cron", "%s", tooFrequent(gap, limits.MinInterval))
	}
	return &cronSource{spec: spec, loc: loc, lower: lower, dst: dst}, nil
}

// cronGap is the smallest wall-clock distance between two matching minutes.
func cronGap(c *cronSpec) time.Duration {
	var day []int
	for h := nextBit(c.hour, 0); h >= 0; h = nextBit(c.hour, h+1) {
		for m := nextBit(c.minute, 0); m >= 0; m = nextBit(c.minute, m+1) {
			day = append(day, h*3600+m*60)
		}
	}
	return time.Duration(cyclicGap(day, 86400)) * time.Second
}

// maxInstant is the end of every open window: rrule-go and the cron search
// stop at year 9999.
var maxInstant = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
