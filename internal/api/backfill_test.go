package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A weekday rule created to start next month is backfilled over last
// month: every weekday at 09:00 Paris time of that month fires once, marked
// backfill, and a second backfill of the same range creates nothing.
func TestBackfillFiresAMonthOfAWeekdayRule(t *testing.T) {
	t.Parallel()
	paris, err := time.LoadLocation("Europe/Paris")
	require.NoError(t, err)
	now := time.Now().In(paris)
	first := time.Date(now.Year(), now.Month()-1, 1, 0, 0, 0, 0, paris)
	last := first.AddDate(0, 1, 0).Add(-time.Second)
	var want []time.Time
	for d := first; d.Before(last); d = d.AddDate(0, 0, 1) {
		if d.Weekday() != time.Saturday && d.Weekday() != time.Sunday {
			want = append(want, time.Date(d.Year(), d.Month(), d.Day(), 9, 0, 0, 0, paris).UTC())
		}
	}
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			var mu sync.Mutex
			got := map[string]int{}
			receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				got[r.Header.Get("webhook-id")]++
				mu.Unlock()
			}))
			t.Cleanup(receiver.Close)
			e.sched.Start(context.Background())

			ev := e.createEvent(e.master, map[string]any{"name": "weekday report", "timezone": "Europe/Paris",
				"start_time": first.AddDate(0, 2, 0).Format(time.RFC3339),
				"rrule":      "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=9;BYMINUTE=0;BYSECOND=0;COUNT=3",
				"webhook":    receiver.URL + "/hook"})
			id := ev["id"].(string)
			body := map[string]any{"from": first.Format(time.RFC3339), "to": last.Format(time.RFC3339)}
			res := e.do("POST", "/events/"+id+"/backfill", e.master, body)
			require.Equal(t, http.StatusAccepted, res.Status, "%s", res.Body)
			out := res.object(t)
			require.EqualValues(t, len(want), out["instants"], "every weekday of the month, COUNT=3 lifted")
			require.EqualValues(t, len(want), out["created"])
			require.EqualValues(t, 0, out["existing"])

			var page struct {
				Data []map[string]any `json:"data"`
			}
			require.Eventually(t, func() bool {
				e.do("GET", "/occurrences?event_id="+id+"&reason=backfill&status=completed&limit=100", e.master, nil).json(t, &page)
				return len(page.Data) == len(want)
			}, 60*time.Second, 50*time.Millisecond, "every backfilled instant completes")
			var instants []time.Time
			for _, o := range page.Data {
				at, err := time.Parse(time.RFC3339Nano, o["scheduled_at"].(string))
				require.NoError(t, err)
				instants = append(instants, at.UTC())
				require.Equal(t, "backfill", o["reason"])
			}
			require.ElementsMatch(t, want, instants, "09:00 Paris on each weekday, across the DST change if any")
			mu.Lock()
			require.Len(t, got, len(want), "one delivery id per instant")
			for id, n := range got {
				require.Equal(t, 1, n, "delivered once: %s", id)
			}
			mu.Unlock()

			again := e.do("POST", "/events/"+id+"/backfill", e.master, body)
			require.Equal(t, http.StatusAccepted, again.Status, "%s", again.Body)
			out = again.object(t)
			require.EqualValues(t, 0, out["created"], "idempotent")
			require.EqualValues(t, len(want), out["existing"])

			var history struct {
				Data []map[string]any `json:"data"`
			}
			e.do("GET", "/events/"+id+"/history", e.master, nil).json(t, &history)
			backfills := 0
			for _, h := range history.Data {
				if h["action"] == "backfill" {
					backfills++
				}
			}
			require.Equal(t, 2, backfills, "each backfill is in the event's history")
		})
	}
}

// Bad ranges and events that cannot be backfilled get a 4xx naming what is
// wrong, and write nothing.
func TestBackfillRefusesWhatItCannotDo(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			day := time.Now().Add(-24 * time.Hour).UTC()
			hourly := e.createEvent(e.master, map[string]any{"name": "hourly", "rrule": "FREQ=HOURLY",
				"start_time": time.Now().Add(time.Hour).UTC().Format(time.RFC3339), "webhook": "http://127.0.0.1:9999/hook"})["id"].(string)
			once := e.createEvent(e.master, eventBody())["id"].(string)
			cases := []struct {
				name   string
				id     string
				body   any
				status int
				field  string
			}{
				{"to in the future", hourly, map[string]any{"from": day.Format(time.RFC3339),
					"to": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}, 400, "to"},
				{"from after to", hourly, map[string]any{"from": day.Format(time.RFC3339),
					"to": day.Add(-time.Hour).Format(time.RFC3339)}, 400, "from"},
				{"more than 10,000 instants", hourly, map[string]any{"from": day.AddDate(-2, 0, 0).Format(time.RFC3339),
					"to": day.Format(time.RFC3339)}, 400, "to"},
				{"no from", hourly, map[string]any{"to": day.Format(time.RFC3339)}, 400, "from"},
				{"not a time", hourly, map[string]any{"from": "yesterday-ish", "to": day.Format(time.RFC3339)}, 400, "from"},
				{"unknown member", hourly, map[string]any{"from": day.Format(time.RFC3339), "to": day.Format(time.RFC3339),
					"respect": true}, 400, "respect"},
				{"one-time event", once, map[string]any{"from": day.Format(time.RFC3339), "to": day.Format(time.RFC3339)}, 409, ""},
				{"unknown event", "00000000-0000-4000-8000-000000000000", map[string]any{"from": day.Format(time.RFC3339),
					"to": day.Format(time.RFC3339)}, 404, ""},
			}
			for _, c := range cases {
				res := e.do("POST", "/events/"+c.id+"/backfill", e.master, c.body)
				require.Equal(t, c.status, res.Status, "%s: %s", c.name, res.Body)
				if c.field != "" {
					require.Equal(t, c.field, res.object(t)["field"], "%s: %s", c.name, res.Body)
				}
			}
			res := e.do("POST", "/events/"+hourly+"/pause", e.master, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			res = e.do("POST", "/events/"+hourly+"/backfill", e.master,
				map[string]any{"from": day.Format(time.RFC3339), "to": day.Add(2 * time.Hour).Format(time.RFC3339)})
			require.Equal(t, http.StatusConflict, res.Status, "paused: %s", res.Body)

			var page struct {
				Data []map[string]any `json:"data"`
			}
			e.do("GET", "/occurrences?reason=backfill", e.master, nil).json(t, &page)
			require.Empty(t, page.Data, "nothing was written")
		})
	}
}

// A client that resolves "now" on its own clock (the CLI's --to now) may run
// a little ahead of the server's database-aligned clock: a `to` within a few
// seconds of the server's now is that now, not a refused future instant.
func TestBackfillToNowOnAClockAheadIsNow(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			hourly := e.createEvent(e.master, map[string]any{"name": "hourly", "rrule": "FREQ=HOURLY",
				"start_time": time.Now().Add(time.Hour).UTC().Format(time.RFC3339), "webhook": "http://127.0.0.1:9999/hook"})["id"].(string)
			ahead := time.Now().Add(3 * time.Second).UTC()
			res := e.do("POST", "/events/"+hourly+"/backfill", e.master, map[string]any{
				"from": ahead.Add(-3 * time.Hour).Format(time.RFC3339Nano), "to": ahead.Format(time.RFC3339Nano)})
			answered := time.Now()
			require.Equal(t, http.StatusAccepted, res.Status, "%s", res.Body)
			out := res.object(t)
			to, err := time.Parse(time.RFC3339Nano, out["to"].(string))
			require.NoError(t, err)
			require.False(t, to.After(answered), "to is the server's now (%s), not the client's %s", to, ahead)
			require.EqualValues(t, 3, out["instants"], "the three past hours")
		})
	}
}

// A calendar that blocks a day of the range skips that instant (recorded
// skipped, reason calendar) unless the backfill says not to respect it.
func TestBackfillRespectsCalendarsUnlessToldNot(t *testing.T) {
	t.Parallel()
	today := time.Now().UTC().Truncate(24 * time.Hour)
	blocked := today.AddDate(0, 0, -3)
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			res := e.do("POST", "/calendars", e.master, map[string]any{"name": "closed",
				"dates": []string{blocked.Format(time.DateOnly)}})
			require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
			cal := res.object(t)["id"].(string)
			body := map[string]any{"from": today.AddDate(0, 0, -5).Format(time.RFC3339),
				"to": today.AddDate(0, 0, -1).Add(23 * time.Hour).Format(time.RFC3339)}
			for _, respect := range []bool{true, false} {
				id := e.createEvent(e.master, map[string]any{"name": "daily", "rrule": "FREQ=DAILY;BYHOUR=9;BYMINUTE=0;BYSECOND=0",
					"start_time": today.AddDate(0, 0, 7).Add(9 * time.Hour).Format(time.RFC3339),
					"calendars":  []map[string]any{{"id": cal, "policy": "skip"}},
					"webhook":    "http://127.0.0.1:9999/hook"})["id"].(string)
				body["respect_exceptions"] = respect
				res := e.do("POST", "/events/"+id+"/backfill", e.master, body)
				require.Equal(t, http.StatusAccepted, res.Status, "%s", res.Body)
				out := res.object(t)
				require.EqualValues(t, 5, out["instants"], "respect=%v: %s", respect, res.Body)
				if !respect {
					require.EqualValues(t, 5, out["created"], "%s", res.Body)
					continue
				}
				require.EqualValues(t, 4, out["created"], "%s", res.Body)
				require.EqualValues(t, 1, out["skipped"], "%s", res.Body)
				var page struct {
					Data []map[string]any `json:"data"`
				}
				e.do("GET", "/occurrences?event_id="+id+"&status=skipped", e.master, nil).json(t, &page)
				require.Len(t, page.Data, 1)
				require.Equal(t, "calendar", page.Data[0]["reason"])
				require.Equal(t, blocked.Add(9*time.Hour).Format(time.RFC3339), page.Data[0]["scheduled_at"])
			}
		})
	}
}
