package api

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/repository/repositorytest"
)

// Each hostile input found by trying the API adversarially gets a 400 whose
// field names the culprit, on both backends, and writes nothing.
func TestHostileInputIsA400NamingTheField(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			e := newEnv(t, b.Open)
			ev := e.createEvent(e.master, map[string]any{"name": "daily", "start_time": inAnHour(),
				"rrule": "FREQ=DAILY", "webhook": "http://127.0.0.1:9999/h", "tags": []string{"a"}})
			id := ev["id"].(string)
			soon := inAnHour()
			create := func(extra string) string {
				return `{"name":"n","start_time":"` + soon + `","webhook":"http://127.0.0.1:9999/h","tags":["a"]` + extra + `}`
			}
			apicall := func(body string) string {
				return `{"name":"n","start_time":"` + soon + `","tags":["a"],"action":{"type":"apicall","params":` +
					`{"method":"POST","url":"http://127.0.0.1:9999/x","body":` + body + `}}}`
			}
			many := func(n int) []string {
				out := make([]string, n)
				for i := range out {
					out[i] = fmt.Sprintf("t%d", i)
				}
				return out
			}
			cursor := func(text string) string { return base64.RawURLEncoding.EncodeToString([]byte(text)) }
			tests := []struct {
				name, method, path string
				body               any
				headers            []string
				field              string
			}{
				{"NUL in name", "POST", "/events", create(`,"name":"a\u0000b"`), nil, "name"},
				{"NUL in description", "POST", "/events", create(`,"description":"\u0000"`), nil, "description"},
				{"NUL in name on update", "PUT", "/events/" + id, `{"name":"x\u0000"}`, nil, "name"},
				{"trace_propagation not a boolean", "POST", "/events", create(`,"trace_propagation":"no"`), nil, "trace_propagation"},
				{"NUL in description on update", "PUT", "/events/" + id, `{"description":"\u0000"}`, nil, "description"},
				{"invalid UTF-8 in metadata", "POST", "/events", create(`,"metadata":{"k":"` + "\xff\xfe" + `"}`), nil, "metadata.k"},
				{"lone surrogate in metadata", "POST", "/events", create(`,"metadata":{"k":["ok","\ud800"]}`), nil, "metadata.k[1]"},
				{"NUL in metadata on update", "PUT", "/events/" + id, `{"metadata":{"a":{"b":"\u0000"}}}`, nil, "metadata.a.b"},
				{"invalid UTF-8 in apicall body", "POST", "/events", apicall(`"` + "\xc3\x28" + `"`), nil, "action.params.body"},
				{"NUL in apicall body", "POST", "/events", apicall(`"\u0000"`), nil, "action.params.body"},
				{"Idempotency-Key not UTF-8", "POST", "/events", create(""), []string{"Idempotency-Key", "k\xff"}, "Idempotency-Key"},
				{"Idempotency-Key not UTF-8 on trigger", "POST", "/events/" + id + "/trigger", nil,
					[]string{"Idempotency-Key", "\xc3\x28"}, "Idempotency-Key"},
				{"70,000 tags to retry", "POST", "/occurrences/retry", map[string]any{"tags": many(70_000)}, nil, "tags"},
				{"70,000 statuses to retry", "POST", "/occurrences/retry",
					map[string]any{"status": strings.Repeat("failed,", 70_000)}, nil, "status"},
				{"1,000 tags in a listing", "GET", "/occurrences?tags=" + strings.Join(many(1000), ","), nil, nil, "tags"},
				{"NUL in a query tag", "GET", "/occurrences?tags=%00", nil, nil, "tags"},
				{"invalid UTF-8 in a query tag", "GET", "/events?tags=%ff", nil, nil, "tags"},
				{"invalid UTF-8 in event_id", "GET", "/occurrences?event_id=%ff", nil, nil, "event_id"},
				{"NUL in a path id", "GET", "/events/%00", nil, nil, "id"},
				{"NUL in an occurrence id", "GET", "/occurrences/%00/attempts", nil, nil, "id"},
				{"preview start_time in year 1", "POST", "/schedules/preview",
					`{"start_time":"0001-01-01T00:00:00Z","rrule":"FREQ=DAILY"}`, nil, "start_time"},
				{"schedule.interval 0", "POST", "/events",
					create(`,"schedule":{"frequency":"daily","interval":0}`), nil, "schedule.interval"},
				{"cursor out of range", "GET", "/occurrences?cursor=" + cursor("9223372036854775807|"+id), nil, nil, "cursor"},
				{"cursor with a non-uuid id", "GET", "/events?cursor=" + cursor("1700000000000000|x'; --"), nil, nil, "cursor"},
				{"whsec_ secret not base64", "POST", "/events", create(`,"hmac_secret":"whsec_!!!notbase64"`), nil, "hmac_secret"},
			}
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					before := countRows(t, e)
					res := e.do(tc.method, tc.path, e.master, tc.body, tc.headers...)
					require.Equal(t, http.StatusBadRequest, res.Status, "%s", res.Body)
					var body struct{ Error, Field string }
					res.json(t, &body)
					require.Equal(t, tc.field, body.Field, "error %q", body.Error)
					require.True(t, strings.HasPrefix(body.Error, tc.field+": "), "error %q names its field", body.Error)
					require.Equal(t, before, countRows(t, e), "nothing written")
				})
			}
			require.Equal(t, "daily", e.do("GET", "/events/"+id, e.master, nil).object(t)["name"], "the event is unchanged")

			// Previews far from DTSTART used to exhaust the iteration budget
			// (a time.Duration overflow in re-anchoring) and answer 500.
			for body, want := range map[string]string{
				`{"start_time":"2026-12-01T00:00:00Z","rrule":"FREQ=SECONDLY","after":"9999-12-31T23:59:00Z","count":1000}`:        "9999-12-31T23:59:01Z",
				`{"start_time":"2026-12-01T00:00:00Z","rrule":"FREQ=MINUTELY;BYSETPOS=1;BYDAY=MO","after":"5000-01-01T00:00:00Z"}`: "5000-01-06T00:00:00Z",
			} {
				res := e.do("POST", "/schedules/preview", e.master, body)
				require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
				var page struct{ Instants []struct{ UTC string } }
				res.json(t, &page)
				require.NotEmpty(t, page.Instants, body)
				require.Equal(t, want, page.Instants[0].UTC, body)
			}

			// A series with nothing left before year 9999 answers an empty page
			// that says why, not a 500 and not a silent []. The last second of
			// the year is after the daily instant whatever time of day the test
			// runs.
			res := e.do("GET", "/events/"+id+"/preview?after=9999-12-31T23:59:59Z&count=1000", e.master, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			page := res.object(t)
			require.Empty(t, page["instants"])
			require.Contains(t, page["reason"], "beyond year 9999")
		})
	}
}

// A preview that would examine more candidates than the recurrence budget
// allows is the client's problem: 400 naming after, not a 500.
func TestPreviewOverIterationBudgetIs400(t *testing.T) {
	e := newEnv(t, repositorytest.SQLite, withOptions(func(o *Options) { o.Recurrence.MaxIterations = 100 }))
	// COUNT pins the iteration to DTSTART, so reaching "after" costs a
	// candidate per second since then.
	res := e.do("POST", "/schedules/preview", e.master,
		`{"start_time":"2026-12-01T00:00:00Z","rrule":"FREQ=SECONDLY;COUNT=50000","after":"2026-12-01T01:00:00Z"}`)
	require.Equal(t, http.StatusBadRequest, res.Status, "%s", res.Body)
	var body struct{ Error, Field string }
	res.json(t, &body)
	require.Equal(t, "after", body.Field, body.Error)
}
