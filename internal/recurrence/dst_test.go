package recurrence

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The 2027 transitions used below (from the embedded zone data):
//   America/New_York    spring 03-14 02:00 EST→03:00 EDT (07:00Z); fall 11-07 02:00 EDT→01:00 EST (06:00Z)
//   Europe/Prague       spring 03-28 02:00 CET→03:00 CEST (01:00Z); fall 10-31 03:00 CEST→02:00 CET (01:00Z)
//   Australia/Lord_Howe fall 04-04 02:00 +11→01:30 +10:30 (04-03 15:00Z); spring 10-03 02:00 +10:30→02:30 +11 (10-02 15:30Z)

type dstCase struct {
	name  string
	zone  string
	start string // local wall clock, "2006-01-02 15:04"
	rrule string
	cron  string
	from  string // window (UTC)
	to    string
	want  []string // UTC
}

func runDSTCases(t *testing.T, tests []dstCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			loc := mustLoc(t, tt.zone)
			var start time.Time
			if tt.start != "" {
				w, err := time.Parse("2006-01-02 15:04", tt.start)
				require.NoError(t, err)
				start = time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), 0, 0, loc)
			}
			r := mustCompile(t, Spec{StartTime: start, Timezone: tt.zone, RRule: tt.rrule, Cron: tt.cron})
			got := mustExpand(t, r, utc(tt.from), utc(tt.to), 1000)
			require.Equal(t, tt.want, formatAll(got), "got instants, want")
			for _, g := range got {
				require.False(t, g.Before(start), "instant %s before start_time", g)
			}
		})
	}
}

func TestDSTRRule(t *testing.T) {
	t.Parallel()
	runDSTCases(t, []dstCase{
		{name: "New York daily 02:30 skips the spring-forward day and does not count it",
			zone: "America/New_York", start: "2027-03-12 02:30", rrule: "RRULE:FREQ=DAILY;COUNT=3",
			from: "2027-03-01T00:00:00Z", to: "2027-04-01T00:00:00Z",
			want: []string{"2027-03-12T07:30:00Z", "2027-03-13T07:30:00Z", "2027-03-15T06:30:00Z"}},
		{name: "New York daily 01:30 fires once on the fall-back night, at 01:30 EDT",
			zone: "America/New_York", start: "2027-11-06 01:30", rrule: "RRULE:FREQ=DAILY",
			from: "2027-11-06T00:00:00Z", to: "2027-11-09T00:00:00Z",
			want: []string{"2027-11-06T05:30:00Z", "2027-11-07T05:30:00Z", "2027-11-08T06:30:00Z"}},
		{name: "New York hourly across spring forward has no 02:00",
			zone: "America/New_York", start: "2027-03-13 12:00", rrule: "RRULE:FREQ=HOURLY",
			from: "2027-03-14T04:30:00Z", to: "2027-03-14T08:30:00Z",
			want: []string{"2027-03-14T05:00:00Z", "2027-03-14T06:00:00Z", "2027-03-14T07:00:00Z", "2027-03-14T08:00:00Z"}},
		{name: "New York hourly across fall back has one 01:00 (EDT), then 02:00 EST",
			zone: "America/New_York", start: "2027-11-06 12:00", rrule: "RRULE:FREQ=HOURLY",
			from: "2027-11-07T03:30:00Z", to: "2027-11-07T08:30:00Z",
			want: []string{"2027-11-07T04:00:00Z", "2027-11-07T05:00:00Z", "2027-11-07T07:00:00Z", "2027-11-07T08:00:00Z"}},
		{name: "New York every 30 minutes skips 02:00 and 02:30",
			zone: "America/New_York", start: "2027-03-13 00:00", rrule: "RRULE:FREQ=MINUTELY;INTERVAL=30",
			from: "2027-03-14T06:00:00Z", to: "2027-03-14T07:45:00Z",
			want: []string{"2027-03-14T06:00:00Z", "2027-03-14T06:30:00Z", "2027-03-14T07:00:00Z", "2027-03-14T07:30:00Z"}},
		{name: "Prague daily 02:30 skips the spring-forward day",
			zone: "Europe/Prague", start: "2027-03-27 02:30", rrule: "FREQ=DAILY",
			from: "2027-03-27T00:00:00Z", to: "2027-03-30T00:00:00Z",
			want: []string{"2027-03-27T01:30:00Z", "2027-03-29T00:30:00Z"}},
		{name: "Prague daily 02:30 fires once on the fall-back night, at 02:30 CEST",
			zone: "Europe/Prague", start: "2027-10-30 02:30", rrule: "FREQ=DAILY",
			from: "2027-10-30T00:00:00Z", to: "2027-11-02T00:00:00Z",
			want: []string{"2027-10-30T00:30:00Z", "2027-10-31T00:30:00Z", "2027-11-01T01:30:00Z"}},
		{name: "Prague 09:00 stays 09:00 local across both transitions",
			zone: "Europe/Prague", start: "2027-03-27 09:00", rrule: "RRULE:FREQ=DAILY;COUNT=2",
			from: "2027-03-01T00:00:00Z", to: "2027-04-01T00:00:00Z",
			want: []string{"2027-03-27T08:00:00Z", "2027-03-28T07:00:00Z"}},
		{name: "Lord Howe daily 02:15 skips the 30-minute spring gap",
			zone: "Australia/Lord_Howe", start: "2027-10-02 02:15", rrule: "RRULE:FREQ=DAILY;COUNT=2",
			from: "2027-10-01T00:00:00Z", to: "2027-10-10T00:00:00Z",
			want: []string{"2027-10-01T15:45:00Z", "2027-10-03T15:15:00Z"}},
		{name: "Lord Howe daily 01:45 fires once in the repeated half hour, at +11",
			zone: "Australia/Lord_Howe", start: "2027-04-03 01:45", rrule: "RRULE:FREQ=DAILY",
			from: "2027-04-02T00:00:00Z", to: "2027-04-05T00:00:00Z",
			want: []string{"2027-04-02T14:45:00Z", "2027-04-03T14:45:00Z", "2027-04-04T15:15:00Z"}},
		{name: "Lord Howe every 15 minutes skips 02:00 and 02:15",
			zone: "Australia/Lord_Howe", start: "2027-10-02 00:00", rrule: "RRULE:FREQ=MINUTELY;INTERVAL=15",
			from: "2027-10-02T15:15:00Z", to: "2027-10-02T16:00:00Z",
			want: []string{"2027-10-02T15:15:00Z", "2027-10-02T15:30:00Z", "2027-10-02T15:45:00Z"}},
	})
}

func TestDSTCron(t *testing.T) {
	t.Parallel()
	runDSTCases(t, []dstCase{
		{name: "New York 02:30 fires at 03:00 EDT on the spring-forward day",
			zone: "America/New_York", start: "2027-03-12 00:00", cron: "30 2 * * *",
			from: "2027-03-12T00:00:00Z", to: "2027-03-16T00:00:00Z",
			want: []string{"2027-03-12T07:30:00Z", "2027-03-13T07:30:00Z", "2027-03-14T07:00:00Z", "2027-03-15T06:30:00Z"}},
		{name: "New York 01:30 fires once on the fall-back night",
			zone: "America/New_York", start: "2027-11-06 00:00", cron: "30 1 * * *",
			from: "2027-11-06T00:00:00Z", to: "2027-11-09T00:00:00Z",
			want: []string{"2027-11-06T05:30:00Z", "2027-11-07T05:30:00Z", "2027-11-08T06:30:00Z"}},
		{name: "New York every 30 minutes: the gap collapses onto 03:00 EDT once",
			zone: "America/New_York", cron: "*/30 * * * *",
			from: "2027-03-14T06:00:00Z", to: "2027-03-14T08:00:00Z",
			want: []string{"2027-03-14T06:00:00Z", "2027-03-14T06:30:00Z", "2027-03-14T07:00:00Z", "2027-03-14T07:30:00Z"}},
		{name: "New York every 30 minutes: the repeated hour fires once",
			zone: "America/New_York", cron: "0,30 * * * *",
			from: "2027-11-07T04:30:00Z", to: "2027-11-07T07:30:00Z",
			want: []string{"2027-11-07T04:30:00Z", "2027-11-07T05:00:00Z", "2027-11-07T05:30:00Z", "2027-11-07T07:00:00Z"}},
		{name: "Prague 02:30 fires at 03:00 CEST on the spring-forward day",
			zone: "Europe/Prague", cron: "30 2 * * *",
			from: "2027-03-27T00:00:00Z", to: "2027-03-30T00:00:00Z",
			want: []string{"2027-03-27T01:30:00Z", "2027-03-28T01:00:00Z", "2027-03-29T00:30:00Z"}},
		{name: "Prague 02:30 fires once on the fall-back night, at CEST",
			zone: "Europe/Prague", cron: "30 2 * * *",
			from: "2027-10-30T00:00:00Z", to: "2027-11-02T00:00:00Z",
			want: []string{"2027-10-30T00:30:00Z", "2027-10-31T00:30:00Z", "2027-11-01T01:30:00Z"}},
		{name: "Lord Howe 02:15 fires at 02:30 (+11) on the spring-forward day",
			zone: "Australia/Lord_Howe", cron: "15 2 * * *",
			from: "2027-10-01T00:00:00Z", to: "2027-10-04T00:00:00Z",
			want: []string{"2027-10-01T15:45:00Z", "2027-10-02T15:30:00Z", "2027-10-03T15:15:00Z"}},
		{name: "Lord Howe 01:45 fires once in the repeated half hour",
			zone: "Australia/Lord_Howe", cron: "45 1 * * *",
			from: "2027-04-02T00:00:00Z", to: "2027-04-05T00:00:00Z",
			want: []string{"2027-04-02T14:45:00Z", "2027-04-03T14:45:00Z", "2027-04-04T15:15:00Z"}},
		{name: "start_time is an inclusive lower bound for cron",
			zone: "Europe/Prague", start: "2027-01-05 09:00", cron: "0 9 * * *",
			from: "2027-01-01T00:00:00Z", to: "2027-01-07T00:00:00Z",
			want: []string{"2027-01-05T08:00:00Z", "2027-01-06T08:00:00Z"}},
	})
}
