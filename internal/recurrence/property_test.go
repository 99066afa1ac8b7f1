package recurrence

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// propertyRounds is how many random rules each property test tries.
var propertyRounds = 400

var propertyZones = []string{"UTC", "America/New_York", "Europe/Prague", "Australia/Lord_Howe"}

// randomRRule builds a random but valid-looking rule and how far after
// DTSTART a window may reasonably start for it.
func randomRRule(rng *rand.Rand) (rule string, horizon time.Duration) {
	freqs := []string{"MINUTELY", "HOURLY", "DAILY", "WEEKLY", "MONTHLY", "YEARLY"}
	freq := freqs[rng.IntN(len(freqs))]
	parts := []string{"FREQ=" + freq, fmt.Sprintf("INTERVAL=%d", 1+rng.IntN(4))}
	days := []string{"MO", "TU", "WE", "TH", "FR", "SA", "SU"}
	pick := func(n, lo, hi int) string {
		var vals []string
		for range n {
			vals = append(vals, fmt.Sprint(lo+rng.IntN(hi-lo+1)))
		}
		return strings.Join(vals, ",")
	}
	switch freq {
	case "MINUTELY":
		parts[1] = fmt.Sprintf("INTERVAL=%d", 5+rng.IntN(40))
		horizon = 20 * 24 * time.Hour
	case "HOURLY":
		horizon = 200 * 24 * time.Hour
	default:
		horizon = 6 * 365 * 24 * time.Hour
	}
	if rng.IntN(3) == 0 {
		var ds []string
		for _, d := range days {
			if rng.IntN(2) == 0 {
				prefix := ""
				if (freq == "MONTHLY" || freq == "YEARLY") && rng.IntN(3) == 0 {
					prefix = fmt.Sprint([]int{1, 2, -1, -2, 3}[rng.IntN(5)])
				}
				ds = append(ds, prefix+d)
			}
		}
		if len(ds) > 0 {
			parts = append(parts, "BYDAY="+strings.Join(ds, ","))
		}
	}
	if freq != "WEEKLY" && rng.IntN(4) == 0 {
		vals := pick(1+rng.IntN(3), 1, 31)
		if rng.IntN(3) == 0 {
			vals = "-" + vals
		}
		parts = append(parts, "BYMONTHDAY="+vals)
	}
	if rng.IntN(4) == 0 {
		parts = append(parts, "BYMONTH="+pick(1+rng.IntN(4), 1, 12))
	}
	if freq != "MINUTELY" && rng.IntN(3) == 0 {
		parts = append(parts, "BYHOUR="+pick(1+rng.IntN(3), 0, 23))
	}
	if freq != "MINUTELY" && rng.IntN(3) == 0 {
		parts = append(parts, "BYMINUTE="+pick(1+rng.IntN(3), 0, 59))
	}
	if (freq == "MONTHLY" || freq == "YEARLY") && rng.IntN(4) == 0 {
		parts = append(parts, "BYSETPOS="+fmt.Sprint([]int{1, 2, -1, -2}[rng.IntN(4)]))
	}
	if rng.IntN(4) == 0 {
		parts = append(parts, fmt.Sprintf("COUNT=%d", 1+rng.IntN(300)))
	}
	return "RRULE:" + strings.Join(parts, ";"), horizon
}

func randomStart(rng *rand.Rand, loc *time.Location) time.Time {
	t := time.Date(2027, 1, 1, 0, 0, 0, 0, loc).Add(time.Duration(rng.Int64N(int64(2 * 365 * 24 * time.Hour))))
	t = t.Truncate(time.Minute)
	if rng.IntN(4) == 0 {
		t = t.Add(time.Duration(rng.Int64N(int64(time.Minute)))) // seconds and a fraction
	}
	return t
}

// checkInstants asserts the invariants every Expand result must hold.
func checkInstants(t *testing.T, label string, got []time.Time, from, to, start time.Time, limit int) {
	t.Helper()
	require.LessOrEqual(t, len(got), limit, "%s: more instants than the limit", label)
	for i, g := range got {
		require.Equal(t, time.UTC, g.Location(), "%s: instant not in UTC", label)
		require.True(t, g.Equal(g.Truncate(time.Microsecond)), "%s: %s not microsecond precision", label, g)
		require.False(t, g.Before(from) || !g.Before(to), "%s: %s outside [%s, %s)", label, g, from, to)
		require.False(t, !start.IsZero() && g.Before(start), "%s: %s before start %s", label, g, start)
		if i > 0 {
			require.True(t, got[i-1].Before(g), "%s: not sorted and unique at %d: %s then %s", label, i, got[i-1], g)
		}
	}
}

func TestRRuleProperties(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	checked := 0
	for i := 0; i < propertyRounds; i++ {
		rule, horizon := randomRRule(rng)
		zone := propertyZones[rng.IntN(len(propertyZones))]
		loc := mustLoc(t, zone)
		start := randomStart(rng, loc)
		r, err := Compile(Spec{StartTime: start, Timezone: zone, RRule: rule}, Limits{})
		if err != nil {
			var fe *FieldError
			require.ErrorAs(t, err, &fe, "%s: error is not a FieldError", rule)
			continue
		}
		checked++
		label := fmt.Sprintf("%s from %s in %s", rule, start, zone)
		a := start.Add(time.Duration(rng.Int64N(int64(horizon))))
		if rng.IntN(5) == 0 {
			a = start.Add(-time.Hour)
		}
		c := a.Add(time.Duration(1 + rng.Int64N(int64(horizon/10))))
		b := a.Add(time.Duration(rng.Int64N(int64(c.Sub(a)))))
		const limit = 20000
		whole := mustExpand(t, r, a, c, limit)
		checkInstants(t, label, whole, a, c, start, limit)
		if len(whole) == limit {
			continue
		}
		left := mustExpand(t, r, a, b, limit)
		right := mustExpand(t, r, b, c, limit)
		require.Equal(t, formatAll(whole), formatAll(append(left, right...)),
			"%s: [a,b)+[b,c) differs from [a,c) (a=%s b=%s c=%s)", label, a, b, c)

		// Re-anchoring must not change anything: compare with a plain
		// iteration from DTSTART.
		src := *r.src.(*rruleSource)
		src.noAnchor = true
		plain := &Rule{src: &src, loc: r.loc, start: r.start, recurring: true, limits: r.limits}
		full, err := Expand(plain, a, c, limit)
		require.NoError(t, err)
		require.Equal(t, formatAll(full), formatAll(whole), "%s: re-anchored expansion differs from iteration from DTSTART", label)

		if strings.Contains(rule, "COUNT=") {
			all := mustExpand(t, r, start.Add(-time.Hour), maxInstant, limit)
			var count int
			_, _ = fmt.Sscanf(rule[strings.Index(rule, "COUNT=")+len("COUNT="):], "%d", &count)
			require.LessOrEqual(t, len(all), count, "%s: more instants than COUNT", label)
		}
	}
	require.Greater(t, checked, 200, "too few random rules compiled to exercise the properties")
}

func randomCron(rng *rand.Rand) string {
	field := func(lo, hi int) string {
		switch rng.IntN(5) {
		case 0:
			return "*"
		case 1:
			return fmt.Sprintf("*/%d", 1+rng.IntN(hi-lo+1))
		case 2:
			a := lo + rng.IntN(hi-lo+1)
			b := a + rng.IntN(hi-a+1)
			return fmt.Sprintf("%d-%d", a, b)
		case 3:
			return fmt.Sprintf("%d,%d", lo+rng.IntN(hi-lo+1), lo+rng.IntN(hi-lo+1))
		default:
			return fmt.Sprint(lo + rng.IntN(hi-lo+1))
		}
	}
	return strings.Join([]string{field(0, 59), field(0, 23), field(1, 31), field(1, 12), field(0, 6)}, " ")
}

// cronOracle checks every real minute in [from, to) against the fields,
// independently of the engine; valid only for windows without transitions.
func cronOracle(expr string, loc *time.Location, from, to time.Time) []time.Time {
	fields := strings.Fields(expr)
	sets := make([]uint64, 5)
	for i, f := range fields {
		sets[i], _ = parseCronField(f, cronFields[i])
	}
	domStar, dowStar := fields[2][0] == '*', fields[4][0] == '*'
	var out []time.Time
	for t := from.Truncate(time.Minute); t.Before(to); t = t.Add(time.Minute) {
		if t.Before(from) {
			continue
		}
		l := t.In(loc)
		dom := sets[2]&(1<<uint(l.Day())) != 0
		dow := sets[4]&(1<<uint(l.Weekday())) != 0
		day := dom && dow
		if !domStar && !dowStar {
			day = dom || dow
		}
		if day && sets[0]&(1<<uint(l.Minute())) != 0 && sets[1]&(1<<uint(l.Hour())) != 0 && sets[3]&(1<<uint(l.Month())) != 0 {
			out = append(out, t)
		}
	}
	return out
}

func TestCronProperties(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < propertyRounds/2; i++ {
		expr := randomCron(rng)
		zone := propertyZones[rng.IntN(len(propertyZones))]
		loc := mustLoc(t, zone)
		r, err := Compile(Spec{Timezone: zone, Cron: expr}, Limits{})
		if err != nil {
			continue
		}
		a := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(rng.Int64N(int64(3 * 365 * 24 * time.Hour))))
		c := a.Add(time.Duration(1 + rng.Int64N(int64(20*24*time.Hour))))
		b := a.Add(time.Duration(rng.Int64N(int64(c.Sub(a)))))
		label := fmt.Sprintf("%q in %s over [%s, %s)", expr, zone, a, c)
		const limit = 40000
		whole := mustExpand(t, r, a, c, limit)
		checkInstants(t, label, whole, a, c, time.Time{}, limit)
		if len(whole) == limit {
			continue
		}
		split := append(mustExpand(t, r, a, b, limit), mustExpand(t, r, b, c, limit)...)
		require.Equal(t, formatAll(whole), formatAll(split), "%s: window additivity", label)
		if sameZonePeriod(loc, a, c) {
			require.Equal(t, formatAll(cronOracle(expr, loc, a, c)), formatAll(whole), "%s: differs from minute-by-minute check", label)
		}
	}
}

// sameZonePeriod reports whether no offset change happens in [a, c].
func sameZonePeriod(loc *time.Location, a, c time.Time) bool {
	_, end := a.In(loc).ZoneBounds()
	return end.IsZero() || end.After(c)
}

func TestEveryProperties(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 100; i++ {
		every := time.Duration(1+rng.Int64N(int64(6*time.Hour))) / time.Second * time.Second
		start := time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(rng.Int64N(int64(time.Hour * 24 * 30))))
		r := mustCompile(t, Spec{StartTime: start, Timezone: "America/New_York", Cron: "@every " + every.String()})
		a := start.Add(time.Duration(rng.Int64N(int64(400 * 24 * time.Hour))))
		c := a.Add(time.Duration(rng.Int64N(int64(20 * 24 * time.Hour))))
		whole := mustExpand(t, r, a, c, 100000)
		checkInstants(t, "@every "+every.String(), whole, a, c, start, 100000)
		for _, g := range whole {
			require.Zero(t, g.Sub(r.Start())%every, "@every %s: %s is not start + k·d", every, g)
		}
		if len(whole) > 0 {
			require.Less(t, whole[0].Sub(a), every, "@every %s: first instant skipped one", every)
		}
	}
}

func TestBudgetBoundsExpansion(t *testing.T) {
	t.Parallel()
	start := utc("2027-01-01T00:00:00Z")
	r, err := Compile(Spec{StartTime: start, RRule: "FREQ=SECONDLY"}, Limits{MaxIterations: 1000})
	require.NoError(t, err)
	got, err := Expand(r, start, start.Add(time.Hour), 1<<20)
	require.ErrorIs(t, err, ErrIterationBudget)
	require.Len(t, got, 1000, "the instants found before the budget ran out are returned")
	require.True(t, slices.IsSortedFunc(got, func(a, b time.Time) int { return a.Compare(b) }))
}
