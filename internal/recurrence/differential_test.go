package recurrence

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// differentialRules is how many random rules TestDifferentialAgainstReference
// compares with the reference reading of RFC 5545 on every run.
const differentialRules = 10000

var diffZones = []string{"UTC", "America/New_York", "Europe/Prague", "Australia/Lord_Howe", "America/Santiago",
	"Asia/Kolkata", "Pacific/Chatham"}

var allWeekdays = []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday, time.Saturday, time.Sunday}

// randomRefRule draws a rule over every rule part, biased towards the
// shapes random sets rarely hit: BYWEEKNO near New Year and with WKST other
// than Monday, negative week numbers, BYSETPOS with several BYxxx parts,
// leap days, month ends. It returns the rule, DTSTART as a wall reading
// and how long a window suits it.
func randomRefRule(rng *rand.Rand) (refRule, time.Time, time.Duration) {
	pick := func(vals ...int) int { return vals[rng.IntN(len(vals))] }
	some := func(n int, gen func() int) []int {
		var out []int
		for range 1 + rng.IntN(n) {
			out = append(out, gen())
		}
		return out
	}
	chance := func(pct int) bool { return rng.IntN(100) < pct }
	freqs := []string{"YEARLY", "YEARLY", "YEARLY", "YEARLY", "YEARLY", "MONTHLY", "MONTHLY", "MONTHLY", "MONTHLY",
		"WEEKLY", "WEEKLY", "WEEKLY", "WEEKLY", "DAILY", "DAILY", "HOURLY", "HOURLY", "MINUTELY", "SECONDLY"}
	r := refRule{freq: freqs[rng.IntN(len(freqs))], interval: 1, wkst: time.Monday}
	if chance(35) {
		r.interval = pick(2, 2, 3, 4, 5)
		if refFreqRank[r.freq] < refFreqRank["DAILY"] && chance(50) {
			r.interval = pick(7, 13, 25, 90, 97)
		}
	}
	if chance(40) {
		r.wkst = allWeekdays[rng.IntN(7)]
	}
	y := 2026 + rng.IntN(15)
	m, d := time.Month(1+rng.IntN(12)), 1+rng.IntN(31)
	if chance(30) { // around New Year
		if chance(50) {
			m, d = time.December, 20+rng.IntN(12)
		} else {
			m, d = time.January, 1+rng.IntN(10)
		}
	}
	if chance(5) {
		m, d = time.February, 29
	}
	start := time.Date(y, m, d, rng.IntN(24), pick(0, 0, 15, 30, rng.IntN(60)), pick(0, 0, 0, rng.IntN(60)), 0, time.UTC)
	yearly, monthly := r.freq == "YEARLY", r.freq == "MONTHLY"
	if chance(25) {
		r.byMonth = some(3, func() int { return pick(1, 2, 12, 1+rng.IntN(12)) })
	}
	if yearly && chance(35) {
		r.byWeekNo = some(2, func() int { return pick(1, 2, 52, 53, -1, -2, -52, -53, 1+rng.IntN(53), -1-rng.IntN(53)) })
	}
	if (yearly || refFreqRank[r.freq] < refFreqRank["DAILY"]) && chance(12) {
		r.byYearDay = some(3, func() int { return pick(1, 59, 60, 365, 366, -1, -366, 1+rng.IntN(366), -1-rng.IntN(366)) })
	}
	if r.freq != "WEEKLY" && chance(25) {
		r.byMonthDay = some(3, func() int { return pick(1, 29, 30, 31, -1, -2, 1+rng.IntN(31), -1-rng.IntN(31)) })
	}
	if chance(45) {
		ordinals := (yearly || monthly) && len(r.byWeekNo) == 0 && chance(40)
		for _, wd := range allWeekdays {
			if chance(35) {
				bd := refDay{wd: wd}
				if ordinals && chance(70) {
					bd.n = pick(1, 2, 3, 4, 5, -1, -2, -5)
					if yearly && len(r.byMonth) == 0 && chance(30) {
						bd.n = pick(20, 52, 53, -53, -20)
					}
				}
				r.byDay = append(r.byDay, bd)
			}
		}
	}
	if chance(30) || r.freq == "SECONDLY" {
		r.byHour = some(3, func() int { return rng.IntN(24) })
	}
	if chance(25) || r.freq == "SECONDLY" && chance(50) {
		r.byMinute = some(3, func() int { return pick(0, 30, 59, rng.IntN(60)) })
	}
	if chance(15) {
		r.bySecond = some(2, func() int { return pick(0, 59, rng.IntN(60)) })
	}
	setPos := 10
	if yearly || monthly || r.freq == "WEEKLY" {
		setPos = 30
	}
	if chance(setPos) {
		r.bySetPos = some(2, func() int { return pick(1, 2, 3, -1, -2) })
	}
	if chance(25) {
		r.count = 1 + rng.IntN(30)
	}
	span := map[string]time.Duration{"YEARLY": 3 * 365 * 24 * time.Hour, "MONTHLY": 400 * 24 * time.Hour,
		"WEEKLY": 150 * 24 * time.Hour, "DAILY": 40 * 24 * time.Hour, "HOURLY": 4 * 24 * time.Hour,
		"MINUTELY": 24 * time.Hour, "SECONDLY": 6 * time.Hour}[r.freq]
	return r, start, span
}

// TestDifferentialAgainstReference compares the engine with the reference
// on differentialRules seeded random rules, in parallel shards.
func TestDifferentialAgainstReference(t *testing.T) {
	t.Parallel()
	const shards = 8
	for shard := range shards {
		t.Run(fmt.Sprint("shard", shard), func(t *testing.T) {
			t.Parallel()
			differential(t, uint64(shard), differentialRules/shards)
		})
	}
}

func differential(t *testing.T, seed uint64, rules int) {
	rng := rand.New(rand.NewPCG(23, 5545+seed))
	locs := map[string]*time.Location{}
	for _, z := range diffZones {
		locs[z] = mustLoc(t, z)
	}
	compared, refused, nonEmpty := 0, 0, 0
	shapes := map[string]int{}
	weeks := map[refWeekKey][3]int{}
	for i := range rules {
		rule, wall, span := randomRefRule(rng)
		rule.weeks = weeks
		zone := diffZones[rng.IntN(len(diffZones))]
		loc := locs[zone]
		start, ok := refResolve(wall, loc)
		if !ok { // DTSTART in a gap: take the hour after
			start, _ = refResolve(wall.Add(time.Hour), loc)
		}
		from := start.Add(-time.Hour)
		if rng.IntN(10) < 6 {
			from = start.Add(time.Duration(rng.Int64N(int64(span / 2))))
		}
		to := from.Add(time.Hour + time.Duration(rng.Int64N(int64(span))))
		if rule.count == 0 && rng.IntN(100) < 15 {
			// UNTIL exactly on an instant (inclusive), or between two.
			all := rule.refInstants(start, loc, DST{}, start, start.Add(span))
			if len(all) > 0 {
				rule.until = all[rng.IntN(len(all))]
				if rng.IntN(4) == 0 {
					rule.until = rule.until.Add(-time.Second)
				}
			} else {
				rule.until = start.Add(time.Duration(rng.Int64N(int64(span))))
			}
			if rule.until.Before(start) {
				rule.until = start
			}
		}
		text := rule.text()
		want := rule.refInstants(start, loc, DST{}, from, to)
		label := fmt.Sprintf("rule %d: %s from %s (%s) in %s over [%s, %s)", i, text, start.In(loc).Format(time.RFC3339),
			start.In(loc).Weekday(), zone, from.Format(time.RFC3339), to.Format(time.RFC3339))
		// A two-hundredth of the default budget to compile: the rules that
		// never produce are refused 200 times sooner.
		r, err := Compile(Spec{StartTime: start, Timezone: zone, RRule: text}, Limits{MaxIterations: 5_000})
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("%s: error %v is not a *FieldError", label, err)
			}
			if len(want) > 0 {
				t.Fatalf("%s: refused (%v) but the reference has %s", label, err, head(want))
			}
			refused++
			continue
		}
		r.limits = DefaultLimits() // the windows themselves get the full budget
		got, err := Expand(r, from, to, 100000)
		if err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		if fmt.Sprint(formatAll(got)) != fmt.Sprint(formatAll(want)) {
			t.Fatalf("%s:\n got  %v\n want %v (reference)", label, head(got), head(want))
		}
		compared++
		if len(want) > 0 {
			nonEmpty++
			for shape, ok := range map[string]bool{
				"BYWEEKNO across New Year": len(rule.byWeekNo) > 0 && slices.ContainsFunc(want, func(t time.Time) bool {
					return t.Month() == time.January && t.Day() <= 7 || t.Month() == time.December && t.Day() >= 25
				}),
				"negative BYWEEKNO":        slices.ContainsFunc(rule.byWeekNo, func(v int) bool { return v < 0 }),
				"WKST other than Monday":   rule.wkst != time.Monday && (len(rule.byWeekNo) > 0 || rule.freq == "WEEKLY"),
				"WEEKLY with BYSETPOS":     rule.freq == "WEEKLY" && len(rule.bySetPos) > 0,
				"COUNT with BYSETPOS":      rule.count > 0 && len(rule.bySetPos) > 0,
				"UNTIL exactly an instant": !rule.until.IsZero() && slices.ContainsFunc(want, rule.until.Equal),
				"BYYEARDAY":                len(rule.byYearDay) > 0,
				"a BYDAY ordinal":          slices.ContainsFunc(rule.byDay, func(d refDay) bool { return d.n != 0 }),
				"sub-daily":                refFreqRank[rule.freq] < refFreqRank["DAILY"],
				"a zone with DST":          zone != "UTC" && zone != "Asia/Kolkata",
			} {
				if ok {
					shapes[shape]++
				}
			}
		}
	}
	for _, shape := range []string{"BYWEEKNO across New Year", "negative BYWEEKNO", "WKST other than Monday",
		"WEEKLY with BYSETPOS", "COUNT with BYSETPOS", "UNTIL exactly an instant", "BYYEARDAY", "a BYDAY ordinal",
		"sub-daily", "a zone with DST"} {
		if shapes[shape] == 0 {
			t.Errorf("no compared window with instants had the shape %q", shape)
		}
	}
	t.Logf("shapes with instants: %v", shapes)
	t.Logf("%d rules: %d compared (%d windows with instants), %d refused", rules, compared, nonEmpty, refused)
	if refused > rules/5 || nonEmpty < rules/2 {
		t.Fatalf("the generator is off: %d refused, %d of %d compared windows had instants", refused, nonEmpty, compared)
	}
}

// head formats the first instants of a long list for a failure message.
func head(ts []time.Time) string {
	if len(ts) > 12 {
		return fmt.Sprintf("%v … (%d in all)", formatAll(ts[:12]), len(ts))
	}
	return fmt.Sprint(formatAll(ts))
}

// Issue #34, found by a differential test against an RFC 5545 reference: a
// DTSTART on the second reading of a repeated wall time (Europe/Berlin,
// 2027-10-31 02:00 CET = 01:00Z; 02:00 CEST = 00:00Z came first) lost its
// first instance whenever the window began between the two readings: the
// iteration started at the wall reading of from (02:xx CEST), past 02:00, so
// DTSTART's reading was never visited. DTSTART is the first instance however
// the window is cut, and a preview just before it shows it first.
func TestDifferentialPinnedDTSTARTOnSecondReading(t *testing.T) {
	t.Parallel()
	start := utc("2027-10-31T01:00:00Z")
	want := []string{"2027-10-31T01:00:00Z", "2028-10-30T01:00:00Z", "2029-10-31T01:00:00Z"}
	for _, rule := range []string{"RRULE:FREQ=YEARLY;BYYEARDAY=304", "RRULE:FREQ=YEARLY;BYYEARDAY=304;COUNT=3"} {
		for _, repeat := range []string{"", RepeatFirst, RepeatLast, RepeatBoth} {
			r := mustCompile(t, Spec{StartTime: start, Timezone: "Europe/Berlin", RRule: rule, DST: DST{Repeat: repeat}})
			for _, from := range []string{"2027-01-01T00:00:00Z", "2027-10-31T00:00:00Z", "2027-10-31T00:30:00Z",
				"2027-10-31T00:59:59.999999Z", "2027-10-31T01:00:00Z"} {
				got := mustExpand(t, r, utc(from), utc("2030-01-01T00:00:00Z"), 10)
				require.Equal(t, want, formatAll(got), "%s repeat %q from %s: got, want", rule, repeat, from)
			}
			p, err := Preview(r, start.Add(-time.Microsecond), 1)
			require.NoError(t, err)
			require.Len(t, p, 1)
			require.Equal(t, want[0], p[0].UTC.Format(time.RFC3339Nano), "%s repeat %q: preview's first instant", rule, repeat)
		}
	}
}

// fallBackZones have a fall back in 2027; Lord_Howe's moves by 30 minutes.
var fallBackZones = []string{"Europe/Berlin", "America/New_York", "Australia/Sydney", "Australia/Lord_Howe"}

// fallBackStarts returns, for the zone's first fall back of 2027, wall
// readings the transition repeats (the first, one in the middle with
// seconds, the last minute) and the two instants showing each.
func fallBackStarts(t *testing.T, loc *time.Location) (walls []time.Time, passes [][]time.Time) {
	t.Helper()
	for _, tr := range transitionsOf(loc) {
		_, before := tr.Add(-time.Nanosecond).In(loc).Zone()
		_, after := tr.In(loc).Zone()
		if after >= before {
			continue
		}
		jump := time.Duration(before-after) * time.Second
		lo := tr.UTC().Add(time.Duration(after) * time.Second) // the first repeated wall reading
		for _, w := range []time.Time{lo, lo.Add(jump/2 + 2*time.Minute + 42*time.Second), lo.Add(jump - time.Minute)} {
			shows := refShows(w, loc)
			require.Len(t, shows, 2, "%s is repeated in %s", w, loc)
			walls, passes = append(walls, w), append(passes, shows)
		}
		return walls, passes
	}
	t.Fatalf("no fall back in %s", loc)
	return nil, nil
}

// fallBackFroms are where windows begin for a start_time on one of passes:
// before both passes, on and just after the first, between them, just before
// and on start_time, and after it.
func fallBackFroms(start time.Time, passes []time.Time) []time.Time {
	return []time.Time{start.Add(-3 * time.Hour), passes[0], passes[0].Add(time.Second),
		passes[0].Add(passes[1].Sub(passes[0]) / 2), start.Add(-time.Microsecond), start, start.Add(20 * time.Minute)}
}

// fallBackRules are rules of every frequency that DTSTART d0 (a wall
// reading) matches; fallBackSpans says how long a window suits each.
func fallBackRules(d0 time.Time) []refRule {
	day := refDay{wd: d0.Weekday()}
	nth := refDay{n: (d0.Day()-1)/7 + 1, wd: d0.Weekday()}
	next := refDay{wd: (d0.Weekday() + 1) % 7}
	rules := []refRule{
		{freq: "YEARLY"},
		{freq: "YEARLY", byYearDay: []int{d0.YearDay()}}, // issue #34
		{freq: "YEARLY", byMonth: []int{int(d0.Month())}, byDay: []refDay{nth}},
		{freq: "MONTHLY"},
		{freq: "MONTHLY", byDay: []refDay{nth}}, // the transition's Sunday: crosses a spring forward too
		{freq: "WEEKLY"},
		{freq: "WEEKLY", byDay: []refDay{day, next}},
		{freq: "DAILY"},
		{freq: "DAILY", interval: 2, byHour: []int{d0.Hour(), (d0.Hour() + 1) % 24}},
		{freq: "HOURLY"},
		{freq: "HOURLY", interval: 2},
		{freq: "MINUTELY", interval: 15},
		{freq: "MINUTELY", interval: 10},
		{freq: "MINUTELY", interval: 7},
	}
	for i := range rules {
		rules[i].interval = max(rules[i].interval, 1)
		rules[i].wkst = time.Monday
	}
	return rules
}

var fallBackSpans = map[string]time.Duration{"YEARLY": 3 * 365 * 24 * time.Hour, "MONTHLY": 430 * 24 * time.Hour,
	"WEEKLY": 50 * 24 * time.Hour, "DAILY": 10 * 24 * time.Hour, "HOURLY": 30 * time.Hour, "MINUTELY": 6 * time.Hour}

// schedule is the rule as a schedule object; nil when it has parts the
// object does not carry.
func (r refRule) schedule() *Schedule {
	if len(r.byYearDay) > 0 || len(r.byWeekNo) > 0 || len(r.bySecond) > 0 || r.wkst != time.Monday || !r.until.IsZero() {
		return nil
	}
	s := &Schedule{Frequency: strings.ToLower(r.freq), Interval: r.interval, ByMonth: r.byMonth,
		ByMonthDay: r.byMonthDay, ByHour: r.byHour, ByMinute: r.byMinute, BySetPos: r.bySetPos}
	for _, d := range r.byDay {
		s.ByDay = append(s.ByDay, strings.TrimPrefix(fmt.Sprint(d.n), "0")+refDayNames[d.wd])
	}
	if r.count > 0 {
		s.Count = &r.count
	}
	return s
}

// checkFiresOnce fails when a wall reading fires more often than the repeat
// policy allows (twice under both, else once) or anything precedes start.
func checkFiresOnce(t *testing.T, label string, got []time.Time, loc *time.Location, p DST, start time.Time) {
	t.Helper()
	allowed := 1
	if p.Repeat == RepeatBoth {
		allowed = 2
	}
	seen := map[time.Time]int{}
	for _, g := range got {
		if g.Before(start) {
			t.Fatalf("%s: %s fires before start_time", label, g.Format(time.RFC3339))
		}
		w := wallOf(g, loc)
		if seen[w]++; seen[w] > allowed {
			t.Fatalf("%s: the wall reading %s fires %d times", label, w.Format(time.DateTime), seen[w])
		}
	}
}

// TestDifferentialFallBack compares the engine with the reference for
// DTSTART on either pass of a repeated wall time: four zones (one with a
// 30-minute fall back), three repeated readings each, rules of every
// frequency (with and without COUNT, as rrule and as schedule), every DST
// policy, windows cut anywhere around the two passes. It also checks what a
// user sees without the reference: DTSTART is the first instance of every
// window that holds it (and of a preview just before it), no wall reading
// fires more often than the repeat policy says, and split windows add up.
func TestDifferentialFallBack(t *testing.T) {
	t.Parallel()
	policies := append(slices.Clip(allPolicies), DST{Repeat: RepeatFirst})
	for _, zone := range fallBackZones {
		t.Run(zone, func(t *testing.T) {
			t.Parallel()
			loc := mustLoc(t, zone)
			walls, passes := fallBackStarts(t, loc)
			compared := 0
			for i, wall := range walls {
				for _, start := range passes[i] {
					froms := fallBackFroms(start, passes[i])
					for _, rule := range fallBackRules(wall) {
						for _, count := range []int{0, 6} {
							rule.count = count
							span := fallBackSpans[rule.freq]
							ref := rule.refSeries(start, loc, start.Add(20*time.Minute+span))
							for _, p := range policies {
								specs := []Spec{{StartTime: start, Timezone: zone, RRule: rule.text(), DST: p}}
								if s := rule.schedule(); s != nil {
									specs = append(specs, Spec{StartTime: start, Timezone: zone, Schedule: s, DST: p})
								}
								for _, spec := range specs {
									compared += checkFallBackRule(t, spec, ref, froms, span)
								}
							}
						}
					}
				}
			}
			t.Logf("%d windows compared", compared)
		})
	}
}

// checkFallBackRule expands spec over a window from each of froms and
// compares it with the reference series; it returns the windows compared.
func checkFallBackRule(t *testing.T, spec Spec, ref *refSeries, froms []time.Time, span time.Duration) int {
	t.Helper()
	r := mustCompile(t, spec)
	text := spec.RRule
	if spec.Schedule != nil {
		text = "schedule " + spec.Schedule.RRule()
	}
	label := fmt.Sprintf("%s from %s (%s) in %s under %+v", text, spec.StartTime.Format(time.RFC3339),
		spec.StartTime.In(ref.loc).Format(time.RFC3339), spec.Timezone, spec.DST)
	start := spec.StartTime
	for _, from := range froms {
		to := from.Add(span)
		got := mustExpand(t, r, from, to, 100000)
		want := ref.instants(spec.DST, from, to)
		l := fmt.Sprintf("%s over [%s, %s)", label, from.Format(time.RFC3339Nano), to.Format(time.RFC3339))
		if !slices.EqualFunc(want, got, time.Time.Equal) {
			require.Equal(t, formatAll(want), formatAll(got), "%s: want (reference), got", l)
		}
		if !from.After(start) && (len(got) == 0 || !got[0].Equal(start)) {
			t.Fatalf("%s: first instances %v, want DTSTART first", l, head(got))
		}
		checkFiresOnce(t, l, got, ref.loc, spec.DST, start)
		mid := start.Add(7 * time.Minute)
		if mid.After(from) && mid.Before(to) {
			split := append(mustExpand(t, r, from, mid, 100000), mustExpand(t, r, mid, to, 100000)...)
			if !slices.EqualFunc(got, split, time.Time.Equal) {
				require.Equal(t, formatAll(got), formatAll(split), "%s: split at %s", l, mid.Format(time.RFC3339))
			}
		}
	}
	p, err := Preview(r, start.Add(-time.Microsecond), 1)
	require.NoError(t, err)
	require.Len(t, p, 1, label)
	require.True(t, p[0].UTC.Equal(start), "%s: preview starts at %s, want DTSTART", label, p[0].UTC.Format(time.RFC3339))
	return len(froms)
}

// TestDifferentialFallBackCron does the same for cron, whose start_time is an
// inclusive lower bound rather than DTSTART (docs/recurrence.md): on either
// pass of a repeated wall time, under every DST policy, the instants are the
// minute-by-minute oracle's at or after start_time (so start_time is the
// first instance when it is one of the cron's instants), each wall reading
// fires as often as the repeat policy says; and @every, which is elapsed
// time, fires at start_time first and every interval after it.
func TestDifferentialFallBackCron(t *testing.T) {
	t.Parallel()
	// Every repeat policy; a gap policy changes nothing in these windows
	// (no gap within a day of a fall back), so two stand for the rest.
	policies := []DST{{}, first, last, both, shiftLast, skipBoth}
	const span = 26 * time.Hour
	for _, zone := range fallBackZones {
		t.Run(zone, func(t *testing.T) {
			t.Parallel()
			loc := mustLoc(t, zone)
			walls, passes := fallBackStarts(t, loc)
			// The oracle plans each expression once, wide enough for every
			// window of every start.
			lo, hi := passes[0][0].Add(-5*time.Hour), passes[len(passes)-1][1].Add(20*time.Minute+span+3*time.Hour)
			oracles := map[string][]string{}
			oracle := func(expr string, p DST) []string {
				key := fmt.Sprintf("%s %+v", expr, p)
				if _, ok := oracles[key]; !ok {
					oracles[key] = cronPolicyOracle(expr, loc, p, lo, hi)
				}
				return oracles[key]
			}
			for i, w := range walls {
				exprs := []string{fmt.Sprintf("%d %d * * *", w.Minute(), w.Hour()),
					fmt.Sprintf("%d %d %d %d *", w.Minute(), w.Hour(), w.Day(), w.Month()),
					fmt.Sprintf("%d %d * * %d", w.Minute(), w.Hour(), w.Weekday()),
					fmt.Sprintf("%d * * * *", w.Minute()), "*/15 * * * *", "*/10 * * * *", "*/7 * * * *"}
				for _, start := range passes[i] {
					froms := fallBackFroms(start, passes[i])
					for _, expr := range exprs {
						for _, p := range policies {
							r := mustCompile(t, Spec{StartTime: start, Timezone: zone, Cron: expr, DST: p})
							planned := oracle(expr, p)
							for _, from := range froms {
								to := from.Add(span)
								label := fmt.Sprintf("cron %q from %s (%s) in %s under %+v over [%s, %s)", expr,
									start.Format(time.RFC3339), start.In(loc).Format(time.RFC3339), zone, p,
									from.Format(time.RFC3339Nano), to.Format(time.RFC3339))
								want := []string{}
								for _, o := range planned {
									at := utc(strings.TrimSuffix(o, " skipped"))
									if !at.Before(from) && !at.Before(start) && at.Before(to) {
										want = append(want, o)
									}
								}
								got, err := ExpandInstants(r, from, to, 100000)
								require.NoError(t, err)
								require.Equal(t, want, formatInstants(got), "%s: want (oracle), got", label)
								checkFiresOnce(t, label, mustExpand(t, r, from, to, 100000), loc, p, start)
							}
						}
					}
					for _, every := range []time.Duration{15 * time.Minute, time.Hour, 24 * time.Hour} {
						r := mustCompile(t, Spec{StartTime: start, Timezone: zone, Cron: "@every " + every.String(), DST: DST{Repeat: RepeatLast}})
						for _, from := range froms {
							got := mustExpand(t, r, from, from.Add(span), 1000)
							k := max(0, (from.Sub(start)+every-1)/every)
							for j, g := range got {
								if want := start.Add((k + time.Duration(j)) * every); !g.Equal(want) {
									t.Fatalf("@every %s from %s over [%s, …): instance %d is %s, want %s", every,
										start.Format(time.RFC3339), from.Format(time.RFC3339Nano), j, g, want)
								}
							}
						}
					}
				}
			}
		})
	}
}
