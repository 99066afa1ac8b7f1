package calendar_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/calendar"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/recurrence"
)

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestCalendarBlocks(t *testing.T) {
	t.Parallel()
	weekends := model.Calendar{ID: "weekends", Timezone: "Europe/Prague", RRules: []string{"FREQ=WEEKLY;BYDAY=SA,SU"}}
	christmas := model.Calendar{ID: "christmas", RRules: []string{"RRULE:FREQ=YEARLY;BYMONTH=12;BYMONTHDAY=25"}}
	mayDay := model.Calendar{ID: "may-day", Timezone: "Europe/Prague", Dates: []string{"2031-05-01"}}
	summer := model.Calendar{ID: "summer", Ranges: []model.DateRange{{From: "2031-07-01", To: "2031-07-14"},
		{From: "2031-07-10", To: "2031-07-20"}, {From: "2031-08-01", To: "2031-08-01"}}}
	auckland := model.Calendar{ID: "auckland", Timezone: "Pacific/Auckland", Dates: []string{"2031-06-10"}}
	losAngeles := model.Calendar{ID: "los-angeles", Timezone: "America/Los_Angeles", Dates: []string{"2031-06-10"}}
	// Chile starts daylight saving at midnight: Sunday 2031-09-07 has no
	// 00:00 and begins at 01:00 -03 (04:00 UTC).
	santiago := model.Calendar{ID: "santiago", Timezone: "America/Santiago", RRules: []string{"FREQ=WEEKLY;BYDAY=SU"}}
	tests := []struct {
		name string
		cal  model.Calendar
		at   string
		want bool
	}{
		{"Saturday 00:30 in Prague is Friday in UTC", weekends, "2031-03-07T23:30:00Z", true},
		{"Friday 23:30 in Prague", weekends, "2031-03-07T22:30:00Z", false},
		{"Sunday 23:59 in Prague", weekends, "2031-03-09T22:59:00Z", true},
		{"Monday 00:00 in Prague", weekends, "2031-03-09T23:00:00Z", false},
		{"Wednesday noon in Prague", weekends, "2031-03-12T11:00:00Z", false},
		{"the Sunday daylight saving starts (23 hours)", weekends, "2031-03-30T21:30:00Z", true},
		{"the Sunday daylight saving ends (25 hours)", weekends, "2031-10-26T22:30:00Z", true},
		{"Christmas", christmas, "2031-12-25T10:00:00Z", true},
		{"Christmas Eve", christmas, "2031-12-24T23:59:59Z", false},
		{"Christmas years later", christmas, "2097-12-25T00:00:00Z", true},
		{"a date, just after local midnight", mayDay, "2031-04-30T22:30:00Z", true},
		{"a date, the evening before", mayDay, "2031-04-30T21:30:00Z", false},
		{"a date, its last minute", mayDay, "2031-05-01T21:59:00Z", true},
		{"a range's first day", summer, "2031-07-01T00:00:00Z", true},
		{"inside overlapping ranges", summer, "2031-07-12T12:00:00Z", true},
		{"the later range's last day", summer, "2031-07-20T23:59:59Z", true},
		{"the day after", summer, "2031-07-21T00:00:00Z", false},
		{"the day before", summer, "2031-06-30T23:59:59Z", false},
		{"a one-day range", summer, "2031-08-01T08:00:00Z", true},
		{"between ranges", summer, "2031-07-25T08:00:00Z", false},
		{"Auckland: the date already began while UTC is on the day before", auckland, "2031-06-09T13:00:00Z", true},
		{"Auckland: UTC is on the date, Auckland on the next day", auckland, "2031-06-10T13:00:00Z", false},
		{"Los Angeles: UTC is on the next day, LA still on the date", losAngeles, "2031-06-11T03:00:00Z", true},
		{"Los Angeles: UTC is on the date, LA still on the day before", losAngeles, "2031-06-10T05:00:00Z", false},
		{"a Sunday without a midnight", santiago, "2031-09-07T04:30:00Z", true},
		{"the Saturday evening before it", santiago, "2031-09-07T02:30:00Z", false},
		{"the Monday after it", santiago, "2031-09-08T03:30:00Z", false},
	}
	compiled := map[string]*calendar.Compiled{}
	for _, tt := range tests {
		if compiled[tt.cal.ID] == nil {
			c, err := calendar.Compile(tt.cal, recurrence.Limits{})
			require.NoError(t, err, tt.cal.ID)
			compiled[tt.cal.ID] = c
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := compiled[tt.cal.ID]
			// Twice: the second answer comes from the per-day cache.
			for range 2 {
				if got := c.Blocks(utc(tt.at)); got != tt.want {
					t.Errorf("%s.Blocks(%s) = %v, want %v", tt.cal.ID, tt.at, got, tt.want)
				}
			}
		})
	}
}

// TestCalendarBlocksConcurrently asks one compiled calendar from many
// goroutines (run with -race): every answer is the weekday's.
func TestCalendarBlocksConcurrently(t *testing.T) {
	t.Parallel()
	c, err := calendar.Compile(model.Calendar{Timezone: "UTC", RRules: []string{"FREQ=WEEKLY;BYDAY=SA,SU"}},
		recurrence.Limits{})
	require.NoError(t, err)
	start := utc("2031-01-01T12:00:00Z")
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 6000 { // more days than the per-day cache holds
				at := start.AddDate(0, 0, (i*7+g)%6000)
				want := at.Weekday() == time.Saturday || at.Weekday() == time.Sunday
				if got := c.Blocks(at); got != want {
					errs <- at.Format(time.DateOnly)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for day := range errs {
		t.Errorf("Blocks(%s) disagrees with its weekday", day)
	}
}

func TestCompileRefusesWhatValidateRefuses(t *testing.T) {
	t.Parallel()
	for _, c := range []model.Calendar{
		{Timezone: "Mars/Olympus"},
		{Dates: []string{"2031-02-30"}},
		{Ranges: []model.DateRange{{From: "2031-02-02", To: "2031-02-01"}}},
		{RRules: []string{"DTSTART:20310101T000000Z\nRRULE:FREQ=DAILY"}},
	} {
		if _, err := calendar.Compile(c, recurrence.Limits{}); err == nil {
			t.Errorf("Compile(%+v) succeeded, want an error", c)
		}
	}
}
