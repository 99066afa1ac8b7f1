package recurrence

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestCompileRejects(t *testing.T) {
	t.Parallel()
	start := utc("2027-01-10T09:00:00Z")
	count := func(n int) *int { return &n }
	before := start.Add(-time.Hour)
	tests := []struct {
		name      string
		spec      Spec
		limits    Limits
		wantField string
		wantIn    string // part of the reason
	}{
		{"unparsable rrule", Spec{StartTime: start, RRule: "FREQ=SOMETIMES"}, Limits{}, "rrule", "undefined frequency"},
		{"rrule without FREQ", Spec{StartTime: start, RRule: "RRULE:COUNT=3"}, Limits{}, "rrule", "FREQ is required"},
		{"garbage line", Spec{StartTime: start, RRule: "RRULE:FREQ=DAILY\nHELLO"}, Limits{}, "rrule", "unrecognised line"},
		{"DTSTART in the rule", Spec{StartTime: start, RRule: "DTSTART:20270101T000000Z\nRRULE:FREQ=DAILY"}, Limits{}, "rrule", "start_time"},
		{"unknown zone", Spec{StartTime: start, Timezone: "Mars/Olympus", RRule: "FREQ=DAILY"}, Limits{}, "timezone", "IANA"},
		{"Local is not a zone", Spec{StartTime: start, Timezone: "Local"}, Limits{}, "timezone", "IANA"},
		{"never produces: February 30", Spec{StartTime: start, RRule: "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30"}, Limits{}, "rrule", "never"},
		{"never produces: 31st of 30-day months", Spec{StartTime: start, RRule: "FREQ=MONTHLY;BYMONTH=4,6;BYMONTHDAY=31"}, Limits{}, "rrule", "never"},
		{"never produces: sixth Monday", Spec{StartTime: start, RRule: "FREQ=MONTHLY;BYDAY=6MO"}, Limits{}, "rrule", "never"},
		{"never produces: unreachable hour", Spec{StartTime: start, RRule: "FREQ=HOURLY;INTERVAL=2;BYHOUR=10"}, Limits{}, "rrule", "never"},
		{"never produces: set position out of reach", Spec{StartTime: start, RRule: "FREQ=MONTHLY;BYDAY=MO;BYSETPOS=6"}, Limits{}, "rrule", "never"},
		{"too frequent for the minimum", Spec{StartTime: start, RRule: "FREQ=SECONDLY;INTERVAL=30"}, Limits{MinInterval: time.Minute}, "rrule", "minimum interval"},
		{"minutely with two seconds too close", Spec{StartTime: start, RRule: "FREQ=MINUTELY;BYSECOND=0,1"}, Limits{MinInterval: 5 * time.Second}, "rrule", "1s apart"},
		{"COUNT over the cap", Spec{StartTime: start, RRule: "FREQ=DAILY;COUNT=10000000"}, Limits{}, "rrule", "COUNT must be between 1 and 100000"},
		{"COUNT over a configured cap", Spec{StartTime: start, RRule: "FREQ=DAILY;COUNT=11"}, Limits{MaxCount: 10}, "rrule", "between 1 and 10"},
		{"rrule over 4 KiB", Spec{StartTime: start, RRule: "FREQ=DAILY;BYHOUR=" + strings.Repeat("1,", 3000) + "1"}, Limits{}, "rrule", "4096 bytes"},
		{"cron over 4 KiB", Spec{Cron: strings.Repeat("1,", 3000) + "1 * * * *"}, Limits{}, "cron", "4096 bytes"},
		{"UNTIL before start", Spec{StartTime: start, RRule: "FREQ=DAILY;UNTIL=20260101T000000Z"}, Limits{}, "rrule", "UNTIL is before start_time"},
		{"COUNT and UNTIL", Spec{StartTime: start, RRule: "FREQ=DAILY;COUNT=2;UNTIL=20280101T000000Z"}, Limits{}, "rrule", "COUNT and UNTIL"},
		{"BYWEEKNO with monthly", Spec{StartTime: start, RRule: "FREQ=MONTHLY;BYWEEKNO=3"}, Limits{}, "rrule", "BYWEEKNO"},
		{"BYEASTER is dateutil's", Spec{StartTime: start, RRule: "FREQ=YEARLY;BYEASTER=0"}, Limits{}, "rrule", "not part of RFC 5545"},
		{"BYSETPOS beyond any period's set", Spec{StartTime: start, RRule: "FREQ=WEEKLY;BYDAY=MO,TU;BYSETPOS=3"}, Limits{}, "rrule", "BYSETPOS names no position"},
		{"ordinal with weekly", Spec{StartTime: start, RRule: "FREQ=WEEKLY;BYDAY=2MO"}, Limits{}, "rrule", "ordinals"},
		{"schedule until before start", Spec{StartTime: start, Schedule: &Schedule{Frequency: "daily", Until: &before}}, Limits{}, "schedule.until", "before start_time"},
		{"schedule bad by_day", Spec{StartTime: start, Schedule: &Schedule{Frequency: "weekly", ByDay: []string{"XX"}}}, Limits{}, "schedule.by_day", "not a weekday"},
		{"schedule bad ordinal", Spec{StartTime: start, Schedule: &Schedule{Frequency: "monthly", ByDay: []string{"0FR"}}}, Limits{}, "schedule.by_day", "ordinal"},
		{"schedule ordinal with weekly", Spec{StartTime: start, Schedule: &Schedule{Frequency: "weekly", ByDay: []string{"-1FR"}}}, Limits{}, "schedule.by_day", "monthly or yearly"},
		{"schedule bad frequency", Spec{StartTime: start, Schedule: &Schedule{Frequency: "secondly"}}, Limits{}, "schedule.frequency", "must be one of"},
		{"schedule negative interval", Spec{StartTime: start, Schedule: &Schedule{Frequency: "daily", Interval: -1}}, Limits{}, "schedule.interval", "between"},
		{"schedule month day 32", Spec{StartTime: start, Schedule: &Schedule{Frequency: "monthly", ByMonthDay: []int{32}}}, Limits{}, "schedule.by_month_day", "out of range"},
		{"schedule month 13", Spec{StartTime: start, Schedule: &Schedule{Frequency: "yearly", ByMonth: []int{13}}}, Limits{}, "schedule.by_month", "out of range"},
		{"schedule hour 24", Spec{StartTime: start, Schedule: &Schedule{Frequency: "daily", ByHour: []int{24}}}, Limits{}, "schedule.by_hour", "out of range"},
		{"schedule count over cap", Spec{StartTime: start, Schedule: &Schedule{Frequency: "daily", Count: count(100001)}}, Limits{}, "schedule.count", "between 1 and 100000"},
		{"schedule never produces", Spec{StartTime: start, Schedule: &Schedule{Frequency: "yearly", ByMonth: []int{2}, ByMonthDay: []int{30}}}, Limits{}, "schedule", "never"},
		{"two sources", Spec{StartTime: start, RRule: "FREQ=DAILY", Cron: "@daily"}, Limits{}, "cron", "only one of"},
		{"rrule and schedule", Spec{StartTime: start, RRule: "FREQ=DAILY", Schedule: &Schedule{Frequency: "daily"}}, Limits{}, "schedule", "only one of"},
		{"cron with four fields", Spec{Cron: "* * * *"}, Limits{}, "cron", "expected 5 fields"},
		{"cron minute 60", Spec{Cron: "60 * * * *"}, Limits{}, "cron", "minute"},
		{"cron backwards range", Spec{Cron: "0 5-1 * * *"}, Limits{}, "cron", "backwards"},
		{"cron February 30", Spec{Cron: "0 0 30 2 *"}, Limits{}, "cron", "never"},
		{"cron too frequent", Spec{Cron: "* * * * *"}, Limits{MinInterval: 5 * time.Minute}, "cron", "minimum interval"},
		{"@every too small", Spec{StartTime: start, Cron: "@every 500ms"}, Limits{}, "cron", "minimum interval"},
		{"@every garbage", Spec{StartTime: start, Cron: "@every soon"}, Limits{}, "cron", "@every"},
		{"@every without start", Spec{Cron: "@every 1h"}, Limits{}, "start_time", "required"},
		{"one-time without start", Spec{}, Limits{}, "start_time", "required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Compile(tt.spec, tt.limits)
			require.Error(t, err)
			var fe *FieldError
			require.ErrorAs(t, err, &fe)
			require.Equal(t, tt.wantField, fe.Field, "got field, want (error %q)", err)
			require.Contains(t, fe.Reason, tt.wantIn, "got reason, want it to mention")
			require.Equal(t, fe.Field+": "+fe.Reason, err.Error())
		})
	}
}

func TestCompileAccepts(t *testing.T) {
	t.Parallel()
	start := utc("2027-01-10T09:00:00Z")
	for _, spec := range []Spec{
		{StartTime: start, RRule: "rrule:freq=daily;byday=mo,tu"},
		{StartTime: start, RRule: "FREQ=SECONDLY"},
		{StartTime: start, RRule: "RRULE:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29"},
		{StartTime: start, RRule: "RRULE:FREQ=DAILY\r\nEXDATE:20270111T090000Z,20270112T090000Z\r\nRDATE;TZID=Europe/Prague:20270301T120000"},
		{StartTime: start, Schedule: &Schedule{Frequency: "Weekly", ByDay: []string{"mo", "fr"}}},
		{StartTime: start, Schedule: &Schedule{Frequency: "monthly", ByDay: []string{"-1fr"}}},
		{Cron: "0 9 * * MON-FRI"},
		{Cron: "@Hourly"},
		{StartTime: start, Cron: "@every 1d12h"},
	} {
		_, err := Compile(spec, Limits{})
		require.NoError(t, err, "spec %+v", spec)
	}
}

func TestRuleAccessors(t *testing.T) {
	t.Parallel()
	start := time.Date(2027, 5, 1, 9, 0, 0, 1, mustLoc(t, "Europe/Prague"))
	once := mustCompile(t, Spec{StartTime: start, Timezone: "Europe/Prague"})
	require.False(t, once.Recurring())
	require.Equal(t, "Europe/Prague", once.Location().String())
	require.Equal(t, "2027-05-01T07:00:00.000001Z", once.Start().Format(time.RFC3339Nano), "start rounded up to the microsecond, in UTC")
	require.True(t, mustCompile(t, Spec{StartTime: start, RRule: "FREQ=DAILY;COUNT=1"}).Recurring())
	require.Equal(t, time.UTC, mustCompile(t, Spec{Cron: "@daily"}).Location(), "empty timezone means UTC")
}
