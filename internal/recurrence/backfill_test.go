package recurrence

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A backfill evaluates the pattern as if the series had begun earlier: the
// same wall-clock readings in the zone, INTERVAL in phase with start_time,
// COUNT and UNTIL lifted.
func TestCompileBackfillKeepsThePattern(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		spec     Spec
		from, to string
		want     []string
	}{
		{"every other Monday, in phase with start_time",
			Spec{StartTime: utc("2026-12-07T09:00:00Z"), RRule: "FREQ=WEEKLY;INTERVAL=2;BYDAY=MO;COUNT=2"},
			"2026-10-01T00:00:00Z", "2026-11-30T23:00:00Z",
			[]string{"2026-10-12T09:00:00Z", "2026-10-26T09:00:00Z", "2026-11-09T09:00:00Z", "2026-11-23T09:00:00Z"}},
		{"the 31st of each month, months without one skipped",
			Spec{StartTime: utc("2027-01-31T12:00:00Z"), RRule: "FREQ=MONTHLY;UNTIL=20270401T000000Z"},
			"2026-07-01T00:00:00Z", "2026-12-31T23:59:59Z",
			[]string{"2026-07-31T12:00:00Z", "2026-08-31T12:00:00Z", "2026-10-31T12:00:00Z", "2026-12-31T12:00:00Z"}},
		{"09:00 in Paris across the October change",
			Spec{StartTime: utc("2027-01-04T08:00:00Z"), Timezone: "Europe/Paris", RRule: "FREQ=DAILY"},
			"2026-10-24T00:00:00Z", "2026-10-26T23:00:00Z",
			[]string{"2026-10-24T07:00:00Z", "2026-10-25T08:00:00Z", "2026-10-26T08:00:00Z"}},
		{"every 7 hours keeps its phase",
			Spec{StartTime: utc("2026-12-01T03:00:00Z"), Schedule: &Schedule{Frequency: "hourly", Interval: 7}},
			"2026-11-28T00:00:00Z", "2026-11-28T23:59:59Z",
			// 2026-12-01T03:00 minus 70 hours is 2026-11-28T05:00
			[]string{"2026-11-28T05:00:00Z", "2026-11-28T12:00:00Z", "2026-11-28T19:00:00Z"}},
		{"cron loses its lower bound",
			Spec{StartTime: utc("2027-01-01T00:00:00Z"), Cron: "30 6 * * 1"},
			"2026-11-01T00:00:00Z", "2026-11-20T00:00:00Z",
			[]string{"2026-11-02T06:30:00Z", "2026-11-09T06:30:00Z", "2026-11-16T06:30:00Z"}},
		{"@every from its base, whole intervals back",
			Spec{StartTime: utc("2026-12-01T00:10:00Z"), Cron: "@every 25h"},
			"2026-11-27T00:00:00Z", "2026-11-29T23:59:59Z",
			[]string{"2026-11-27T21:10:00Z", "2026-11-28T22:10:00Z", "2026-11-29T23:10:00Z"}},
		{"a range after start_time past COUNT",
			Spec{StartTime: utc("2026-11-01T10:00:00Z"), RRule: "FREQ=DAILY;COUNT=1"},
			"2026-11-03T00:00:00Z", "2026-11-04T23:00:00Z",
			[]string{"2026-11-03T10:00:00Z", "2026-11-04T10:00:00Z"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			from, to := utc(tc.from), utc(tc.to)
			r, err := CompileBackfill(tc.spec, from, Limits{})
			require.NoError(t, err)
			got, err := ExpandInstants(r, from, to.Add(time.Microsecond), 100)
			require.NoError(t, err)
			var at []string
			for _, in := range got {
				at = append(at, in.At.UTC().Format(time.RFC3339))
			}
			require.Equal(t, tc.want, at)
		})
	}
}

func TestCompileBackfillRefusesAOneTimeSpec(t *testing.T) {
	t.Parallel()
	_, err := CompileBackfill(Spec{StartTime: utc("2027-01-01T00:00:00Z")}, utc("2026-01-01T00:00:00Z"), Limits{})
	require.True(t, errors.Is(err, ErrNoPattern), "%v", err)
}

// A backfill's rule is the event's pattern begun earlier: after start_time
// it fires exactly what the event's own rule fires (all of it and more when
// COUNT or UNTIL end the series), and never before from.
func FuzzBackfill(f *testing.F) {
	for _, seed := range []string{"FREQ=DAILY", "FREQ=WEEKLY;INTERVAL=3;BYDAY=TU,FR", "FREQ=MONTHLY;BYMONTHDAY=31;COUNT=4",
		"FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29", "FREQ=HOURLY;INTERVAL=5", "FREQ=MINUTELY;INTERVAL=97;UNTIL=20270401T000000Z",
		"FREQ=DAILY;BYHOUR=2;BYMINUTE=30"} {
		f.Add(seed, "America/New_York", 400)
		f.Add(seed, "Europe/Paris", 3)
	}
	f.Fuzz(func(t *testing.T, text, zone string, daysBack int) {
		spec := Spec{StartTime: fuzzStart, Timezone: zone, RRule: text}
		limits := Limits{MaxIterations: 20000}
		orig, err := Compile(spec, limits)
		if err != nil {
			return
		}
		from := fuzzStart.AddDate(0, 0, -(daysBack % 5000))
		back, err := CompileBackfill(spec, from, limits)
		if errors.Is(err, ErrNoPattern) {
			return // no rule: a one-time event
		}
		if err != nil {
			fuzzCompileError(t, err)
			return
		}
		early, err := ExpandInstants(back, from, from.AddDate(0, 1, 0), 200)
		if err == nil && len(early) > 0 && early[0].At.Before(from) {
			t.Fatalf("instant %s before from %s", early[0].At, from)
		}
		after, end := fuzzStart.Add(time.Microsecond), fuzzStart.AddDate(0, 2, 0)
		want, err1 := ExpandInstants(orig, after, end, 200)
		got, err2 := ExpandInstants(back, after, end, 200)
		if err1 != nil || err2 != nil || len(want) == 200 {
			return // a budget or a cap: nothing to compare
		}
		ended := strings.Contains(strings.ToUpper(text), "COUNT") || strings.Contains(strings.ToUpper(text), "UNTIL")
		if !ended && len(got) != len(want) {
			t.Fatalf("after start_time the backfill fires %d instants, the rule %d", len(got), len(want))
		}
		for i := range want {
			if i >= len(got) || !got[i].At.Equal(want[i].At) {
				t.Fatalf("after start_time the rule fires %v, the backfill %v", want, got)
			}
		}
	})
}
