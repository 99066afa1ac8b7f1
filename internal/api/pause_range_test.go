package api

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A pause until a moment covers [now, until) only: an occurrence planned or
// moved after until stays pending (it was once marked skipped, reason
// paused), while those inside the pause are skipped.
func TestPauseUntilCoversOnlyTheInstantsBeforeIt(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			start := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
			ev := e.createEvent(e.master, map[string]any{"name": "daily", "start_time": start.Format(time.RFC3339),
				"rrule": "FREQ=DAILY;COUNT=3", "webhook": "http://127.0.0.1:9999/h"})
			id := ev["id"].(string)
			var occs []map[string]any
			e.do("GET", "/events/"+id+"/occurrences?order=scheduled_at", e.master, nil).json(t, &occs)
			require.NotEmpty(t, occs)
			first := occs[0]["id"].(string)
			movedTo := start.Add(2 * time.Hour)
			res := e.do("POST", "/occurrences/"+first+"/move", e.master, map[string]any{"to": movedTo.Format(time.RFC3339)})
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)

			until := start.Add(time.Hour) // after the first planned instant, before where it moved
			res = e.do("POST", "/events/"+id+"/pause", e.master, map[string]any{"until": until.Format(time.RFC3339)})
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)

			e.do("GET", "/events/"+id+"/occurrences?order=scheduled_at", e.master, nil).json(t, &occs)
			require.NotEmpty(t, occs)
			for _, o := range occs {
				at, err := time.Parse(time.RFC3339Nano, o["scheduled_at"].(string))
				require.NoError(t, err)
				if at.Before(until) {
					require.Equal(t, "skipped", o["status"], "inside the pause: %v", o)
					continue
				}
				require.Equal(t, "pending", o["status"], "after the pause ends: %v", o)
				require.Nil(t, o["reason"], "%v", o)
			}
			var moved map[string]any
			e.do("GET", "/occurrences/"+first, e.master, nil).json(t, &moved)
			require.Equal(t, "pending", moved["status"], "moved after the pause: %v", moved)
		})
	}
}

// next_run_at names the next instant that will fire, never one an
// exclusion calendar skips (the event page once said "Next run Dec 20"
// beside "Dec 20 — skipped · calendar").
func TestNextRunAtSkipsCalendarBlockedInstants(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			// Weekly, first reading beyond the 24 h lookahead, on a blocked day.
			start := time.Now().Add(72 * time.Hour).UTC().Truncate(time.Second)
			res := e.do("POST", "/calendars", e.master, map[string]any{"name": "closed",
				"dates": []string{start.Format("2006-01-02")}})
			require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
			cal := res.object(t)["id"].(string)
			ev := e.createEvent(e.master, map[string]any{"name": "weekly", "start_time": start.Format(time.RFC3339),
				"rrule": "FREQ=WEEKLY", "webhook": "http://127.0.0.1:9999/h",
				"calendars": []map[string]any{{"id": cal, "policy": "skip"}}})
			next, err := time.Parse(time.RFC3339Nano, ev["next_run_at"].(string))
			require.NoError(t, err)
			require.True(t, next.Equal(start.AddDate(0, 0, 7)), "next_run_at %s, want the week after %s", next, start)
		})
	}
}

// A skip added while an event is paused until a moment, on an instant after
// the pause, shows at once as what will happen (skipped, reason manual),
// not as pending until the pause ends; undoing it makes the row due again.
func TestSkipWhilePausedShowsAtOnce(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			start := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
			ev := e.createEvent(e.master, map[string]any{"name": "hourly", "start_time": start.Format(time.RFC3339),
				"rrule": "FREQ=HOURLY", "webhook": "http://127.0.0.1:9999/h"})
			id := ev["id"].(string)
			until := start.Add(90 * time.Minute) // the first two instants fall inside the pause
			res := e.do("POST", "/events/"+id+"/pause", e.master, map[string]any{"until": until.Format(time.RFC3339)})
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			at := func(h int) map[string]any {
				t.Helper()
				var occs []map[string]any
				e.do("GET", "/events/"+id+"/occurrences?order=scheduled_at", e.master, nil).json(t, &occs)
				want := start.Add(time.Duration(h) * time.Hour)
				for _, o := range occs {
					if got, _ := time.Parse(time.RFC3339Nano, o["scheduled_at"].(string)); got.Equal(want) {
						return o
					}
				}
				t.Fatalf("no occurrence at %s", want)
				return nil
			}

			// An exception on an instant after the pause.
			res = e.do("POST", "/events/"+id+"/exceptions", e.master, map[string]any{
				"at": start.Add(3 * time.Hour).Format(time.RFC3339), "action": "skip", "reason": "audit"})
			require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
			o := at(3)
			require.Equal(t, "skipped", o["status"], "%v", o)
			require.Equal(t, "manual", o["reason"], "%v", o)
			require.Equal(t, "skipped by master: audit", o["error_message"], "%v", o)
			require.Equal(t, "pending", at(2)["status"], "the other instants after the pause stay due")
			require.Equal(t, "skipped", at(1)["status"])
			require.Equal(t, "paused", at(1)["reason"], "inside the pause")

			// Skipping one occurrence, then undoing it.
			four := at(4)["id"].(string)
			res = e.do("POST", "/occurrences/"+four+"/skip", e.master, map[string]any{"reason": "holiday"})
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			require.Equal(t, "skipped", res.object(t)["status"], "%s", res.Body)
			res = e.do("POST", "/occurrences/"+four+"/unskip", e.master, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			require.Equal(t, "pending", res.object(t)["status"], "%s", res.Body)
			require.Equal(t, four, at(4)["id"], "it keeps its id")

			// Removing the exception makes its instant due again.
			res = e.do("DELETE", "/events/"+id+"/exceptions/"+start.Add(3*time.Hour).Format(time.RFC3339), e.master, nil)
			require.Equal(t, http.StatusNoContent, res.Status, "%s", res.Body)
			require.Equal(t, "pending", at(3)["status"])
			require.Equal(t, o["id"], at(3)["id"], "it keeps its id")

			// Skipped again and resumed: it stays skipped.
			res = e.do("POST", "/events/"+id+"/exceptions", e.master, map[string]any{
				"at": start.Add(3 * time.Hour).Format(time.RFC3339), "action": "skip"})
			require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
			res = e.do("POST", "/events/"+id+"/resume", e.master, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			require.Equal(t, "skipped", at(3)["status"])
			require.Equal(t, "pending", at(2)["status"])
		})
	}
}

// While an event is paused until a moment, next_run_at is its next firing
// after the pause (the pause's end when it fires the held instants), in
// single answers and lists; paused without an end it stays empty.
func TestNextRunAtWhilePausedUntil(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			start := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
			ev := e.createEvent(e.master, map[string]any{"name": "hourly", "start_time": start.Format(time.RFC3339),
				"rrule": "FREQ=HOURLY", "webhook": "http://127.0.0.1:9999/h", "tags": []string{"paused-next"}})
			id := ev["id"].(string)
			nextRun := func(res response) any {
				t.Helper()
				require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
				return res.object(t)["next_run_at"]
			}
			listed := func() any {
				t.Helper()
				var evs []map[string]any
				e.do("GET", "/events?tags=paused-next", e.master, nil).json(t, &evs)
				require.Len(t, evs, 1)
				return evs[0]["next_run_at"]
			}
			at := func(d time.Duration) string { return start.Add(d).Format(time.RFC3339) }

			// Until 2 h 30 min after the first instant: the next firing is at 3 h.
			res := e.do("POST", "/events/"+id+"/pause", e.master, map[string]any{"until": at(150 * time.Minute)})
			require.Equal(t, at(3*time.Hour), nextRun(res), "the pause's answer")
			require.Equal(t, at(3*time.Hour), nextRun(e.do("GET", "/events/"+id, e.master, nil)))
			require.Equal(t, at(3*time.Hour), listed())
			// A skip on that instant moves it on.
			res = e.do("POST", "/events/"+id+"/exceptions", e.master, map[string]any{"at": at(3 * time.Hour), "action": "skip"})
			require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
			require.Equal(t, at(4*time.Hour), nextRun(e.do("GET", "/events/"+id, e.master, nil)))
			// An instant at the pause's end fires.
			res = e.do("POST", "/events/"+id+"/pause", e.master, map[string]any{"until": at(2 * time.Hour)})
			require.Equal(t, at(2*time.Hour), nextRun(res))

			// Held instants fired on resume: the pause's end.
			res = e.do("POST", "/events/"+id+"/resume", e.master, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			until := start.Add(150 * time.Minute).Add(-20 * time.Minute)
			res = e.do("POST", "/events/"+id+"/pause", e.master, map[string]any{"until": until.Format(time.RFC3339),
				"catch_up": "fire"})
			require.Equal(t, until.Format(time.RFC3339), nextRun(res))

			// Paused without an end: nothing is known.
			res = e.do("POST", "/events/"+id+"/resume", e.master, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			res = e.do("POST", "/events/"+id+"/pause", e.master, nil)
			require.Nil(t, nextRun(res))
			require.Nil(t, listed())
		})
	}
}
