package recurrence

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestScheduleMapsToRRule(t *testing.T) {
	t.Parallel()
	count := 5
	until := utc("2027-12-31T23:00:00Z")
	tests := []struct {
		name  string
		sched Schedule
		want  string
	}{
		{"interval defaults to 1", Schedule{Frequency: "daily"}, "RRULE:FREQ=DAILY;INTERVAL=1"},
		{"every field", Schedule{Frequency: "Monthly", Interval: 2, ByDay: []string{"-1fr", "MO"}, ByMonthDay: []int{1, -1},
			ByMonth: []int{3}, ByHour: []int{9}, ByMinute: []int{30}, BySetPos: []int{-1}, Count: &count},
			"RRULE:FREQ=MONTHLY;INTERVAL=2;COUNT=5;BYDAY=-1FR,MO;BYMONTHDAY=1,-1;BYMONTH=3;BYHOUR=9;BYMINUTE=30;BYSETPOS=-1"},
		{"until in UTC", Schedule{Frequency: "weekly", Until: &until}, "RRULE:FREQ=WEEKLY;INTERVAL=1;UNTIL=20271231T230000Z"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, tt.sched.RRule(), tt.name)
	}
}

func TestSemantics(t *testing.T) {
	t.Parallel()
	count := func(n int) *int { return &n }
	ptr := func(t time.Time) *time.Time { return &t }
	tests := []struct {
		name     string
		spec     Spec
		from, to string
		want     []string
	}{
		{"UNTIL is inclusive",
			Spec{StartTime: utc("2027-01-01T09:00:00Z"), RRule: "FREQ=DAILY;UNTIL=20270103T090000Z"},
			"2027-01-01T00:00:00Z", "2027-02-01T00:00:00Z",
			[]string{"2027-01-01T09:00:00Z", "2027-01-02T09:00:00Z", "2027-01-03T09:00:00Z"}},
		{"schedule until is inclusive",
			Spec{StartTime: utc("2027-01-01T09:00:00Z"), Schedule: &Schedule{Frequency: "daily", Until: ptr(utc("2027-01-02T09:00:00Z"))}},
			"2027-01-01T00:00:00Z", "2027-02-01T00:00:00Z",
			[]string{"2027-01-01T09:00:00Z", "2027-01-02T09:00:00Z"}},
		{"a date-only UNTIL includes that whole local day",
			Spec{StartTime: utc("2027-01-01T20:00:00Z"), Timezone: "Europe/Prague", RRule: "FREQ=DAILY;UNTIL=20270102"},
			"2027-01-01T00:00:00Z", "2027-02-01T00:00:00Z",
			[]string{"2027-01-01T20:00:00Z", "2027-01-02T20:00:00Z"}},
		{"COUNT counts the whole series, not the window",
			Spec{StartTime: utc("2027-01-01T09:00:00Z"), Schedule: &Schedule{Frequency: "daily", Count: count(5)}},
			"2027-01-04T00:00:00Z", "2027-02-01T00:00:00Z",
			[]string{"2027-01-04T09:00:00Z", "2027-01-05T09:00:00Z"}},
		{"DTSTART is the first instance when it matches",
			Spec{StartTime: utc("2027-01-04T09:00:00Z"), RRule: "FREQ=WEEKLY;BYDAY=MO,WE;COUNT=3"},
			"2027-01-01T00:00:00Z", "2027-02-01T00:00:00Z",
			[]string{"2027-01-04T09:00:00Z", "2027-01-06T09:00:00Z", "2027-01-11T09:00:00Z"}},
		{"DTSTART is not an instance when it does not match",
			Spec{StartTime: utc("2027-01-05T09:00:00Z"), RRule: "FREQ=WEEKLY;BYDAY=MO,WE;COUNT=2"},
			"2027-01-01T00:00:00Z", "2027-02-01T00:00:00Z",
			[]string{"2027-01-06T09:00:00Z", "2027-01-11T09:00:00Z"}},
		{"BYMONTHDAY=31 skips short months and never rolls over",
			Spec{StartTime: utc("2027-01-31T09:00:00Z"), Schedule: &Schedule{Frequency: "monthly", ByMonthDay: []int{31}}},
			"2027-01-01T00:00:00Z", "2027-08-01T00:00:00Z",
			[]string{"2027-01-31T09:00:00Z", "2027-03-31T09:00:00Z", "2027-05-31T09:00:00Z", "2027-07-31T09:00:00Z"}},
		{"monthly from the 31st without BYMONTHDAY also skips",
			Spec{StartTime: utc("2027-01-31T09:00:00Z"), RRule: "FREQ=MONTHLY;COUNT=3"},
			"2027-01-01T00:00:00Z", "2028-01-01T00:00:00Z",
			[]string{"2027-01-31T09:00:00Z", "2027-03-31T09:00:00Z", "2027-05-31T09:00:00Z"}},
		{"last Friday of the month from a schedule",
			Spec{StartTime: utc("2027-01-01T15:00:00Z"), Schedule: &Schedule{Frequency: "monthly", ByDay: []string{"-1FR"}, Count: count(3)}},
			"2027-01-01T00:00:00Z", "2028-01-01T00:00:00Z",
			[]string{"2027-01-29T15:00:00Z", "2027-02-26T15:00:00Z", "2027-03-26T15:00:00Z"}},
		{"schedule exdates remove instances but still count",
			Spec{StartTime: utc("2027-01-01T09:00:00Z"), Schedule: &Schedule{Frequency: "daily", Count: count(3),
				Exdates: []time.Time{utc("2027-01-02T09:00:00Z")}}},
			"2027-01-01T00:00:00Z", "2027-02-01T00:00:00Z",
			[]string{"2027-01-01T09:00:00Z", "2027-01-03T09:00:00Z"}},
		{"schedule by_hour and by_minute",
			Spec{StartTime: utc("2027-01-01T00:00:00Z"), Timezone: "America/New_York",
				Schedule: &Schedule{Frequency: "daily", ByHour: []int{8, 17}, ByMinute: []int{30}, Count: count(3)}},
			"2027-01-01T00:00:00Z", "2027-02-01T00:00:00Z",
			[]string{"2027-01-01T13:30:00Z", "2027-01-01T22:30:00Z", "2027-01-02T13:30:00Z"}},
		{"RDATE adds and EXDATE removes, in the stated zones",
			Spec{StartTime: utc("2027-01-01T09:00:00Z"),
				RRule: "RRULE:FREQ=DAILY;COUNT=3\nEXDATE:20270102T090000Z\nRDATE;TZID=Europe/Prague:20270110T120000"},
			"2027-01-01T00:00:00Z", "2027-02-01T00:00:00Z",
			[]string{"2027-01-01T09:00:00Z", "2027-01-03T09:00:00Z", "2027-01-10T11:00:00Z"}},
		{"a date-only EXDATE removes that local day",
			Spec{StartTime: utc("2027-01-01T23:30:00Z"), Timezone: "Europe/Prague", RRule: "RRULE:FREQ=DAILY;COUNT=3\nEXDATE;VALUE=DATE:20270103"},
			"2027-01-01T00:00:00Z", "2027-02-01T00:00:00Z",
			[]string{"2027-01-01T23:30:00Z", "2027-01-03T23:30:00Z"}},
		{"one-time event",
			Spec{StartTime: utc("2027-01-01T09:00:00.0000001Z")},
			"2027-01-01T00:00:00Z", "2027-02-01T00:00:00Z",
			[]string{"2027-01-01T09:00:00.000001Z"}},
		{"a sub-second DTSTART is kept (rounded up) on every instance",
			Spec{StartTime: utc("2027-01-01T09:00:00.5000004Z"), RRule: "FREQ=DAILY;COUNT=2"},
			"2027-01-01T00:00:00Z", "2027-02-01T00:00:00Z",
			[]string{"2027-01-01T09:00:00.500001Z", "2027-01-02T09:00:00.500001Z"}},
		{"cron day-of-month and day-of-week both restricted match either",
			Spec{Cron: "0 12 1 * FRI"},
			"2027-01-01T00:00:00Z", "2027-01-16T00:00:00Z",
			[]string{"2027-01-01T12:00:00Z", "2027-01-08T12:00:00Z", "2027-01-15T12:00:00Z"}},
		{"cron with a starred day-of-month requires the weekday",
			Spec{Cron: "0 12 */2 * mon"},
			"2027-01-01T00:00:00Z", "2027-02-01T00:00:00Z",
			[]string{"2027-01-11T12:00:00Z", "2027-01-25T12:00:00Z"}},
		{"cron names, ranges and steps",
			Spec{Cron: "15 9-17/4 * jan-feb mon-fri", Timezone: "Europe/Prague"},
			"2027-01-01T00:00:00Z", "2027-01-02T00:00:00Z",
			[]string{"2027-01-01T08:15:00Z", "2027-01-01T12:15:00Z", "2027-01-01T16:15:00Z"}},
		{"@weekly is Sunday midnight in the zone",
			Spec{Cron: "@weekly", Timezone: "America/New_York"},
			"2027-01-01T00:00:00Z", "2027-01-15T00:00:00Z",
			[]string{"2027-01-03T05:00:00Z", "2027-01-10T05:00:00Z"}},
		{"@yearly", Spec{Cron: "@annually"}, "2027-01-01T00:00:00Z", "2029-01-01T00:00:01Z",
			[]string{"2027-01-01T00:00:00Z", "2028-01-01T00:00:00Z", "2029-01-01T00:00:00Z"}},
		{"@every runs in elapsed time across DST",
			Spec{StartTime: utc("2027-03-13T12:00:00Z"), Timezone: "America/New_York", Cron: "@every 12h"},
			"2027-03-13T00:00:00Z", "2027-03-15T00:00:00Z",
			[]string{"2027-03-13T12:00:00Z", "2027-03-14T00:00:00Z", "2027-03-14T12:00:00Z"}},
		{"@every with days",
			Spec{StartTime: utc("2027-03-01T08:00:00Z"), Cron: "@every 1d12h"},
			"2027-03-02T00:00:00Z", "2027-03-06T00:00:00Z",
			[]string{"2027-03-02T20:00:00Z", "2027-03-04T08:00:00Z", "2027-03-05T20:00:00Z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := mustCompile(t, tt.spec)
			got := mustExpand(t, r, utc(tt.from), utc(tt.to), 100)
			require.Equal(t, tt.want, formatAll(got), "got instants, want")
		})
	}
}

func TestExpandLimitAndWindow(t *testing.T) {
	t.Parallel()
	r := mustCompile(t, Spec{StartTime: utc("2027-01-01T00:00:00Z"), RRule: "FREQ=HOURLY"})
	got := mustExpand(t, r, utc("2027-01-01T00:00:00Z"), utc("2028-01-01T00:00:00Z"), 3)
	require.Equal(t, []string{"2027-01-01T00:00:00Z", "2027-01-01T01:00:00Z", "2027-01-01T02:00:00Z"}, formatAll(got))
	got = mustExpand(t, r, utc("2027-01-01T05:00:00Z"), utc("2027-01-01T05:00:00Z"), 3)
	require.Empty(t, got, "an empty window has no instants")
	got = mustExpand(t, r, utc("2027-01-01T05:00:00Z"), utc("2027-01-01T06:00:00Z"), 3)
	require.Equal(t, []string{"2027-01-01T05:00:00Z"}, formatAll(got), "from is inclusive, to exclusive")
	_, err := Expand(r, utc("2027-01-01T00:00:00Z"), utc("2027-01-02T00:00:00Z"), 0)
	require.Error(t, err, "a zero limit is a caller bug")
}

func TestExpandFarFromDTSTARTIsCheap(t *testing.T) {
	t.Parallel()
	// With a budget of 200 candidates, a window 80 years after DTSTART can
	// only succeed if the iteration is re-anchored near the window.
	start := utc("2027-01-01T00:00:00Z")
	r, err := Compile(Spec{StartTime: start, Timezone: "Europe/Prague", RRule: "FREQ=MINUTELY;INTERVAL=7"}, Limits{MaxIterations: 200})
	require.NoError(t, err)
	from := utc("2107-06-01T10:00:00Z")
	got, err := Expand(r, from, from.Add(time.Hour), 100)
	require.NoError(t, err)
	require.Len(t, got, 9, "an hour of a 7-minute rule")
	prague := mustLoc(t, "Europe/Prague")
	require.Zero(t, wallOf(got[0], prague).Sub(wallOf(start, prague))%(7*time.Minute),
		"instants stay on DTSTART's 7-minute wall-clock lattice")
}

func TestPreview(t *testing.T) {
	t.Parallel()
	r := mustCompile(t, Spec{StartTime: utc("2027-03-26T08:00:00Z"), Timezone: "Europe/Prague", RRule: "FREQ=DAILY"})
	got, err := Preview(r, utc("2027-03-27T08:00:00Z"), 3)
	require.NoError(t, err)
	require.Equal(t, []PreviewInstant{
		{UTC: utc("2027-03-28T07:00:00Z"), Local: "2027-03-28T09:00:00+02:00"},
		{UTC: utc("2027-03-29T07:00:00Z"), Local: "2027-03-29T09:00:00+02:00"},
		{UTC: utc("2027-03-30T07:00:00Z"), Local: "2027-03-30T09:00:00+02:00"},
	}, got, "strictly after `after`, local time in the zone's offset")
	got, err = Preview(r, utc("2027-03-27T08:00:00Z"), 0)
	require.NoError(t, err)
	require.Len(t, got, 10, "n defaults to 10")
	got, err = Preview(r, utc("2027-03-27T08:00:00Z"), 5000)
	require.NoError(t, err)
	require.Len(t, got, 1000, "n is capped at 1000")
	once := mustCompile(t, Spec{StartTime: utc("2027-03-26T08:00:00Z")})
	got, err = Preview(once, utc("2027-03-27T08:00:00Z"), 3)
	require.NoError(t, err)
	require.Empty(t, got, "a past one-time event has nothing to preview")
}

// Windows centuries after DTSTART are still exact: re-anchoring counts
// periods without time.Duration, which saturates after about 292 years.
func TestExpandCenturiesAfterDTSTART(t *testing.T) {
	tests := []struct {
		rule, from string
		want       []string
	}{
		{"FREQ=DAILY", "5000-01-01T00:00:00Z", []string{"5000-01-01T09:30:00Z", "5000-01-02T09:30:00Z"}},
		{"FREQ=HOURLY;INTERVAL=5", "2900-06-01T00:00:00Z", []string{"2900-06-01T03:30:00Z", "2900-06-01T08:30:00Z"}},
		{"FREQ=WEEKLY;BYDAY=MO", "9000-01-01T00:00:00Z", []string{"9000-01-06T09:30:00Z", "9000-01-13T09:30:00Z"}},
		{"FREQ=SECONDLY;INTERVAL=30", "4000-01-01T00:00:10Z", []string{"4000-01-01T00:00:30Z", "4000-01-01T00:01:00Z"}},
	}
	for _, tc := range tests {
		r := mustCompile(t, Spec{StartTime: utc("2026-12-01T09:30:00Z"), RRule: tc.rule})
		got := formatAll(mustExpand(t, r, utc(tc.from), maxInstant, 2))
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s from %s: got %v, want %v", tc.rule, tc.from, got, tc.want)
		}
	}
}
