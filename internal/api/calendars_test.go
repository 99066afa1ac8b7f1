package api

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// calendarBody is a valid calendar: weekends in Prague, Christmas and a
// summer break.
func calendarBody(tags ...string) map[string]any {
	if tags == nil {
		tags = []string{}
	}
	return map[string]any{"name": "holidays", "timezone": "Europe/Prague",
		"dates": []string{"2031-12-26", "2031-12-24"}, "ranges": []map[string]string{{"from": "2031-07-01", "to": "2031-07-14"}},
		"rrules": []string{"FREQ=WEEKLY;BYDAY=SA,SU", "FREQ=YEARLY;BYMONTH=12;BYMONTHDAY=25"}, "tags": tags}
}

// createCalendar posts a calendar and returns its decoded answer.
func (e *env) createCalendar(token string, body map[string]any) map[string]any {
	e.t.Helper()
	res := e.do("POST", "/calendars", token, body)
	require.Equal(e.t, http.StatusCreated, res.Status, "create calendar: %s", res.Body)
	return res.object(e.t)
}

func TestCalendarCRUD(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			res := e.do("POST", "/calendars", e.master, calendarBody("team-a"))
			require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
			cal := res.object(t)
			id := cal["id"].(string)
			require.Equal(t, "/calendars/"+id, res.Header.Get("Location"))
			require.Equal(t, `"`+id+`-v1"`, res.Header.Get("ETag"))
			require.Equal(t, "Europe/Prague", cal["timezone"])
			require.Equal(t, []any{"2031-12-24", "2031-12-26"}, cal["dates"], "dates come back sorted")
			require.Equal(t, []any{map[string]any{"from": "2031-07-01", "to": "2031-07-14"}}, cal["ranges"])
			require.Equal(t, false, cal["replan_pending"])
			require.Equal(t, "master", cal["created_by"])

			got := e.do("GET", "/calendars/"+id, e.master, nil)
			require.Equal(t, http.StatusOK, got.Status, "%s", got.Body)
			require.Equal(t, cal, got.object(t))
			require.Equal(t, `"`+id+`-v1"`, got.Header.Get("ETag"))

			// A rename keeps the days: nothing to re-plan.
			body := calendarBody("team-a")
			body["name"], body["id"], body["version"] = "renamed", "sent back", 1
			res = e.do("PUT", "/calendars/"+id, e.master, body, "If-Match", `"`+id+`-v1"`)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			renamed := res.object(t)
			require.Equal(t, "renamed", renamed["name"])
			require.Equal(t, float64(2), renamed["version"])
			require.Equal(t, false, renamed["replan_pending"])

			// New days: the events using it will be re-planned.
			body["dates"] = []string{"2031-05-01"}
			res = e.do("PUT", "/calendars/"+id, e.master, body, "If-Match", `"`+id+`-v1"`)
			require.Equal(t, http.StatusPreconditionFailed, res.Status, "stale If-Match: %s", res.Body)
			res = e.do("PUT", "/calendars/"+id, e.master, body)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			edited := res.object(t)
			require.Equal(t, []any{"2031-05-01"}, edited["dates"])
			require.Equal(t, true, edited["replan_pending"])
			status := e.do("GET", "/status", "", nil).object(t)
			require.Equal(t, float64(1), status["replans"].(map[string]any)["pending_calendars"])

			second := e.createCalendar(e.master, calendarBody("team-b"))
			res = e.do("GET", "/calendars?limit=1", e.master, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			var page []map[string]any
			res.json(t, &page)
			require.Len(t, page, 1)
			require.Equal(t, second["id"], page[0]["id"], "newest first")
			next := strings.TrimSuffix(strings.TrimPrefix(strings.Split(res.Header.Get("Link"), ";")[0], "<"), ">")
			res = e.do("GET", next, e.master, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			res.json(t, &page)
			require.Len(t, page, 1)
			require.Equal(t, id, page[0]["id"])
			res = e.do("GET", "/calendars?tags=team-b", e.master, nil)
			res.json(t, &page)
			require.Len(t, page, 1)
			require.Equal(t, second["id"], page[0]["id"])

			res = e.do("DELETE", "/calendars/"+id, e.master, nil, "If-Match", `"`+id+`-v2"`)
			require.Equal(t, http.StatusPreconditionFailed, res.Status, "%s", res.Body)
			res = e.do("DELETE", "/calendars/"+id, e.master, nil)
			require.Equal(t, http.StatusNoContent, res.Status, "%s", res.Body)
			require.Equal(t, http.StatusNotFound, e.do("GET", "/calendars/"+id, e.master, nil).Status)
			require.Equal(t, http.StatusNotFound, e.do("DELETE", "/calendars/"+id, e.master, nil).Status)
			require.Equal(t, http.StatusNotFound, e.do("GET", "/calendars/not-a-uuid", e.master, nil).Status)
		})
	}
}

func TestCalendarInUseIsNotDeleted(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			id := e.createCalendar(e.master, calendarBody("team-a"))["id"].(string)
			ev := eventBody("team-a")
			ev["calendars"] = []map[string]string{{"id": id, "policy": "skip"}}
			evID := e.createEvent(e.master, ev)["id"].(string)

			res := e.do("DELETE", "/calendars/"+id, e.master, nil)
			require.Equal(t, http.StatusConflict, res.Status, "%s", res.Body)
			require.Contains(t, res.object(t)["error"], "used by 1 event")

			require.Equal(t, http.StatusNoContent, e.do("DELETE", "/events/"+evID, e.master, nil).Status)
			res = e.do("DELETE", "/calendars/"+id, e.master, nil)
			require.Equal(t, http.StatusNoContent, res.Status, "a deleted event no longer holds it: %s", res.Body)
		})
	}
}

// TestEventsFilterByCalendar: GET /events?calendar_id= lists the live
// events that honour the calendar, within the token's scope; a bad id is a
// 400 naming the field.
func TestEventsFilterByCalendar(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			cal := e.createCalendar(e.master, calendarBody("team-a", "team-b"))["id"].(string)
			uses := func(tag string) string {
				ev := eventBody(tag)
				ev["calendars"] = []map[string]string{{"id": cal, "policy": "skip"}}
				return e.createEvent(e.master, ev)["id"].(string)
			}
			a, bEv := uses("team-a"), uses("team-b")
			e.createEvent(e.master, eventBody("team-a")) // uses no calendar
			ids := func(token string) []string {
				res := e.do("GET", "/events?calendar_id="+cal, token, nil)
				require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
				var list []struct {
					ID string `json:"id"`
				}
				res.json(t, &list)
				var out []string
				for _, ev := range list {
					out = append(out, ev.ID)
				}
				return out
			}
			require.ElementsMatch(t, []string{a, bEv}, ids(e.master))
			require.Equal(t, []string{a}, ids(e.mint("read", []string{"team-a"})), "another tenant's event stays hidden")
			require.Equal(t, http.StatusNoContent, e.do("DELETE", "/events/"+a, e.master, nil).Status)
			require.Equal(t, []string{bEv}, ids(e.master), "a deleted event no longer uses it")
			res := e.do("GET", "/events?calendar_id=nope", e.master, nil)
			require.Equal(t, http.StatusBadRequest, res.Status)
			require.Contains(t, string(res.Body), "calendar_id")
		})
	}
}

// TestEventsNameOnlyCalendarsTheyCanRead: an unknown calendar and another
// tenant's answer alike, 400 naming the reference; nothing is written.
func TestEventsNameOnlyCalendarsTheyCanRead(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			theirs := e.createCalendar(e.master, calendarBody("team-b"))["id"].(string)
			ours := e.createCalendar(e.master, calendarBody("team-a"))["id"].(string)
			tok := e.mint("write", []string{"team-a"})
			for _, id := range []string{theirs, "6f1c2a8e-0000-4000-8000-000000000000"} {
				body := eventBody("team-a")
				body["calendars"] = []map[string]string{{"id": id}}
				res := e.do("POST", "/events", tok, body)
				require.Equal(t, http.StatusBadRequest, res.Status, "%s", res.Body)
				require.Equal(t, "calendars[0].id", res.object(t)["field"])
			}
			body := eventBody("team-a")
			body["calendars"] = []map[string]string{{"id": ours, "policy": "roll_backward"}}
			ev := e.createEvent(tok, body)
			require.Equal(t, []any{map[string]any{"id": ours, "policy": "roll_backward"}}, ev["calendars"])
			res := e.do("PUT", "/events/"+ev["id"].(string), tok, map[string]any{"calendars": []map[string]string{{"id": theirs}}})
			require.Equal(t, http.StatusBadRequest, res.Status, "%s", res.Body)
			res = e.do("DELETE", "/calendars/"+ours, e.master, nil)
			require.Equal(t, http.StatusConflict, res.Status, "the event uses it: %s", res.Body)
			res = e.do("PUT", "/events/"+ev["id"].(string), tok, map[string]any{"calendars": nil})
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			require.Equal(t, http.StatusNoContent, e.do("DELETE", "/calendars/"+ours, e.master, nil).Status,
				"no event uses it any more")
		})
	}
}

func TestCalendarValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t, backends()[0].Open)
	with := func(k string, v any) map[string]any {
		b := calendarBody()
		b[k] = v
		return b
	}
	tests := []struct {
		name  string
		body  any
		field string
	}{
		{"not an object", `["x"]`, "body"},
		{"unknown member", with("colour", "red"), "colour"},
		{"no name", with("name", ""), "name"},
		{"bad zone", with("timezone", "Mars/Olympus"), "timezone"},
		{"bad date", with("dates", []string{"2031-02-30"}), "dates[0]"},
		{"reversed range", with("ranges", []map[string]string{{"from": "2031-02-02", "to": "2031-02-01"}}), "ranges[0].to"},
		{"range member", with("ranges", []map[string]any{{"from": "2031-02-02", "to": "2031-02-03", "x": 1}}), "ranges"},
		{"bad rule", with("rrules", []string{"FREQ=SOMETIMES"}), "rrules[0]"},
		{"DTSTART", with("rrules", []string{"DTSTART:20310101T000000Z\nRRULE:FREQ=DAILY"}), "rrules[0]"},
		{"bad tag", with("tags", []string{"a,b"}), "tags"},
		{"NUL", `{"name":"a\u0000b"}`, "name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := e.withT(t)
			res := e.do("POST", "/calendars", e.master, tt.body)
			require.Equal(t, http.StatusBadRequest, res.Status, "%s", res.Body)
			require.Equal(t, tt.field, res.object(t)["field"], "%s", res.Body)
		})
	}
	id := e.createCalendar(e.master, calendarBody())["id"].(string)
	res := e.do("PUT", "/calendars/"+id, e.master, map[string]any{"dates": []string{"2031-01-01"}})
	require.Equal(t, http.StatusBadRequest, res.Status, "a PUT replaces the calendar: name is required: %s", res.Body)
	require.Equal(t, "name", res.object(t)["field"])
}

func TestCalendarScope(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			mine := e.createCalendar(e.master, calendarBody("team-a"))["id"].(string)
			theirs := e.createCalendar(e.master, calendarBody("team-b"))["id"].(string)
			shared := e.createCalendar(e.master, calendarBody("team-a", "team-b"))["id"].(string)
			writer := e.mint("write", []string{"team-a"})
			reader := e.mint("read", []string{"team-a"})

			res := e.do("GET", "/calendars", writer, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			var list []map[string]any
			res.json(t, &list)
			var ids []string
			for _, c := range list {
				ids = append(ids, c["id"].(string))
			}
			require.ElementsMatch(t, []string{mine, shared}, ids)

			for _, method := range []string{"GET", "PUT", "DELETE"} {
				var body any
				if method == "PUT" {
					body = calendarBody("team-a")
				}
				res := e.do(method, "/calendars/"+theirs, writer, body)
				require.Equal(t, http.StatusNotFound, res.Status, "%s another tenant's calendar: %s", method, res.Body)
			}
			res = e.do("PUT", "/calendars/"+shared, writer, calendarBody("team-a"))
			require.Equal(t, http.StatusForbidden, res.Status, "a calendar shared with another tenant: %s", res.Body)
			res = e.do("DELETE", "/calendars/"+shared, writer, nil)
			require.Equal(t, http.StatusForbidden, res.Status, "%s", res.Body)
			res = e.do("PUT", "/calendars/"+mine, writer, calendarBody("team-b"))
			require.Equal(t, http.StatusForbidden, res.Status, "moving it out of the scope: %s", res.Body)
			res = e.do("POST", "/calendars", writer, calendarBody())
			require.Equal(t, http.StatusForbidden, res.Status, "a scoped token's calendar needs its tags: %s", res.Body)
			res = e.do("POST", "/calendars", reader, calendarBody("team-a"))
			require.Equal(t, http.StatusForbidden, res.Status, "%s", res.Body)
			require.Equal(t, http.StatusOK, e.do("GET", "/calendars/"+mine, reader, nil).Status)

			created := e.createCalendar(writer, calendarBody("team-a"))
			require.Equal(t, "user-write", created["created_by"])
			res = e.do("PUT", "/calendars/"+mine, writer, calendarBody("team-a"))
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			require.Equal(t, http.StatusNoContent, e.do("DELETE", "/calendars/"+mine, writer, nil).Status)
		})
	}
}

// occurrenceRows lists an event's rows as the API shows them.
type occurrenceRow struct {
	ScheduledAt         time.Time  `json:"scheduled_at"`
	Status              string     `json:"status"`
	Reason              *string    `json:"reason"`
	OriginalScheduledAt *time.Time `json:"original_scheduled_at"`
}

func (e *env) occurrenceRows(eventID string) []occurrenceRow {
	e.t.Helper()
	res := e.do("GET", "/events/"+eventID+"/occurrences?order=scheduled_at", e.master, nil)
	require.Equal(e.t, http.StatusOK, res.Status, "%s", res.Body)
	var rows []occurrenceRow
	res.json(e.t, &rows)
	return rows
}

// rowAt finds the row at an instant; ok is false when there is none.
func rowAt(rows []occurrenceRow, at time.Time) (occurrenceRow, bool) {
	for _, r := range rows {
		if r.ScheduledAt.Equal(at) {
			return r, true
		}
	}
	return occurrenceRow{}, false
}

// TestCalendarSkipsRollsAndReplans: an event honouring a calendar skips or
// rolls the instants on its days, and editing the calendar re-plans the
// events that use it once the re-planner runs.
func TestCalendarSkipsRollsAndReplans(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			// A weekly instant two hours from now, on a day the calendar
			// blocks (UTC dates, so the instant's date is exact).
			start := time.Now().UTC().Add(2 * time.Hour).Truncate(time.Second)
			day := start.Format(time.DateOnly)
			calBody := map[string]any{"name": "closed", "dates": []string{day}, "tags": []string{"team-a"}}
			calID := e.createCalendar(e.master, calBody)["id"].(string)
			event := func(policy string) string {
				body := eventBody("team-a")
				body["start_time"], body["rrule"] = start.Format(time.RFC3339), "FREQ=WEEKLY"
				body["calendars"] = []map[string]string{{"id": calID, "policy": policy}}
				return e.createEvent(e.master, body)["id"].(string)
			}
			skipped, rolled := event("skip"), event("roll_forward")

			row, ok := rowAt(e.occurrenceRows(skipped), start)
			require.True(t, ok, "the blocked instant has a row")
			require.Equal(t, "skipped", row.Status)
			require.Equal(t, "calendar", *row.Reason)

			next := start.AddDate(0, 0, 1)
			rows := e.occurrenceRows(rolled)
			row, ok = rowAt(rows, next)
			require.True(t, ok, "rolled to the next day at the same time: %+v", rows)
			require.Equal(t, "pending", row.Status)
			require.NotNil(t, row.OriginalScheduledAt)
			require.True(t, row.OriginalScheduledAt.Equal(start), "original_scheduled_at %v", row.OriginalScheduledAt)
			_, ok = rowAt(rows, start)
			require.False(t, ok, "nothing fires on the blocked day: %+v", rows)

			// Unknown calendars are refused when an event plans.
			body := eventBody("team-a")
			body["calendars"] = []map[string]string{{"id": "00000000-0000-4000-8000-000000000000"}}
			res := e.do("POST", "/events", e.master, body)
			require.Equal(t, http.StatusBadRequest, res.Status, "%s", res.Body)
			require.Equal(t, "calendars[0].id", res.object(t)["field"])

			// The calendar opens the day: both events fire at the instant
			// again once the re-planner has run.
			calBody["dates"] = []string{start.AddDate(0, 0, 3).Format(time.DateOnly)}
			res = e.do("PUT", "/calendars/"+calID, e.master, calBody)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			require.Equal(t, true, res.object(t)["replan_pending"])
			row, _ = rowAt(e.occurrenceRows(skipped), start)
			require.Equal(t, "skipped", row.Status, "nothing changes before the re-planner runs")

			ctx := context.Background()
			for range 10 { // bounded: each run advances at most EventsPerRun events
				n, err := e.store.PendingReplans(ctx)
				require.NoError(t, err)
				if n == 0 {
					break
				}
				_, err = e.replanner.RunOnce(ctx)
				require.NoError(t, err)
			}
			for _, id := range []string{skipped, rolled} {
				rows := e.occurrenceRows(id)
				row, ok := rowAt(rows, start)
				require.True(t, ok, "event %s: %+v", id, rows)
				require.Equal(t, "pending", row.Status, "event %s fires at the instant", id)
			}
			var history struct {
				Data []struct {
					Action  string `json:"action"`
					Channel string `json:"channel"`
				} `json:"data"`
			}
			e.do("GET", "/events/"+skipped+"/history", e.master, nil).json(t, &history)
			require.NotEmpty(t, history.Data)
			last := history.Data[len(history.Data)-1]
			require.Equal(t, "calendar_replan", last.Action, "the re-plan is in the event's history")
			require.Equal(t, "scheduler", last.Channel)
			row, ok = rowAt(e.occurrenceRows(rolled), next)
			require.True(t, ok)
			require.Equal(t, "cancelled", row.Status, "the rolled row is withdrawn")
			require.Equal(t, "rule_changed", *row.Reason)

			cal := e.do("GET", "/calendars/"+calID, e.master, nil).object(t)
			require.Equal(t, false, cal["replan_pending"])
			status := e.do("GET", "/status", "", nil).object(t)
			replans := status["replans"].(map[string]any)
			require.Equal(t, float64(0), replans["pending_calendars"])
			require.Equal(t, float64(2), replans["events_replanned"])
		})
	}
}

// TestSchedulePreviewNamesOnlyCalendarsItCanRead: POST /schedules/preview
// applies event create's read rule to calendars, so another tenant's
// calendar answers exactly like an unknown one and its days never show.
func TestSchedulePreviewNamesOnlyCalendarsItCanRead(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			theirs := e.createCalendar(e.master, calendarBody("team-b"))["id"].(string)
			ours := e.createCalendar(e.master, calendarBody("team-a"))["id"].(string)
			tok := e.mint("read", []string{"team-a"})
			preview := func(id string) response {
				return e.do("POST", "/schedules/preview", tok, map[string]any{
					"start_time": "2031-12-20T09:00:00Z", "rrule": "FREQ=DAILY", "count": 7,
					"after": "2031-12-20T00:00:00Z", "calendars": []map[string]string{{"id": id}}})
			}
			var answers []map[string]any
			for _, id := range []string{theirs, "6f1c2a8e-0000-4000-8000-000000000000"} {
				res := preview(id)
				require.Equal(t, http.StatusBadRequest, res.Status, "%s", res.Body)
				got := res.object(t)
				require.Equal(t, "calendars[0].id", got["field"], "%s", res.Body)
				got["error"] = strings.ReplaceAll(got["error"].(string), id, "ID")
				answers = append(answers, got)
			}
			require.Equal(t, answers[0], answers[1], "another tenant's calendar answers like an unknown one")
			res := preview(ours)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			require.Contains(t, string(res.Body), `"reason":"calendar"`, "its own calendar applies")
		})
	}
}

// TestIDFiltersAnswerAlikeForUnknownAndForeign: a filter naming another
// tenant's event or endpoint answers exactly as one naming an unknown id.
func TestIDFiltersAnswerAlikeForUnknownAndForeign(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			ep := e.createEndpoint(e.master, endpointBody("team-b"))["id"].(string)
			body := eventBody("team-b")
			delete(body, "webhook")
			body["action"] = map[string]any{"type": "webhook", "params": map[string]any{"endpoint_id": ep}}
			ev := e.createEvent(e.master, body)["id"].(string)
			require.NotEmpty(t, e.occurrenceRows(ev), "the foreign event has rows to leak")
			tok := e.mint("write", []string{"team-a"})
			unknown := "6f1c2a8e-0000-4000-8000-000000000000"
			for _, c := range []struct{ method, path string }{
				{"GET", "/events?endpoint_id="}, {"GET", "/occurrences?event_id="},
				{"GET", "/occurrences?archived=true&event_id="}, {"POST", "/occurrences/retry"},
			} {
				ask := func(id string) response {
					if c.method == "POST" {
						return e.do(c.method, c.path, tok, map[string]any{"event_id": id})
					}
					return e.do(c.method, c.path+id, tok, nil)
				}
				foreign, none := ask(map[bool]string{true: ep, false: ev}[c.path == "/events?endpoint_id="]), ask(unknown)
				require.Equal(t, none.Status, foreign.Status, "%s %s: %s", c.method, c.path, foreign.Body)
				require.Equal(t, string(none.Body), string(foreign.Body), "%s %s", c.method, c.path)
			}
		})
	}
}
