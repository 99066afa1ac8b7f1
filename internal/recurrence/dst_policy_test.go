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

// The transitions used below (from the embedded zone data), besides those
// listed in dst_test.go:
//   America/Santiago  fall 2027-04-04 00:00 -03→04-03 23:00 -04 (03:00Z): 23:00–23:59 on 3 April occur twice
//                     spring 2027-09-05 00:00 -04→01:00 -03 (04:00Z): 00:00–00:59 on 5 September do not exist

// policyCase expands one rule under one DST policy. want lists ExpandInstants'
// result in UTC, a skipped reading suffixed " skipped"; Expand must return
// the others.
type policyCase struct {
	name     string
	zone     string
	start    string // local wall clock, "2006-01-02 15:04", or RFC 3339; empty for none
	rrule    string
	schedule *Schedule
	cron     string
	dst      DST
	from, to string // UTC
	want     []string
}

var (
	shift     = DST{Gap: GapShift}
	skip      = DST{Gap: GapSkip}
	first     = DST{Repeat: RepeatFirst}
	last      = DST{Repeat: RepeatLast}
	both      = DST{Repeat: RepeatBoth}
	shiftLast = DST{Gap: GapShift, Repeat: RepeatLast}
	skipBoth  = DST{Gap: GapSkip, Repeat: RepeatBoth}
)

func formatInstants(in []Instant) []string {
	out := make([]string, len(in))
	for i, x := range in {
		out[i] = x.At.UTC().Format(time.RFC3339Nano)
		if x.Skipped {
			out[i] += " skipped"
		}
	}
	return out
}

func firing(want []string) []string {
	out := []string{}
	for _, w := range want {
		if !strings.HasSuffix(w, " skipped") {
			out = append(out, w)
		}
	}
	return out
}

func runPolicyCases(t *testing.T, tests []policyCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			loc := mustLoc(t, tt.zone)
			start, err := time.Parse(time.RFC3339, tt.start)
			if err != nil && tt.start != "" {
				w, err := time.Parse("2006-01-02 15:04", tt.start)
				require.NoError(t, err)
				start = time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), 0, 0, loc)
			}
			r := mustCompile(t, Spec{StartTime: start, Timezone: tt.zone, RRule: tt.rrule, Schedule: tt.schedule, Cron: tt.cron, DST: tt.dst})
			from, to := utc(tt.from), utc(tt.to)
			all, err := ExpandInstants(r, from, to, 1000)
			require.NoError(t, err)
			require.Equal(t, tt.want, formatInstants(all), "ExpandInstants: got, want")
			require.Equal(t, firing(tt.want), formatAll(mustExpand(t, r, from, to, 1000)), "Expand: got, want")

			// Any split of the window gives the same planned instants.
			for _, in := range all {
				for _, p := range []time.Time{in.At, in.At.Add(time.Minute)} {
					if p.After(to) {
						continue
					}
					left, err := ExpandInstants(r, from, p, 1000)
					require.NoError(t, err)
					right, err := ExpandInstants(r, p, to, 1000)
					require.NoError(t, err)
					require.Equal(t, tt.want, formatInstants(append(left, right...)), "split at %s", p.Format(time.RFC3339))
				}
			}
		})
	}
}

func TestDSTPolicyRRule(t *testing.T) {
	t.Parallel()
	const ny = "America/New_York"
	runPolicyCases(t, []policyCase{
		// New York, spring forward: 14 March 02:30 does not exist.
		{name: "NY daily 02:30 default skips the 14th, uncounted, reported skipped at 03:30 EDT",
			zone: ny, start: "2027-03-12 02:30", rrule: "RRULE:FREQ=DAILY;COUNT=4",
			from: "2027-03-01T00:00:00Z", to: "2027-04-01T00:00:00Z",
			want: []string{"2027-03-12T07:30:00Z", "2027-03-13T07:30:00Z", "2027-03-14T07:30:00Z skipped", "2027-03-15T06:30:00Z", "2027-03-16T06:30:00Z"}},
		{name: "NY daily 02:30 skip is the default",
			zone: ny, start: "2027-03-12 02:30", rrule: "RRULE:FREQ=DAILY;COUNT=4", dst: skipBoth,
			from: "2027-03-01T00:00:00Z", to: "2027-04-01T00:00:00Z",
			want: []string{"2027-03-12T07:30:00Z", "2027-03-13T07:30:00Z", "2027-03-14T07:30:00Z skipped", "2027-03-15T06:30:00Z", "2027-03-16T06:30:00Z"}},
		{name: "NY daily 02:30 shift fires at 03:30 EDT and counts",
			zone: ny, start: "2027-03-12 02:30", rrule: "RRULE:FREQ=DAILY;COUNT=4", dst: shift,
			from: "2027-03-01T00:00:00Z", to: "2027-04-01T00:00:00Z",
			want: []string{"2027-03-12T07:30:00Z", "2027-03-13T07:30:00Z", "2027-03-14T07:30:00Z", "2027-03-15T06:30:00Z"}},
		{name: "NY daily 02:30 repeat policies do not touch a gap",
			zone: ny, start: "2027-03-12 02:30", rrule: "RRULE:FREQ=DAILY;COUNT=4", dst: last,
			from: "2027-03-01T00:00:00Z", to: "2027-04-01T00:00:00Z",
			want: []string{"2027-03-12T07:30:00Z", "2027-03-13T07:30:00Z", "2027-03-14T07:30:00Z skipped", "2027-03-15T06:30:00Z", "2027-03-16T06:30:00Z"}},
		// Every 25 minutes: 02:05, 02:30 and 02:55 do not exist; shifted, they
		// interleave with 03:20 and 03:45 EDT.
		{name: "NY every 25 minutes default: three skipped readings, COUNT=9 reaches 04:35",
			zone: ny, start: "2027-03-14 00:00", rrule: "FREQ=MINUTELY;INTERVAL=25;COUNT=9",
			from: "2027-03-14T00:00:00Z", to: "2027-03-15T00:00:00Z",
			want: []string{"2027-03-14T05:00:00Z", "2027-03-14T05:25:00Z", "2027-03-14T05:50:00Z", "2027-03-14T06:15:00Z", "2027-03-14T06:40:00Z",
				"2027-03-14T07:05:00Z skipped", "2027-03-14T07:20:00Z", "2027-03-14T07:30:00Z skipped", "2027-03-14T07:45:00Z",
				"2027-03-14T07:55:00Z skipped", "2027-03-14T08:10:00Z", "2027-03-14T08:35:00Z"}},
		{name: "NY every 25 minutes shift: the shifted readings count, sorted among the rest",
			zone: ny, start: "2027-03-14 00:00", rrule: "FREQ=MINUTELY;INTERVAL=25;COUNT=9", dst: shift,
			from: "2027-03-14T00:00:00Z", to: "2027-03-15T00:00:00Z",
			want: []string{"2027-03-14T05:00:00Z", "2027-03-14T05:25:00Z", "2027-03-14T05:50:00Z", "2027-03-14T06:15:00Z", "2027-03-14T06:40:00Z",
				"2027-03-14T07:05:00Z", "2027-03-14T07:20:00Z", "2027-03-14T07:30:00Z", "2027-03-14T07:55:00Z"}},
		{name: "NY every 30 minutes skip: a skipped reading landing on a firing instant is not reported",
			zone: ny, start: "2027-03-14 00:00", rrule: "FREQ=MINUTELY;INTERVAL=30", dst: skip,
			from: "2027-03-14T06:00:00Z", to: "2027-03-14T08:30:00Z",
			want: []string{"2027-03-14T06:00:00Z", "2027-03-14T06:30:00Z", "2027-03-14T07:00:00Z", "2027-03-14T07:30:00Z", "2027-03-14T08:00:00Z"}},
		{name: "NY every 30 minutes shift: 02:00 and 02:30 are the instants of 03:00 and 03:30 EDT, counted once",
			zone: ny, start: "2027-03-14 00:00", rrule: "FREQ=MINUTELY;INTERVAL=30;COUNT=7", dst: shift,
			from: "2027-03-14T00:00:00Z", to: "2027-03-15T00:00:00Z",
			want: []string{"2027-03-14T05:00:00Z", "2027-03-14T05:30:00Z", "2027-03-14T06:00:00Z", "2027-03-14T06:30:00Z",
				"2027-03-14T07:00:00Z", "2027-03-14T07:30:00Z", "2027-03-14T08:00:00Z"}},
		{name: "NY every 25 minutes shift with UNTIL: a shifted reading after UNTIL does not fire",
			zone: ny, start: "2027-03-14 00:00", rrule: "FREQ=MINUTELY;INTERVAL=25;UNTIL=20270314T072500Z", dst: shift,
			from: "2027-03-14T00:00:00Z", to: "2027-03-15T00:00:00Z",
			want: []string{"2027-03-14T05:00:00Z", "2027-03-14T05:25:00Z", "2027-03-14T05:50:00Z", "2027-03-14T06:15:00Z", "2027-03-14T06:40:00Z",
				"2027-03-14T07:05:00Z", "2027-03-14T07:20:00Z"}},
		{name: "NY every 25 minutes skip with UNTIL: skipped readings after UNTIL are not reported",
			zone: ny, start: "2027-03-14 00:00", rrule: "FREQ=MINUTELY;INTERVAL=25;UNTIL=20270314T072500Z",
			from: "2027-03-14T00:00:00Z", to: "2027-03-15T00:00:00Z",
			want: []string{"2027-03-14T05:00:00Z", "2027-03-14T05:25:00Z", "2027-03-14T05:50:00Z", "2027-03-14T06:15:00Z", "2027-03-14T06:40:00Z",
				"2027-03-14T07:05:00Z skipped", "2027-03-14T07:20:00Z"}},
		{name: "NY EXDATE removes a shifted reading, which still counts",
			zone: ny, start: "2027-03-13 02:30", rrule: "RRULE:FREQ=DAILY;COUNT=3\nEXDATE:20270314T073000Z", dst: shift,
			from: "2027-03-01T00:00:00Z", to: "2027-04-01T00:00:00Z",
			want: []string{"2027-03-13T07:30:00Z", "2027-03-15T06:30:00Z"}},
		{name: "NY EXDATE removes a skipped reading from the report",
			zone: ny, start: "2027-03-13 02:30", rrule: "RRULE:FREQ=DAILY;COUNT=3\nEXDATE:20270314T073000Z",
			from: "2027-03-01T00:00:00Z", to: "2027-04-01T00:00:00Z",
			want: []string{"2027-03-13T07:30:00Z", "2027-03-15T06:30:00Z", "2027-03-16T06:30:00Z"}},

		// New York, fall back: 7 November 01:30 occurs at 05:30Z (EDT) and 06:30Z (EST).
		{name: "NY daily 01:30 default fires at the first pass",
			zone: ny, start: "2027-11-06 01:30", rrule: "RRULE:FREQ=DAILY;COUNT=3",
			from: "2027-11-01T00:00:00Z", to: "2027-12-01T00:00:00Z",
			want: []string{"2027-11-06T05:30:00Z", "2027-11-07T05:30:00Z", "2027-11-08T06:30:00Z"}},
		{name: "NY daily 01:30 first",
			zone: ny, start: "2027-11-06 01:30", rrule: "RRULE:FREQ=DAILY;COUNT=3", dst: first,
			from: "2027-11-01T00:00:00Z", to: "2027-12-01T00:00:00Z",
			want: []string{"2027-11-06T05:30:00Z", "2027-11-07T05:30:00Z", "2027-11-08T06:30:00Z"}},
		{name: "NY daily 01:30 last fires at the second pass",
			zone: ny, start: "2027-11-06 01:30", rrule: "RRULE:FREQ=DAILY;COUNT=3", dst: shiftLast,
			from: "2027-11-01T00:00:00Z", to: "2027-12-01T00:00:00Z",
			want: []string{"2027-11-06T05:30:00Z", "2027-11-07T06:30:00Z", "2027-11-08T06:30:00Z"}},
		{name: "NY daily 01:30 both fires at both passes, COUNT counts one",
			zone: ny, start: "2027-11-06 01:30", rrule: "RRULE:FREQ=DAILY;COUNT=3", dst: both,
			from: "2027-11-01T00:00:00Z", to: "2027-12-01T00:00:00Z",
			want: []string{"2027-11-06T05:30:00Z", "2027-11-07T05:30:00Z", "2027-11-07T06:30:00Z", "2027-11-08T06:30:00Z"}},
		{name: "NY daily 01:30 both with an EXDATE on the second pass",
			zone: ny, start: "2027-11-06 01:30", rrule: "RRULE:FREQ=DAILY;COUNT=3\nEXDATE:20271107T063000Z", dst: both,
			from: "2027-11-01T00:00:00Z", to: "2027-12-01T00:00:00Z",
			want: []string{"2027-11-06T05:30:00Z", "2027-11-07T05:30:00Z", "2027-11-08T06:30:00Z"}},
		{name: "NY hourly first: one 01:00",
			zone: ny, start: "2027-11-06 12:00", rrule: "RRULE:FREQ=HOURLY", dst: first,
			from: "2027-11-07T03:30:00Z", to: "2027-11-07T08:30:00Z",
			want: []string{"2027-11-07T04:00:00Z", "2027-11-07T05:00:00Z", "2027-11-07T07:00:00Z", "2027-11-07T08:00:00Z"}},
		{name: "NY hourly last: 01:00 EST",
			zone: ny, start: "2027-11-06 12:00", rrule: "RRULE:FREQ=HOURLY", dst: last,
			from: "2027-11-07T03:30:00Z", to: "2027-11-07T08:30:00Z",
			want: []string{"2027-11-07T04:00:00Z", "2027-11-07T06:00:00Z", "2027-11-07T07:00:00Z", "2027-11-07T08:00:00Z"}},
		{name: "NY hourly both: every elapsed hour",
			zone: ny, start: "2027-11-06 12:00", rrule: "RRULE:FREQ=HOURLY", dst: both,
			from: "2027-11-07T03:30:00Z", to: "2027-11-07T08:30:00Z",
			want: []string{"2027-11-07T04:00:00Z", "2027-11-07T05:00:00Z", "2027-11-07T06:00:00Z", "2027-11-07T07:00:00Z", "2027-11-07T08:00:00Z"}},
		{name: "NY hourly both, window opening after the first pass of 01:00",
			zone: ny, start: "2027-11-06 12:00", rrule: "RRULE:FREQ=HOURLY", dst: both,
			from: "2027-11-07T05:30:00Z", to: "2027-11-07T08:30:00Z",
			want: []string{"2027-11-07T06:00:00Z", "2027-11-07T07:00:00Z", "2027-11-07T08:00:00Z"}},
		{name: "NY hourly last, window opening after the first pass of 01:00",
			zone: ny, start: "2027-11-06 12:00", rrule: "RRULE:FREQ=HOURLY", dst: last,
			from: "2027-11-07T05:30:00Z", to: "2027-11-07T08:30:00Z",
			want: []string{"2027-11-07T06:00:00Z", "2027-11-07T07:00:00Z", "2027-11-07T08:00:00Z"}},

		// Lord Howe moves 30 minutes: 3 October 02:00–02:29 do not exist, 4 April 01:30–01:59 occur twice.
		{name: "Lord Howe daily 02:10 default: skipped, reported at 02:40 +11",
			zone: "Australia/Lord_Howe", start: "2027-10-01 02:10", rrule: "RRULE:FREQ=DAILY;COUNT=4",
			from: "2027-09-01T00:00:00Z", to: "2027-11-01T00:00:00Z",
			want: []string{"2027-09-30T15:40:00Z", "2027-10-01T15:40:00Z", "2027-10-02T15:40:00Z skipped", "2027-10-03T15:10:00Z", "2027-10-04T15:10:00Z"}},
		{name: "Lord Howe daily 02:10 shift fires at 02:40 +11",
			zone: "Australia/Lord_Howe", start: "2027-10-01 02:10", rrule: "RRULE:FREQ=DAILY;COUNT=4", dst: shift,
			from: "2027-09-01T00:00:00Z", to: "2027-11-01T00:00:00Z",
			want: []string{"2027-09-30T15:40:00Z", "2027-10-01T15:40:00Z", "2027-10-02T15:40:00Z", "2027-10-03T15:10:00Z"}},
		{name: "Lord Howe daily 01:45 first",
			zone: "Australia/Lord_Howe", start: "2027-04-03 01:45", rrule: "RRULE:FREQ=DAILY;COUNT=3",
			from: "2027-04-01T00:00:00Z", to: "2027-05-01T00:00:00Z",
			want: []string{"2027-04-02T14:45:00Z", "2027-04-03T14:45:00Z", "2027-04-04T15:15:00Z"}},
		{name: "Lord Howe daily 01:45 last fires at +10:30",
			zone: "Australia/Lord_Howe", start: "2027-04-03 01:45", rrule: "RRULE:FREQ=DAILY;COUNT=3", dst: last,
			from: "2027-04-01T00:00:00Z", to: "2027-05-01T00:00:00Z",
			want: []string{"2027-04-02T14:45:00Z", "2027-04-03T15:15:00Z", "2027-04-04T15:15:00Z"}},
		{name: "Lord Howe daily 01:45 both, half an hour apart",
			zone: "Australia/Lord_Howe", start: "2027-04-03 01:45", rrule: "RRULE:FREQ=DAILY;COUNT=3", dst: both,
			from: "2027-04-01T00:00:00Z", to: "2027-05-01T00:00:00Z",
			want: []string{"2027-04-02T14:45:00Z", "2027-04-03T14:45:00Z", "2027-04-03T15:15:00Z", "2027-04-04T15:15:00Z"}},

		// Santiago: the gap is at midnight (5 September 00:00–00:59), the repeat
		// late in the evening (3 April 23:00–23:59).
		{name: "Santiago daily 00:30 default: no 00:30 on 5 September, reported at 01:30 -03",
			zone: "America/Santiago", start: "2027-09-03 00:30", rrule: "RRULE:FREQ=DAILY;COUNT=4",
			from: "2027-09-01T00:00:00Z", to: "2027-10-01T00:00:00Z",
			want: []string{"2027-09-03T04:30:00Z", "2027-09-04T04:30:00Z", "2027-09-05T04:30:00Z skipped", "2027-09-06T03:30:00Z", "2027-09-07T03:30:00Z"}},
		{name: "Santiago daily 00:30 shift fires at 01:30 -03",
			zone: "America/Santiago", start: "2027-09-03 00:30", rrule: "RRULE:FREQ=DAILY;COUNT=4", dst: shift,
			from: "2027-09-01T00:00:00Z", to: "2027-10-01T00:00:00Z",
			want: []string{"2027-09-03T04:30:00Z", "2027-09-04T04:30:00Z", "2027-09-05T04:30:00Z", "2027-09-06T03:30:00Z"}},
		{name: "Santiago daily 23:30 first",
			zone: "America/Santiago", start: "2027-04-02 23:30", rrule: "RRULE:FREQ=DAILY;COUNT=3",
			from: "2027-04-01T00:00:00Z", to: "2027-05-01T00:00:00Z",
			want: []string{"2027-04-03T02:30:00Z", "2027-04-04T02:30:00Z", "2027-04-05T03:30:00Z"}},
		{name: "Santiago daily 23:30 last",
			zone: "America/Santiago", start: "2027-04-02 23:30", rrule: "RRULE:FREQ=DAILY;COUNT=3", dst: last,
			from: "2027-04-01T00:00:00Z", to: "2027-05-01T00:00:00Z",
			want: []string{"2027-04-03T02:30:00Z", "2027-04-04T03:30:00Z", "2027-04-05T03:30:00Z"}},
		{name: "Santiago daily 23:30 both",
			zone: "America/Santiago", start: "2027-04-02 23:30", rrule: "RRULE:FREQ=DAILY;COUNT=3", dst: both,
			from: "2027-04-01T00:00:00Z", to: "2027-05-01T00:00:00Z",
			want: []string{"2027-04-03T02:30:00Z", "2027-04-04T02:30:00Z", "2027-04-04T03:30:00Z", "2027-04-05T03:30:00Z"}},
	})
}

func TestDSTPolicySchedule(t *testing.T) {
	t.Parallel()
	count := func(n int) *int { return &n }
	daily0230 := &Schedule{Frequency: "daily", ByHour: []int{2}, ByMinute: []int{30}, Count: count(3)}
	midnight := &Schedule{Frequency: "daily", ByHour: []int{0}, ByMinute: []int{0}}
	hourly := &Schedule{Frequency: "hourly", Count: count(4)}
	runPolicyCases(t, []policyCase{
		{name: "NY 02:30 default skips the 14th, uncounted",
			zone: "America/New_York", start: "2027-03-13 02:30", schedule: daily0230,
			from: "2027-03-01T00:00:00Z", to: "2027-04-01T00:00:00Z",
			want: []string{"2027-03-13T07:30:00Z", "2027-03-14T07:30:00Z skipped", "2027-03-15T06:30:00Z", "2027-03-16T06:30:00Z"}},
		{name: "NY 02:30 skip",
			zone: "America/New_York", start: "2027-03-13 02:30", schedule: daily0230, dst: skip,
			from: "2027-03-01T00:00:00Z", to: "2027-04-01T00:00:00Z",
			want: []string{"2027-03-13T07:30:00Z", "2027-03-14T07:30:00Z skipped", "2027-03-15T06:30:00Z", "2027-03-16T06:30:00Z"}},
		{name: "NY 02:30 shift fires at 03:30 EDT and counts",
			zone: "America/New_York", start: "2027-03-13 02:30", schedule: daily0230, dst: shift,
			from: "2027-03-01T00:00:00Z", to: "2027-04-01T00:00:00Z",
			want: []string{"2027-03-13T07:30:00Z", "2027-03-14T07:30:00Z", "2027-03-15T06:30:00Z"}},
		{name: "NY hourly first",
			zone: "America/New_York", start: "2027-11-07 00:00", schedule: hourly, dst: first,
			from: "2027-11-07T00:00:00Z", to: "2027-11-08T00:00:00Z",
			want: []string{"2027-11-07T04:00:00Z", "2027-11-07T05:00:00Z", "2027-11-07T07:00:00Z", "2027-11-07T08:00:00Z"}},
		{name: "NY hourly last",
			zone: "America/New_York", start: "2027-11-07 00:00", schedule: hourly, dst: last,
			from: "2027-11-07T00:00:00Z", to: "2027-11-08T00:00:00Z",
			want: []string{"2027-11-07T04:00:00Z", "2027-11-07T06:00:00Z", "2027-11-07T07:00:00Z", "2027-11-07T08:00:00Z"}},
		{name: "NY hourly both: count 4 readings, five instants",
			zone: "America/New_York", start: "2027-11-07 00:00", schedule: hourly, dst: both,
			from: "2027-11-07T00:00:00Z", to: "2027-11-08T00:00:00Z",
			want: []string{"2027-11-07T04:00:00Z", "2027-11-07T05:00:00Z", "2027-11-07T06:00:00Z", "2027-11-07T07:00:00Z", "2027-11-07T08:00:00Z"}},
		{name: "Santiago midnight default: 5 September has no 00:00",
			zone: "America/Santiago", start: "2027-09-04 00:00", schedule: midnight,
			from: "2027-09-01T00:00:00Z", to: "2027-09-07T00:00:00Z",
			want: []string{"2027-09-04T04:00:00Z", "2027-09-05T04:00:00Z skipped", "2027-09-06T03:00:00Z"}},
		{name: "Santiago midnight shift fires at 01:00 -03",
			zone: "America/Santiago", start: "2027-09-04 00:00", schedule: midnight, dst: shift,
			from: "2027-09-01T00:00:00Z", to: "2027-09-07T00:00:00Z",
			want: []string{"2027-09-04T04:00:00Z", "2027-09-05T04:00:00Z", "2027-09-06T03:00:00Z"}},
	})
}

func TestDSTPolicyCron(t *testing.T) {
	t.Parallel()
	const ny = "America/New_York"
	runPolicyCases(t, []policyCase{
		{name: "NY 02:30 default fires at the transition, 03:00 EDT",
			zone: ny, cron: "30 2 * * *",
			from: "2027-03-13T00:00:00Z", to: "2027-03-16T00:00:00Z",
			want: []string{"2027-03-13T07:30:00Z", "2027-03-14T07:00:00Z", "2027-03-15T06:30:00Z"}},
		{name: "NY 02:30 shift fires at 03:30 EDT",
			zone: ny, cron: "30 2 * * *", dst: shift,
			from: "2027-03-13T00:00:00Z", to: "2027-03-16T00:00:00Z",
			want: []string{"2027-03-13T07:30:00Z", "2027-03-14T07:30:00Z", "2027-03-15T06:30:00Z"}},
		{name: "NY 02:30 skip does not fire, reported at 03:30 EDT",
			zone: ny, cron: "30 2 * * *", dst: skip,
			from: "2027-03-13T00:00:00Z", to: "2027-03-16T00:00:00Z",
			want: []string{"2027-03-13T07:30:00Z", "2027-03-14T07:30:00Z skipped", "2027-03-15T06:30:00Z"}},
		{name: "NY 02:10 and 02:50 default collapse onto one instant",
			zone: ny, cron: "10,50 2 * * *",
			from: "2027-03-14T00:00:00Z", to: "2027-03-15T00:00:00Z",
			want: []string{"2027-03-14T07:00:00Z"}},
		{name: "NY 02:10 and 02:50 shift stay distinct",
			zone: ny, cron: "10,50 2 * * *", dst: shift,
			from: "2027-03-14T00:00:00Z", to: "2027-03-15T00:00:00Z",
			want: []string{"2027-03-14T07:10:00Z", "2027-03-14T07:50:00Z"}},
		{name: "NY 02:10 and 02:50 skip",
			zone: ny, cron: "10,50 2 * * *", dst: skip,
			from: "2027-03-14T00:00:00Z", to: "2027-03-15T00:00:00Z",
			want: []string{"2027-03-14T07:10:00Z skipped", "2027-03-14T07:50:00Z skipped"}},
		{name: "NY 02:50 and 03:50 default: two instants",
			zone: ny, cron: "50 2,3 * * *",
			from: "2027-03-14T00:00:00Z", to: "2027-03-15T00:00:00Z",
			want: []string{"2027-03-14T07:00:00Z", "2027-03-14T07:50:00Z"}},
		{name: "NY 02:50 and 03:50 shift: 02:50 is 03:50 EDT, which fires once",
			zone: ny, cron: "50 2,3 * * *", dst: shift,
			from: "2027-03-14T00:00:00Z", to: "2027-03-15T00:00:00Z",
			want: []string{"2027-03-14T07:50:00Z"}},
		{name: "NY 02:50 and 03:50 skip: the skipped reading's instant fires for 03:50",
			zone: ny, cron: "50 2,3 * * *", dst: skip,
			from: "2027-03-14T00:00:00Z", to: "2027-03-15T00:00:00Z",
			want: []string{"2027-03-14T07:50:00Z"}},
		{name: "NY every 30 minutes shift: no duplicates",
			zone: ny, cron: "*/30 * * * *", dst: shift,
			from: "2027-03-14T06:00:00Z", to: "2027-03-14T08:00:00Z",
			want: []string{"2027-03-14T06:00:00Z", "2027-03-14T06:30:00Z", "2027-03-14T07:00:00Z", "2027-03-14T07:30:00Z"}},
		{name: "NY 01:30 default fires at the first pass",
			zone: ny, cron: "30 1 * * *",
			from: "2027-11-06T00:00:00Z", to: "2027-11-09T00:00:00Z",
			want: []string{"2027-11-06T05:30:00Z", "2027-11-07T05:30:00Z", "2027-11-08T06:30:00Z"}},
		{name: "NY 01:30 last",
			zone: ny, cron: "30 1 * * *", dst: last,
			from: "2027-11-06T00:00:00Z", to: "2027-11-09T00:00:00Z",
			want: []string{"2027-11-06T05:30:00Z", "2027-11-07T06:30:00Z", "2027-11-08T06:30:00Z"}},
		{name: "NY 01:30 both",
			zone: ny, cron: "30 1 * * *", dst: both,
			from: "2027-11-06T00:00:00Z", to: "2027-11-09T00:00:00Z",
			want: []string{"2027-11-06T05:30:00Z", "2027-11-07T05:30:00Z", "2027-11-07T06:30:00Z", "2027-11-08T06:30:00Z"}},
		{name: "NY half-hourly first",
			zone: ny, cron: "0,30 * * * *", dst: first,
			from: "2027-11-07T04:30:00Z", to: "2027-11-07T07:30:00Z",
			want: []string{"2027-11-07T04:30:00Z", "2027-11-07T05:00:00Z", "2027-11-07T05:30:00Z", "2027-11-07T07:00:00Z"}},
		{name: "NY half-hourly last",
			zone: ny, cron: "0,30 * * * *", dst: last,
			from: "2027-11-07T04:30:00Z", to: "2027-11-07T07:30:00Z",
			want: []string{"2027-11-07T04:30:00Z", "2027-11-07T06:00:00Z", "2027-11-07T06:30:00Z", "2027-11-07T07:00:00Z"}},
		{name: "NY half-hourly both: the second pass interleaves in order",
			zone: ny, cron: "0,30 * * * *", dst: both,
			from: "2027-11-07T04:30:00Z", to: "2027-11-07T07:30:00Z",
			want: []string{"2027-11-07T04:30:00Z", "2027-11-07T05:00:00Z", "2027-11-07T05:30:00Z", "2027-11-07T06:00:00Z", "2027-11-07T06:30:00Z", "2027-11-07T07:00:00Z"}},
		{name: "NY half-hourly both, window opening inside the first pass",
			zone: ny, cron: "0,30 * * * *", dst: both,
			from: "2027-11-07T05:45:00Z", to: "2027-11-07T07:30:00Z",
			want: []string{"2027-11-07T06:00:00Z", "2027-11-07T06:30:00Z", "2027-11-07T07:00:00Z"}},
		{name: "start_time (01:45 EDT) bounds held instants too",
			zone: ny, start: "2027-11-07T05:45:00Z", cron: "0,30 * * * *", dst: both,
			from: "2027-11-07T00:00:00Z", to: "2027-11-07T07:30:00Z",
			want: []string{"2027-11-07T06:00:00Z", "2027-11-07T06:30:00Z", "2027-11-07T07:00:00Z"}},

		{name: "Lord Howe 02:10 default fires at 02:30 +11",
			zone: "Australia/Lord_Howe", cron: "10 2 * * *",
			from: "2027-10-01T00:00:00Z", to: "2027-10-04T00:00:00Z",
			want: []string{"2027-10-01T15:40:00Z", "2027-10-02T15:30:00Z", "2027-10-03T15:10:00Z"}},
		{name: "Lord Howe 02:10 shift fires at 02:40 +11",
			zone: "Australia/Lord_Howe", cron: "10 2 * * *", dst: shift,
			from: "2027-10-01T00:00:00Z", to: "2027-10-04T00:00:00Z",
			want: []string{"2027-10-01T15:40:00Z", "2027-10-02T15:40:00Z", "2027-10-03T15:10:00Z"}},
		{name: "Lord Howe 02:10 skip",
			zone: "Australia/Lord_Howe", cron: "10 2 * * *", dst: skip,
			from: "2027-10-01T00:00:00Z", to: "2027-10-04T00:00:00Z",
			want: []string{"2027-10-01T15:40:00Z", "2027-10-02T15:40:00Z skipped", "2027-10-03T15:10:00Z"}},
		{name: "Lord Howe 01:45 first",
			zone: "Australia/Lord_Howe", cron: "45 1 * * *", dst: first,
			from: "2027-04-02T00:00:00Z", to: "2027-04-05T00:00:00Z",
			want: []string{"2027-04-02T14:45:00Z", "2027-04-03T14:45:00Z", "2027-04-04T15:15:00Z"}},
		{name: "Lord Howe 01:45 last",
			zone: "Australia/Lord_Howe", cron: "45 1 * * *", dst: last,
			from: "2027-04-02T00:00:00Z", to: "2027-04-05T00:00:00Z",
			want: []string{"2027-04-02T14:45:00Z", "2027-04-03T15:15:00Z", "2027-04-04T15:15:00Z"}},
		{name: "Lord Howe 01:45 both",
			zone: "Australia/Lord_Howe", cron: "45 1 * * *", dst: both,
			from: "2027-04-02T00:00:00Z", to: "2027-04-05T00:00:00Z",
			want: []string{"2027-04-02T14:45:00Z", "2027-04-03T14:45:00Z", "2027-04-03T15:15:00Z", "2027-04-04T15:15:00Z"}},

		{name: "Santiago 00:30 default fires at 01:00 -03",
			zone: "America/Santiago", cron: "30 0 * * *",
			from: "2027-09-04T00:00:00Z", to: "2027-09-07T00:00:00Z",
			want: []string{"2027-09-04T04:30:00Z", "2027-09-05T04:00:00Z", "2027-09-06T03:30:00Z"}},
		{name: "Santiago 00:30 shift fires at 01:30 -03",
			zone: "America/Santiago", cron: "30 0 * * *", dst: shift,
			from: "2027-09-04T00:00:00Z", to: "2027-09-07T00:00:00Z",
			want: []string{"2027-09-04T04:30:00Z", "2027-09-05T04:30:00Z", "2027-09-06T03:30:00Z"}},
		{name: "Santiago 00:30 skip",
			zone: "America/Santiago", cron: "30 0 * * *", dst: skip,
			from: "2027-09-04T00:00:00Z", to: "2027-09-07T00:00:00Z",
			want: []string{"2027-09-04T04:30:00Z", "2027-09-05T04:30:00Z skipped", "2027-09-06T03:30:00Z"}},
		{name: "Santiago @daily skip: no midnight on 5 September",
			zone: "America/Santiago", cron: "@daily", dst: skip,
			from: "2027-09-04T00:00:00Z", to: "2027-09-07T00:00:00Z",
			want: []string{"2027-09-04T04:00:00Z", "2027-09-05T04:00:00Z skipped", "2027-09-06T03:00:00Z"}},
		{name: "Santiago @daily default and shift agree: 01:00 -03",
			zone: "America/Santiago", cron: "@daily", dst: shift,
			from: "2027-09-04T00:00:00Z", to: "2027-09-07T00:00:00Z",
			want: []string{"2027-09-04T04:00:00Z", "2027-09-05T04:00:00Z", "2027-09-06T03:00:00Z"}},
		{name: "Santiago 23:30 first",
			zone: "America/Santiago", cron: "30 23 * * *",
			from: "2027-04-02T12:00:00Z", to: "2027-04-06T00:00:00Z",
			want: []string{"2027-04-03T02:30:00Z", "2027-04-04T02:30:00Z", "2027-04-05T03:30:00Z"}},
		{name: "Santiago 23:30 last",
			zone: "America/Santiago", cron: "30 23 * * *", dst: last,
			from: "2027-04-02T12:00:00Z", to: "2027-04-06T00:00:00Z",
			want: []string{"2027-04-03T02:30:00Z", "2027-04-04T03:30:00Z", "2027-04-05T03:30:00Z"}},
		{name: "Santiago 23:30 both",
			zone: "America/Santiago", cron: "30 23 * * *", dst: both,
			from: "2027-04-02T12:00:00Z", to: "2027-04-06T00:00:00Z",
			want: []string{"2027-04-03T02:30:00Z", "2027-04-04T02:30:00Z", "2027-04-04T03:30:00Z", "2027-04-05T03:30:00Z"}},
	})
}

// @every is elapsed time and a one-time event is one instant: every policy
// is accepted and changes nothing.
func TestDSTPolicyIgnoredByEveryAndOnce(t *testing.T) {
	t.Parallel()
	var cases []policyCase
	for _, dst := range []DST{{}, shift, skip, last, both, shiftLast, skipBoth} {
		cases = append(cases,
			policyCase{name: "@every 1h across spring forward " + dst.Gap + "/" + dst.Repeat,
				zone: "America/New_York", start: "2027-03-14 00:00", cron: "@every 1h", dst: dst,
				from: "2027-03-14T05:00:00Z", to: "2027-03-14T09:00:00Z",
				want: []string{"2027-03-14T05:00:00Z", "2027-03-14T06:00:00Z", "2027-03-14T07:00:00Z", "2027-03-14T08:00:00Z"}},
			policyCase{name: "@every 1h across fall back " + dst.Gap + "/" + dst.Repeat,
				zone: "America/New_York", start: "2027-11-07 00:00", cron: "@every 1h", dst: dst,
				from: "2027-11-07T04:00:00Z", to: "2027-11-07T08:00:00Z",
				want: []string{"2027-11-07T04:00:00Z", "2027-11-07T05:00:00Z", "2027-11-07T06:00:00Z", "2027-11-07T07:00:00Z"}},
			policyCase{name: "one-time on the spring-forward day " + dst.Gap + "/" + dst.Repeat,
				zone: "America/New_York", start: "2027-03-14 03:30", dst: dst,
				from: "2027-03-14T00:00:00Z", to: "2027-03-15T00:00:00Z",
				want: []string{"2027-03-14T07:30:00Z"}},
			policyCase{name: "one-time on the fall-back day " + dst.Gap + "/" + dst.Repeat,
				zone: "America/Santiago", start: "2027-04-03 22:30", dst: dst,
				from: "2027-04-03T00:00:00Z", to: "2027-04-05T00:00:00Z",
				want: []string{"2027-04-04T01:30:00Z"}},
		)
	}
	runPolicyCases(t, cases)
}

func TestExpandInstantsLimitCountsSkipped(t *testing.T) {
	t.Parallel()
	r := mustCompile(t, Spec{StartTime: utc("2027-03-12T07:30:00Z"), Timezone: "America/New_York", RRule: "FREQ=DAILY"})
	got, err := ExpandInstants(r, utc("2027-03-13T00:00:00Z"), maxInstant, 2)
	require.NoError(t, err)
	require.Equal(t, []string{"2027-03-13T07:30:00Z", "2027-03-14T07:30:00Z skipped"}, formatInstants(got), "got, want")
	got, err = ExpandInstants(r, utc("2027-03-14T07:30:00.000001Z"), maxInstant, 1)
	require.NoError(t, err)
	require.Equal(t, []string{"2027-03-15T06:30:00Z"}, formatInstants(got), "resuming after a skipped instant, got, want")
}

func TestPreviewInstantsShowsSkipped(t *testing.T) {
	t.Parallel()
	r := mustCompile(t, Spec{StartTime: utc("2027-03-12T07:30:00Z"), Timezone: "America/New_York", RRule: "FREQ=DAILY"})
	after := utc("2027-03-13T08:00:00Z")
	got, err := Preview(r, after, 2)
	require.NoError(t, err)
	require.Equal(t, []PreviewInstant{
		{UTC: utc("2027-03-15T06:30:00Z"), Local: "2027-03-15T02:30:00-04:00"},
		{UTC: utc("2027-03-16T06:30:00Z"), Local: "2027-03-16T02:30:00-04:00"},
	}, got, "Preview leaves skipped readings out")
	got, err = PreviewInstants(r, after, 2)
	require.NoError(t, err)
	require.Equal(t, []PreviewInstant{
		{UTC: utc("2027-03-14T07:30:00Z"), Local: "2027-03-14T03:30:00-04:00", Skipped: true},
		{UTC: utc("2027-03-15T06:30:00Z"), Local: "2027-03-15T02:30:00-04:00"},
	}, got, "PreviewInstants shows them")
}

func TestDSTPolicyRejects(t *testing.T) {
	t.Parallel()
	start := utc("2027-01-10T09:00:00Z")
	tests := []struct {
		name      string
		spec      Spec
		wantField string
		wantIn    string
	}{
		{"unknown gap", Spec{StartTime: start, RRule: "FREQ=DAILY", DST: DST{Gap: "forward"}}, "dst.gap", `"forward" is not a gap policy: use "shift", "skip", or leave it empty`},
		{"gap is case-sensitive", Spec{Cron: "@daily", DST: DST{Gap: "Skip"}}, "dst.gap", `use "shift", "skip"`},
		{"repeat value as gap", Spec{StartTime: start, DST: DST{Gap: "first"}}, "dst.gap", `"first" is not a gap policy`},
		{"unknown repeat", Spec{StartTime: start, Cron: "@every 1h", DST: DST{Repeat: "twice"}}, "dst.repeat", `"twice" is not a repeat policy: use "first", "last" or "both"`},
		{"gap value as repeat", Spec{StartTime: start, Schedule: &Schedule{Frequency: "daily"}, DST: DST{Repeat: "skip"}}, "dst.repeat", `"skip" is not a repeat policy`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Compile(tt.spec, Limits{})
			var fe *FieldError
			require.ErrorAs(t, err, &fe)
			require.Equal(t, tt.wantField, fe.Field, "got field, want (error %q)", err)
			require.Contains(t, fe.Reason, tt.wantIn, "got reason, want it to mention")
		})
	}
}

// TestReadAgainstBruteForce checks the policy resolver minute by minute
// around every 2027 transition of the reference zones against the instants
// found by walking real time: a repeated reading maps to its first, last or
// both instants, a missing one to the transition (cron's default) or to the
// reading taken with the offset before the gap (shift, skip).
func TestReadAgainstBruteForce(t *testing.T) {
	t.Parallel()
	policies := []struct {
		gap    gapPolicy
		repeat repeatPolicy
	}{
		{gapNext, repeatFirst}, {gapShift, repeatLast}, {gapSkip, repeatBoth}, {gapSkip, repeatFirst}, {gapShift, repeatBoth},
	}
	for _, zone := range []string{"America/New_York", "Australia/Lord_Howe", "America/Santiago", "Europe/Prague"} {
		loc := mustLoc(t, zone)
		probe := time.Date(2027, 1, 1, 0, 0, 0, 0, loc)
		for range 2 {
			_, transition := probe.ZoneBounds()
			probe = transition
			shows := map[time.Time][]time.Time{} // wall reading -> instants showing it, in order
			for i := -30 * 60; i <= 30*60; i++ {
				inst := transition.Add(time.Duration(i) * time.Minute).UTC()
				l := inst.In(loc)
				w := time.Date(l.Year(), l.Month(), l.Day(), l.Hour(), l.Minute(), 0, 0, time.UTC)
				shows[w] = append(shows[w], inst)
			}
			before := transition.Add(-time.Minute).In(loc)
			_, offBefore := before.Zone()
			for _, p := range policies {
				zr := dstPolicy{gap: p.gap, repeat: p.repeat}.resolver(loc, gapNext)
				lo := wallOf(transition, loc).Add(-24 * time.Hour)
				for w := lo; w.Before(lo.Add(48 * time.Hour)); w = w.Add(time.Minute) {
					label := zone + " " + w.Format("2006-01-02 15:04")
					got, kind := zr.read(w)
					insts := shows[w]
					switch {
					case len(insts) == 0 && p.gap == gapNext:
						require.Equal(t, wallGap, kind, label)
						require.True(t, got.Equal(transition), "%s: got %s, want the transition", label, got)
					case len(insts) == 0:
						want := map[gapPolicy]wallKind{gapShift: wallGap, gapSkip: wallSkipped}[p.gap]
						require.Equal(t, want, kind, label)
						require.True(t, got.Equal(w.Add(-time.Duration(offBefore)*time.Second)), "%s: got %s, want it read at the offset before the gap", label, got)
					case len(insts) == 1 || p.repeat == repeatFirst:
						require.Equal(t, wallOnce, kind, label)
						require.True(t, got.Equal(insts[0]), "%s: got %s, want %s", label, got, insts[0])
					case p.repeat == repeatLast:
						require.Equal(t, wallOnce, kind, label)
						require.True(t, got.Equal(insts[1]), "%s: got %s, want the second pass %s", label, got, insts[1])
					default:
						require.Equal(t, wallTwice, kind, label)
						require.True(t, got.Equal(insts[0]) && zr.second.Equal(insts[1]), "%s: got %s and %s, want %v", label, got, zr.second, insts)
					}
				}
			}
		}
	}
}

func TestDSTPolicyLookback(t *testing.T) {
	t.Parallel()
	ny := mustLoc(t, "America/New_York")
	require.Equal(t, time.Second, dstPolicy{repeat: repeatBoth}.lookback(utc("2027-11-07T04:30:00Z"), ny), "an hour and a half before fall back")
	require.Equal(t, time.Hour+time.Second, dstPolicy{repeat: repeatLast}.lookback(utc("2027-11-07T05:30:00Z"), ny), "inside the first pass")
	require.Equal(t, time.Second, dstPolicy{}.lookback(utc("2027-11-07T05:30:00Z"), ny), "first passes need no extra lookback")
}

var policyZones = []string{"America/New_York", "Australia/Lord_Howe", "America/Santiago", "Europe/Prague"}

var allPolicies = func() []DST {
	var out []DST
	for _, gap := range []string{"", GapShift, GapSkip} {
		for _, repeat := range []string{"", RepeatLast, RepeatBoth} {
			out = append(out, DST{Gap: gap, Repeat: repeat})
		}
	}
	return out
}()

// transitionsOf lists the zone's offset changes in 2027 and 2028.
func transitionsOf(loc *time.Location) []time.Time {
	var out []time.Time
	probe := time.Date(2027, 1, 1, 0, 0, 0, 0, loc)
	for {
		_, end := probe.ZoneBounds()
		if end.IsZero() || end.Year() > 2028 {
			return out
		}
		out = append(out, end)
		probe = end
	}
}

// cronPolicyOracle plans a five-field cron expression over [from, to) by
// walking real minutes: each matching wall reading is resolved under p from
// the instants found to show it, independently of the engine's zone code.
func cronPolicyOracle(expr string, loc *time.Location, p DST, from, to time.Time) []string {
	fields := strings.Fields(expr)
	sets := make([]uint64, 5)
	for i, f := range fields {
		sets[i], _ = parseCronField(f, cronFields[i])
	}
	domStar, dowStar := fields[2][0] == '*', fields[4][0] == '*'
	matches := func(w time.Time) bool {
		dom := sets[2]&(1<<uint(w.Day())) != 0
		dow := sets[4]&(1<<uint(w.Weekday())) != 0
		day := dom && dow
		if !domStar && !dowStar {
			day = dom || dow
		}
		return day && sets[0]&(1<<uint(w.Minute())) != 0 && sets[1]&(1<<uint(w.Hour())) != 0 && sets[3]&(1<<uint(w.Month())) != 0
	}
	floating := func(t time.Time) time.Time {
		l := t.In(loc)
		return time.Date(l.Year(), l.Month(), l.Day(), l.Hour(), l.Minute(), 0, 0, time.UTC)
	}
	lo, hi := from.UTC().Truncate(time.Minute).Add(-3*time.Hour), to.UTC().Add(3*time.Hour)
	shows := map[time.Time][]time.Time{}
	var real []time.Time
	for t := lo; t.Before(hi); t = t.Add(time.Minute) {
		shows[floating(t)] = append(shows[floating(t)], t)
		real = append(real, t)
	}
	planned := map[time.Time]bool{} // instant -> skipped
	plan := func(at time.Time, skipped bool) {
		if prev, ok := planned[at]; !ok || prev {
			planned[at] = skipped
		}
	}
	for w := floating(lo.Add(time.Hour)); w.Before(floating(hi.Add(-time.Hour))); w = w.Add(time.Minute) {
		if !matches(w) {
			continue
		}
		insts := shows[w]
		switch {
		case len(insts) == 0: // in a gap: the transition is the first minute showing a later reading
			i := 0
			for floating(real[i]).Before(w) || floating(real[i]).Equal(w) {
				i++
			}
			_, before := real[i-1].In(loc).Zone()
			shifted := w.Add(-time.Duration(before) * time.Second)
			switch p.Gap {
			case GapShift:
				plan(shifted, false)
			case GapSkip:
				plan(shifted, true)
			default:
				plan(real[i], false)
			}
		case len(insts) == 1 || p.Repeat == "" || p.Repeat == RepeatFirst:
			plan(insts[0], false)
		case p.Repeat == RepeatLast:
			plan(insts[len(insts)-1], false)
		default:
			for _, in := range insts {
				plan(in, false)
			}
		}
	}
	var ats []time.Time
	for at := range planned {
		if !at.Before(from) && at.Before(to) {
			ats = append(ats, at)
		}
	}
	slices.SortFunc(ats, time.Time.Compare)
	out := []string{}
	for _, at := range ats {
		s := at.Format(time.RFC3339Nano)
		if planned[at] {
			s += " skipped"
		}
		out = append(out, s)
	}
	return out
}

// TestDSTPolicyCronAgainstOracle compares random cron expressions under every
// policy with the minute-by-minute oracle, in windows around transitions.
func TestDSTPolicyCronAgainstOracle(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	checked := 0
	for range propertyRounds {
		expr := randomCron(rng)
		if rng.IntN(2) == 0 { // most random hour fields miss the transition hours
			f := strings.Fields(expr)
			f[1] = []string{"*", "0-3", "1,2", "23,0", "2", "0"}[rng.IntN(6)]
			f[2], f[3], f[4] = "*", "*", "*"
			expr = strings.Join(f, " ")
		}
		zone := policyZones[rng.IntN(len(policyZones))]
		loc := mustLoc(t, zone)
		p := allPolicies[rng.IntN(len(allPolicies))]
		r, err := Compile(Spec{Timezone: zone, Cron: expr, DST: p}, Limits{})
		if err != nil {
			continue
		}
		checked++
		tr := transitionsOf(loc)
		at := tr[rng.IntN(len(tr))]
		from := at.Add(-time.Duration(rng.Int64N(int64(36 * time.Hour)))).Truncate(time.Minute)
		if rng.IntN(2) == 0 {
			from = from.Add(time.Duration(rng.Int64N(int64(time.Minute))))
		}
		to := at.Add(time.Duration(rng.Int64N(int64(36 * time.Hour))))
		got, err := ExpandInstants(r, from, to, 100000)
		require.NoError(t, err)
		require.Equal(t, cronPolicyOracle(expr, loc, p, from, to), formatInstants(got),
			"%q in %s under %+v over [%s, %s): got, want", expr, zone, p, from, to)
	}
	require.Greater(t, checked, propertyRounds/2, "too few random expressions compiled")
}

// TestDSTPolicyProperties checks, for random rules and policies in windows
// around transitions, the invariants of ExpandInstants (sorted, unique, in
// the window, never before start_time), that Expand returns its firing
// instants, that windows add up, and that re-anchoring changes nothing.
func TestDSTPolicyProperties(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(9, 10))
	checked := 0
	for range propertyRounds {
		rule, _ := randomRRule(rng)
		zone := policyZones[rng.IntN(len(policyZones))]
		loc := mustLoc(t, zone)
		start := randomStart(rng, loc)
		p := allPolicies[rng.IntN(len(allPolicies))]
		r, err := Compile(Spec{StartTime: start, Timezone: zone, RRule: rule, DST: p}, Limits{})
		if err != nil {
			var fe *FieldError
			require.ErrorAs(t, err, &fe, "%s: error is not a FieldError", rule)
			continue
		}
		var later []time.Time
		for _, tr := range transitionsOf(loc) {
			if tr.After(start) {
				later = append(later, tr)
			}
		}
		if len(later) == 0 {
			continue
		}
		checked++
		label := fmt.Sprintf("%s from %s in %s under %+v", rule, start, zone, p)
		at := later[rng.IntN(len(later))]
		a := at.Add(-time.Duration(rng.Int64N(int64(48 * time.Hour))))
		c := at.Add(time.Duration(1 + rng.Int64N(int64(48*time.Hour))))
		b := a.Add(time.Duration(rng.Int64N(int64(c.Sub(a)))))
		const limit = 20000
		whole, err := ExpandInstants(r, a, c, limit)
		require.NoError(t, err)
		if len(whole) == limit {
			continue
		}
		var fired []time.Time
		for i, in := range whole {
			require.False(t, in.At.Before(a) || !in.At.Before(c), "%s: %s outside the window", label, in.At)
			require.False(t, in.At.Before(start), "%s: %s before start_time", label, in.At)
			require.True(t, in.At.Equal(in.At.Truncate(time.Microsecond)) && in.At.Location() == time.UTC, "%s: %s", label, in.At)
			if i > 0 {
				require.True(t, whole[i-1].At.Before(in.At), "%s: not sorted and unique at %d", label, i)
			}
			if !in.Skipped {
				fired = append(fired, in.At)
			}
		}
		require.Equal(t, formatAll(fired), formatAll(mustExpand(t, r, a, c, limit)), "%s: Expand is ExpandInstants' firing instants", label)
		left, err := ExpandInstants(r, a, b, limit)
		require.NoError(t, err)
		right, err := ExpandInstants(r, b, c, limit)
		require.NoError(t, err)
		require.Equal(t, formatInstants(whole), formatInstants(append(left, right...)), "%s: [a,b)+[b,c) differs from [a,c) (b=%s)", label, b)

		src := *r.src.(*rruleSource)
		src.noAnchor = true
		plain := &Rule{src: &src, loc: r.loc, start: r.start, recurring: true, limits: r.limits}
		full, err := ExpandInstants(plain, a, c, limit)
		require.NoError(t, err)
		require.Equal(t, formatInstants(whole), formatInstants(full), "%s: re-anchored expansion differs from iteration from DTSTART", label)
	}
	require.Greater(t, checked, propertyRounds/2, "too few random rules compiled")
}

// A start_time on the second pass of a repeated local time is the first
// instance itself: its reading resolves to the first pass, an hour before
// start_time, which must never fire (nothing fires early).
func TestStartOnTheSecondPassOfARepeatedHourNeverFiresEarly(t *testing.T) {
	start := time.Date(2027, 11, 7, 6, 30, 0, 0, time.UTC) // 01:30 EST, the second 01:30 in New York
	for _, repeat := range []string{"", RepeatFirst, RepeatLast, RepeatBoth} {
		r, err := Compile(Spec{StartTime: start, Timezone: "America/New_York", RRule: "FREQ=DAILY;COUNT=2",
			DST: DST{Repeat: repeat}}, DefaultLimits())
		if err != nil {
			t.Fatal(err)
		}
		got, err := Expand(r, start.Add(-24*time.Hour), start.Add(72*time.Hour), 10)
		if err != nil {
			t.Fatal(err)
		}
		want := []time.Time{start, time.Date(2027, 11, 8, 6, 30, 0, 0, time.UTC)}
		if len(got) != 2 || !got[0].Equal(want[0]) || !got[1].Equal(want[1]) {
			t.Errorf("repeat %q: got %v, want %v", repeat, got, want)
		}
	}
}
