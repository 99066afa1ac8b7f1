package api

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Every instant a client gives (start_time, until, to, at, after, since)
// accepts the forms start_time accepts, read in the event's zone where one
// applies, and a bad one is a 400 naming its field — not a Go parse error
// naming "body".
func TestEveryInstantFieldTakesTheFormsOfStartTime(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			prague, err := time.LoadLocation("Europe/Prague")
			require.NoError(t, err)
			ev := e.createEvent(e.master, map[string]any{"name": "standup", "start_time": "tomorrow at 9am",
				"timezone": "Europe/Prague", "rrule": "FREQ=DAILY", "webhook": "http://127.0.0.1:9999/h"})
			id := ev["id"].(string)
			first, err := time.Parse(time.RFC3339, ev["start_time"].(string))
			require.NoError(t, err)
			require.Equal(t, 9, first.In(prague).Hour())

			bad := func(method, path string, body any, field string) {
				t.Helper()
				res := e.do(method, path, e.master, body)
				require.Equal(t, http.StatusBadRequest, res.Status, "%s %s %v: %s", method, path, body, res.Body)
				obj := res.object(t)
				require.Equal(t, field, obj["field"], "%s", res.Body)
				require.NotContains(t, obj["error"], "parsing time", "no Go parse error")
			}

			// A local time without offset is read in the event's zone: exactly
			// its first instant (in UTC it would plan nothing). (Not "tomorrow
			// at 9am" again: midnight in Prague may pass since the create.)
			local := first.In(prague).Format("2006-01-02")
			res := e.do("POST", "/events/"+id+"/exceptions", e.master,
				map[string]any{"at": local + " 09:00", "action": "move", "to": local + "T10:30"})
			require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
			var ex struct{ At, To time.Time }
			res.json(t, &ex)
			require.True(t, ex.At.Equal(first), "at %s, want %s", ex.At, first)
			require.Equal(t, first.Add(90*time.Minute), ex.To.UTC())
			bad("POST", "/events/"+id+"/exceptions", map[string]any{"at": "someday", "action": "skip"}, "at")
			bad("POST", "/events/"+id+"/exceptions", map[string]any{"at": local + " 09:00", "action": "move", "to": "later"}, "to")
			res = e.do("DELETE", "/events/"+id+"/exceptions/"+url.PathEscape(local+" 09:00"), e.master, nil)
			require.Equal(t, http.StatusNoContent, res.Status, "%s", res.Body)

			// Move one occurrence to a relative instant. Its event starts
			// within the hour: "tomorrow at 9am" Prague can lie beyond the
			// planning lookahead (before 09:00 Prague), leaving nothing planned.
			soon := e.createEvent(e.master, map[string]any{"name": "soon", "start_time": "in 1 hour",
				"timezone": "Europe/Prague", "rrule": "FREQ=DAILY", "webhook": "http://127.0.0.1:9999/h"})
			var occs []map[string]any
			e.do("GET", "/events/"+soon["id"].(string)+"/occurrences?order=scheduled_at", e.master, nil).json(t, &occs)
			require.NotEmpty(t, occs)
			occ := occs[0]["id"].(string)
			before := time.Now()
			res = e.do("POST", "/occurrences/"+occ+"/move", e.master, map[string]any{"to": "in 3 hours"})
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			moved, err := time.Parse(time.RFC3339Nano, res.object(t)["scheduled_at"].(string))
			require.NoError(t, err)
			require.WithinRange(t, moved, before.Add(3*time.Hour), time.Now().Add(3*time.Hour+time.Second))
			bad("POST", "/occurrences/"+occ+"/move", map[string]any{"to": "whenever"}, "to")

			// Pause until a relative instant (the issue's own example).
			before = time.Now()
			res = e.do("POST", "/events/"+id+"/pause", e.master, map[string]any{"until": "in 2 hours", "reason": "deploy"})
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			until, err := time.Parse(time.RFC3339Nano, res.object(t)["paused_until"].(string))
			require.NoError(t, err)
			require.WithinRange(t, until, before.Add(2*time.Hour), time.Now().Add(2*time.Hour+time.Second))
			bad("POST", "/events/"+id+"/pause", map[string]any{"until": "when pigs fly"}, "until")
			bad("POST", "/events/"+id+"/pause", map[string]any{"until": 12}, "until")
			bad("POST", "/events/"+id+"/pause", map[string]any{"until": "2020-01-01T00:00:00Z"}, "until")

			// Filters and previews.
			res = e.do("GET", "/events/"+id+"/occurrences?from="+url.QueryEscape("in 1 minute")+"&to="+
				url.QueryEscape("in 30 days"), e.master, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			bad("GET", "/occurrences?since=soon", nil, "since")
			res = e.do("GET", "/stats?since="+time.Now().UTC().Format("2006-01-02")+"&until="+url.QueryEscape("in 1 hour"), e.master, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			res = e.do("POST", "/occurrences/retry", e.master, map[string]any{"since": "now", "until": "in 1 hour"})
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			bad("POST", "/occurrences/retry", map[string]any{"until": "eventually"}, "until")
			res = e.do("GET", "/events/"+id+"/preview?count=1&after="+url.QueryEscape("in 2 days"), e.master, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			res = e.do("POST", "/schedules/preview", e.master, map[string]any{"start_time": "tomorrow at 9am",
				"timezone": "Europe/Prague", "rrule": "FREQ=DAILY", "count": 1, "after": "tomorrow at 9am"})
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			require.True(t, strings.Contains(string(res.Body), first.Add(24*time.Hour).Format("2006-01-02T15:04:05")),
				"after tomorrow at 9am Prague comes the day after: %s", res.Body)
			bad("POST", "/schedules/preview", map[string]any{"rrule": "FREQ=DAILY", "start_time": "tomorrow", "after": "nope"}, "after")
		})
	}
}
