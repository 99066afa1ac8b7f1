package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
)

// batchAnswer is the answer of POST /events/batch.
type batchAnswer struct {
	Results []struct {
		Index  int            `json:"index"`
		Status int            `json:"status"`
		Event  map[string]any `json:"event"`
		Error  string         `json:"error"`
		Field  string         `json:"field"`
	} `json:"results"`
}

// count counts rows of a table on the env's store.
func (e *env) count(table string) int {
	e.t.Helper()
	var n int
	require.NoError(e.t, e.store.DB().GetContext(context.Background(), &n, "SELECT COUNT(*) FROM "+table))
	return n
}

// occurrencesOf lists an event's occurrences as (instant, status) pairs.
func (e *env) occurrencesOf(id string) []string {
	e.t.Helper()
	rows, err := e.store.ListOccurrences(context.Background(), model.OccurrenceFilter{EventID: id,
		Unrestricted: true, Limit: 1000})
	require.NoError(e.t, err)
	out := make([]string, len(rows))
	for i, o := range rows {
		out[i] = o.ScheduledAt.UTC().Format(time.RFC3339Nano) + " " + string(o.Status)
	}
	return out
}

// A batch answers each event as its single create would — in input order,
// with the same status, error and field — writes the valid ones whole
// (history entry and first occurrences as a single create writes them)
// and nothing of the others.
func TestBatchCreateAnswersEachEventAsASingleCreate(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			token := e.mint("write", []string{"team"})
			calendar := e.createCalendar(e.master, calendarBody("team"))["id"].(string)

			hourly := eventBody("team")
			hourly["rrule"], hourly["name"] = "FREQ=HOURLY", "hourly"
			withCalendar := eventBody("team")
			withCalendar["rrule"], withCalendar["calendars"] = "FREQ=DAILY", []map[string]string{{"id": calendar}}
			unknownCalendar := eventBody("team")
			unknownCalendar["calendars"] = []map[string]string{{"id": "8c1f2c5e-8f6a-4c8e-9a43-3b5b7f0c9d11"}}
			past := eventBody("team")
			past["start_time"] = "2001-01-01T00:00:00Z"
			paused := eventBody("team")
			paused["status"] = "paused"
			unknownField := eventBody("team")
			unknownField["colour"] = "blue"
			badRule := eventBody("team")
			badRule["rrule"] = "FREQ=SOMETIMES"
			items := []any{eventBody("team"), past, 42, hourly, eventBody("elsewhere"), withCalendar,
				unknownCalendar, paused, unknownField, badRule, "not an event"}
			written := map[int]bool{0: true, 3: true, 5: true, 7: true}
			before := map[string]int{}
			for _, table := range []string{"events", "event_history", "occurrences", "event_tags", "event_calendars"} {
				before[table] = e.count(table)
			}

			res := e.do("POST", "/events/batch", token, map[string]any{"events": items})
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			var ans batchAnswer
			res.json(t, &ans)
			require.Len(t, ans.Results, len(items))
			ids := map[int]string{}
			for i, r := range ans.Results {
				require.Equal(t, i, r.Index, "results come in input order")
				if written[i] {
					require.Equal(t, http.StatusCreated, r.Status, "item %d: %+v", i, r)
					require.Empty(t, r.Error)
					ids[i] = r.Event["id"].(string)
					continue
				}
				require.Nil(t, r.Event, "item %d", i)
				single := e.do("POST", "/events", token, items[i])
				var want errorBody
				single.json(t, &want)
				require.Equal(t, single.Status, r.Status, "item %d: %s", i, single.Body)
				require.Equal(t, want.Error, r.Error, "item %d", i)
				require.Equal(t, want.Field, r.Field, "item %d", i)
			}
			require.Equal(t, "start_time", ans.Results[1].Field)
			require.Equal(t, http.StatusForbidden, ans.Results[4].Status)
			require.Equal(t, "tags", ans.Results[4].Field)
			require.Equal(t, "calendars[0].id", ans.Results[6].Field)

			// Exactly the valid events were written: nothing of the others.
			require.Equal(t, before["events"]+len(written), e.count("events"))
			require.Equal(t, before["event_history"]+len(written), e.count("event_history"))
			require.Equal(t, before["event_tags"]+len(written), e.count("event_tags"))
			require.Equal(t, before["event_calendars"]+1, e.count("event_calendars"))

			// Each written event reads, and has the history entry and first
			// occurrences its single create gives.
			for i := range written {
				got := e.do("GET", "/events/"+ids[i], token, nil)
				require.Equal(t, http.StatusOK, got.Status)
				require.Equal(t, "api", got.object(t)["created_via"])
				single := e.createEvent(token, items[i].(map[string]any))["id"].(string)
				require.Equal(t, e.occurrencesOf(single), e.occurrencesOf(ids[i]), "item %d", i)
				hb, hs := e.history(token, ids[i], 10, ""), e.history(token, single, 10, "")
				require.Equal(t, []string{"create"}, hb.actions())
				require.Equal(t, hs.Data[0].Subject, hb.Data[0].Subject)
				require.Equal(t, hs.Data[0].Channel, hb.Data[0].Channel)
				require.Equal(t, hs.Data[0].Changes, hb.Data[0].Changes, "item %d", i)
			}
			require.Len(t, e.occurrencesOf(ids[3]), 24, "an hourly event plans its first day")
			require.Empty(t, e.occurrencesOf(ids[7]), "a paused event plans nothing")
		})
	}
}

// An Idempotency-Key covers the whole batch: the same key and body replay
// the first answer without writing again; another body under it is a 409.
func TestBatchCreateIsIdempotent(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			past := eventBody()
			past["start_time"] = "yesterday"
			body := map[string]any{"events": []any{eventBody("a"), past, eventBody("b")}}
			first := e.do("POST", "/events/batch", e.master, body, "Idempotency-Key", "batch-1")
			require.Equal(t, http.StatusOK, first.Status, "%s", first.Body)
			require.Equal(t, 2, e.count("events"))

			again := e.do("POST", "/events/batch", e.master, body, "Idempotency-Key", "batch-1")
			require.Equal(t, http.StatusOK, again.Status)
			require.Equal(t, "true", again.Header.Get("Idempotent-Replayed"))
			require.JSONEq(t, string(first.Body), string(again.Body))
			require.Equal(t, 2, e.count("events"), "a replay writes nothing")
			require.Equal(t, 2, e.count("occurrences"))

			other := e.do("POST", "/events/batch", e.master, map[string]any{"events": []any{eventBody("c")}},
				"Idempotency-Key", "batch-1")
			require.Equal(t, http.StatusConflict, other.Status, "%s", other.Body)
			require.Equal(t, "Idempotency-Key", other.object(t)["field"])
			require.Equal(t, 2, e.count("events"))

			// Prefer: return=minimal answers the ids without the events.
			res := e.do("POST", "/events/batch", e.master, body, "Prefer", "return=minimal")
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			var ans struct {
				Results []map[string]any `json:"results"`
			}
			res.json(t, &ans)
			require.Len(t, ans.Results, 3)
			require.Equal(t, float64(201), ans.Results[0]["status"])
			require.NotContains(t, ans.Results[0], "event")
			id := ans.Results[0]["id"].(string)
			require.Equal(t, http.StatusOK, e.do("GET", "/events/"+id, e.master, nil).Status)
			require.Equal(t, "start_time", ans.Results[1]["field"])
			require.NotContains(t, ans.Results[1], "id")
			require.Equal(t, 4, e.count("events"))
		})
	}
}

// The batch itself must be an object with 1 to 1,000 events; its body may
// exceed the single create's limit, each event may not.
func TestBatchCreateRefusesBadBatches(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			many := make([]any, 1001)
			for i := range many {
				many[i] = eventBody()
			}
			for _, tc := range []struct {
				body  any
				field string
			}{
				{map[string]any{"events": many}, "events"},
				{map[string]any{"events": []any{}}, "events"},
				{map[string]any{}, "events"},
				{map[string]any{"events": "x"}, "events"},
				{map[string]any{"events": []any{eventBody()}, "extra": 1}, "extra"},
				{`[{"name": "x"}]`, "body"},
			} {
				res := e.do("POST", "/events/batch", e.master, tc.body)
				require.Equal(t, http.StatusBadRequest, res.Status, "%s", res.Body)
				require.Equal(t, tc.field, res.object(t)["field"], "%s", res.Body)
			}
			require.Zero(t, e.count("events"))

			// 1,000 events with 1.5 KiB of metadata each: 1.6 MB, over the
			// single create's 1 MiB body limit, fits the batch's.
			full := make([]any, 1000)
			pad := strings.Repeat("x", 1500)
			for i := range full {
				ev := eventBody("bulk")
				ev["name"], ev["metadata"] = fmt.Sprintf("event %d", i), map[string]string{"pad": pad}
				full[i] = ev
			}
			raw, err := json.Marshal(map[string]any{"events": full})
			require.NoError(t, err)
			require.Greater(t, len(raw), 1<<20)
			res := e.do("POST", "/events/batch", e.master, raw)
			require.Equal(t, http.StatusOK, res.Status, "%.300s", res.Body)
			var ans batchAnswer
			res.json(t, &ans)
			for i, r := range ans.Results {
				require.Equal(t, http.StatusCreated, r.Status, "item %d: %+v", i, r)
				require.Equal(t, fmt.Sprintf("event %d", i), r.Event["name"])
			}
			require.Equal(t, 1000, e.count("events"))
			require.Equal(t, 1000, e.count("occurrences"))

			// One event over the single create's limit is refused alone.
			big := eventBody()
			big["metadata"] = map[string]string{"pad": strings.Repeat("y", 1<<20)}
			res = e.do("POST", "/events/batch", e.master, map[string]any{"events": []any{big, eventBody()}})
			require.Equal(t, http.StatusOK, res.Status, "%.300s", res.Body)
			res.json(t, &ans)
			require.Equal(t, http.StatusRequestEntityTooLarge, ans.Results[0].Status)
			require.Equal(t, http.StatusCreated, ans.Results[1].Status)
		})
	}
}

// A batch of one-offs far apart (next hour, 2090, 2300) plans what single
// creates plan: on PostgreSQL an instant outside the kept window gets its
// partition on demand, in the batch's transaction.
func TestBatchCreateReachesFarFutureInstants(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			items := []any{eventBody()}
			for _, at := range []string{"2090-03-04T05:06:07Z", "2300-01-01T00:00:00Z"} {
				ev := eventBody()
				ev["start_time"] = at
				items = append(items, ev)
			}
			res := e.do("POST", "/events/batch", e.master, map[string]any{"events": items})
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			var got batchAnswer
			require.NoError(t, json.Unmarshal(res.Body, &got))
			require.Len(t, got.Results, 3)
			for i, r := range got.Results {
				require.Equal(t, http.StatusCreated, r.Status, "item %d: %s", i, res.Body)
				single := e.createEvent(e.master, items[i].(map[string]any))
				require.Equal(t, len(e.occurrencesOf(single["id"].(string))), len(e.occurrencesOf(r.Event["id"].(string))),
					"item %d has the occurrences a single create plans", i)
			}
			require.Len(t, e.occurrencesOf(got.Results[0].Event["id"].(string)), 1, "the next hour's is planned at once")
		})
	}
}
