package api

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/repository/repositorytest"
)

type previewAnswer struct {
	Timezone string `json:"timezone"`
	Instants []struct {
		UTC   time.Time `json:"utc"`
		Local string    `json:"local"`
	} `json:"instants"`
}

func TestSchedulePreviewShowsInstantsInUTCAndTheZone(t *testing.T) {
	e := newEnv(t, repositorytest.SQLite)
	res := e.do("POST", "/schedules/preview", e.master, map[string]any{
		"start_time": "2030-03-29T09:00:00+01:00", "timezone": "Europe/Prague", "rrule": "FREQ=DAILY", "count": 3,
		"after": "2030-03-29T00:00:00Z"})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	var got previewAnswer
	res.json(t, &got)
	require.Equal(t, "Europe/Prague", got.Timezone)
	require.Len(t, got.Instants, 3)
	// 09:00 local every day across the spring-forward night of 2030-03-31.
	want := []struct{ utc, local string }{
		{"2030-03-29T08:00:00Z", "2030-03-29T09:00:00+01:00"},
		{"2030-03-30T08:00:00Z", "2030-03-30T09:00:00+01:00"},
		{"2030-03-31T07:00:00Z", "2030-03-31T09:00:00+02:00"},
	}
	for i, w := range want {
		require.Equal(t, w.utc, got.Instants[i].UTC.Format(time.RFC3339), "instant %d", i)
		require.Equal(t, w.local, got.Instants[i].Local, "instant %d", i)
	}
	var n int
	require.NoError(t, e.store.DB().Get(&n, "SELECT COUNT(*) FROM events"))
	require.Zero(t, n, "preview creates nothing")
}

func TestSchedulePreviewDefaultsAndErrors(t *testing.T) {
	e := newEnv(t, repositorytest.SQLite)
	res := e.do("POST", "/schedules/preview", e.master, map[string]any{"cron": "*/5 * * * *"})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	var got previewAnswer
	res.json(t, &got)
	require.Len(t, got.Instants, 10, "ten instants by default")
	require.True(t, got.Instants[0].UTC.After(time.Now()))

	for _, tc := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"rrule": "FREQ=SOMETIMES"}, "rrule"},
		{map[string]any{"rrule": "FREQ=DAILY", "count": 1001}, "count"},
		{map[string]any{"rrule": "FREQ=DAILY", "timezone": "Nowhere/Land"}, "timezone"},
		{map[string]any{"schedule": map[string]any{"frequency": "daily", "by_month_day": []int{40}}}, "schedule.by_month_day"},
		{map[string]any{"rrule": "FREQ=DAILY", "after": "yesterday"}, "after"},
		{map[string]any{"rrule": "FREQ=DAILY", "webhook": "https://example.com"}, "webhook"},
	} {
		res := e.do("POST", "/schedules/preview", e.master, tc.body)
		require.Equal(t, http.StatusBadRequest, res.Status, "%v: %s", tc.body, res.Body)
		require.Equal(t, tc.field, res.object(t)["field"], "%v: %s", tc.body, res.Body)
	}
}

func TestEventPreview(t *testing.T) {
	e := newEnv(t, repositorytest.SQLite)
	body := eventBody("a")
	body["start_time"] = "2031-01-06T09:00:00Z" // a Monday
	body["schedule"] = map[string]any{"frequency": "weekly", "by_day": []string{"MO", "WE"}}
	ev := e.createEvent(e.master, body)
	res := e.do("GET", "/events/"+ev["id"].(string)+"/preview?count=3&after=2031-01-06T09:00:00Z", e.master, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	var got previewAnswer
	res.json(t, &got)
	require.Len(t, got.Instants, 3)
	require.Equal(t, "2031-01-08T09:00:00Z", got.Instants[0].UTC.Format(time.RFC3339), "strictly after `after`")
	require.Equal(t, "2031-01-13T09:00:00Z", got.Instants[1].UTC.Format(time.RFC3339))

	outside := e.mint("read", []string{"b"})
	require.Equal(t, http.StatusNotFound, e.do("GET", "/events/"+ev["id"].(string)+"/preview", outside, nil).Status)
}
