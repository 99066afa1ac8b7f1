package api

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/repository/repositorytest"
)

// The four places where the engine used to follow python-dateutil instead of
// RFC 5545 (issue #23), through POST /schedules/preview.
func TestPreviewFollowsRFC5545(t *testing.T) {
	e := newEnv(t, repositorytest.SQLite)
	tests := []struct {
		name, start, rrule string
		count              int
		want               []string
	}{
		{"BYWEEKNO numbers an early-January day in its own week-year", "2033-01-01T09:00:00Z",
			"RRULE:FREQ=YEARLY;BYWEEKNO=53;BYDAY=SU;COUNT=3", 3,
			[]string{"2033-01-02T09:00:00Z", "2038-01-03T09:00:00Z", "2044-01-03T09:00:00Z"}},
		{"a negative BYWEEKNO reaches next year's week 1 in December", "2024-06-03T09:00:00Z",
			"RRULE:FREQ=YEARLY;BYWEEKNO=-52;BYMONTH=12;BYDAY=MO;COUNT=2", 2,
			[]string{"2024-12-30T09:00:00Z", "2029-12-31T09:00:00Z"}},
		{"WEEKLY BYSETPOS chooses within the whole WKST week", "2027-01-07T09:00:00Z",
			"RRULE:FREQ=WEEKLY;BYDAY=TU,TH,SA;BYSETPOS=2;COUNT=3", 3,
			[]string{"2027-01-07T09:00:00Z", "2027-01-14T09:00:00Z", "2027-01-21T09:00:00Z"}},
		{"a preview reaches centuries ahead", "2030-01-01T09:00:00Z",
			"RRULE:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO", 15,
			[]string{"2044-02-29T09:00:00Z", "2072-02-29T09:00:00Z", "2112-02-29T09:00:00Z", "2140-02-29T09:00:00Z",
				"2168-02-29T09:00:00Z", "2196-02-29T09:00:00Z", "2208-02-29T09:00:00Z", "2236-02-29T09:00:00Z",
				"2264-02-29T09:00:00Z", "2292-02-29T09:00:00Z", "2304-02-29T09:00:00Z", "2332-02-29T09:00:00Z",
				"2360-02-29T09:00:00Z", "2388-02-29T09:00:00Z", "2416-02-29T09:00:00Z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start, err := time.Parse(time.RFC3339, tt.start)
			require.NoError(t, err)
			res := e.do("POST", "/schedules/preview", e.master, map[string]any{"start_time": tt.start, "timezone": "UTC",
				"rrule": tt.rrule, "count": tt.count, "after": start.Add(-time.Second).Format(time.RFC3339)})
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			var got previewAnswer
			res.json(t, &got)
			var utc []string
			for _, in := range got.Instants {
				utc = append(utc, in.UTC.Format(time.RFC3339))
			}
			require.Equal(t, tt.want, utc, "got instants, want RFC 5545's")
		})
	}
}

// The sparsest rule of issue #23 answers after bounded work: with the
// default budget its instants up to year 9999, with a small one a 400 that
// names the rule and says why.
func TestPreviewOfASparseRuleIsBounded(t *testing.T) {
	const rule = "FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO;BYHOUR=23;BYMINUTE=59;BYSECOND=59"
	body := `{"rrule":"` + rule + `","start_time":"2030-01-01T00:00:00Z","after":"2029-12-31T00:00:00Z","count":1000}`

	e := newEnv(t, repositorytest.SQLite)
	res := e.do("POST", "/schedules/preview", e.master, body)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	var got previewAnswer
	res.json(t, &got)
	require.Greater(t, len(got.Instants), 250, "a leap-day Monday every 28 years or so until 9999")
	require.Less(t, len(got.Instants), 1000)
	for _, in := range got.Instants {
		at := in.UTC
		require.True(t, at.Month() == time.February && at.Day() == 29 && at.Weekday() == time.Monday &&
			at.Hour() == 23 && at.Minute() == 59 && at.Second() == 59, "%s is not an instant of the rule", at)
	}
	require.Equal(t, "2044-02-29T23:59:59Z", got.Instants[0].UTC.Format(time.RFC3339))

	small := newEnv(t, repositorytest.SQLite, withOptions(func(o *Options) { o.Recurrence.MaxIterations = 20000 }))
	res = small.do("POST", "/schedules/preview", small.master, body)
	require.Equal(t, http.StatusBadRequest, res.Status, "%s", res.Body)
	var answer struct{ Error, Field string }
	res.json(t, &answer)
	require.Equal(t, "rrule", answer.Field, answer.Error)
	require.Contains(t, answer.Error, "too sparse for FREQ=SECONDLY")

	// The same rule in a calendar: created, and a preview that honours the
	// calendar answers (each day costs a day's candidates, not a scan).
	cal := e.createCalendar(e.master, map[string]any{"name": "leap mondays", "timezone": "UTC", "rrules": []string{rule}})
	res = e.do("POST", "/schedules/preview", e.master, map[string]any{"rrule": "FREQ=DAILY", "timezone": "UTC",
		"start_time": "2044-02-27T09:00:00Z", "after": "2044-02-27T00:00:00Z", "count": 5,
		"calendars": []map[string]string{{"id": cal["id"].(string), "policy": "skip"}}})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	var days struct {
		Instants []struct {
			UTC     time.Time `json:"utc"`
			Skipped bool      `json:"skipped"`
		} `json:"instants"`
	}
	res.json(t, &days)
	require.Len(t, days.Instants, 5)
	var skipped []string
	for _, in := range days.Instants {
		if in.Skipped {
			skipped = append(skipped, in.UTC.Format(time.DateOnly))
		}
	}
	require.Equal(t, []string{"2044-02-29"}, skipped, "only the leap-day Monday is blocked")

	// A calendar rule that cannot find an instant within the budget is a 400
	// naming it.
	res = small.do("POST", "/calendars", small.master, map[string]any{"name": "never", "timezone": "UTC",
		"rrules": []string{"FREQ=SECONDLY;BYYEARDAY=59;BYMONTHDAY=1;BYHOUR=23"}})
	require.Equal(t, http.StatusBadRequest, res.Status, "%s", res.Body)
	res.json(t, &answer)
	require.Equal(t, "rrules[0]", answer.Field, answer.Error)
	require.True(t, strings.Contains(answer.Error, "too sparse") || strings.Contains(answer.Error, "never"), answer.Error)
}
