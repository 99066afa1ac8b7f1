package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// runReceiver is a receiver of callback deliveries: it answers 202 and
// hands each delivery's payload and run-token header to the test.
type runReceiver struct {
	url        string
	deliveries chan runDelivery
	// before, when set, runs inside the handler before it answers.
	before func(d runDelivery)
}

type runDelivery struct {
	header  string
	payload struct {
		OccurrenceID string `json:"occurrence_id"`
		Run          struct {
			Token        string `json:"token"`
			CompleteURL  string `json:"complete_url"`
			HeartbeatURL string `json:"heartbeat_url"`
			Deadline     string `json:"deadline"`
		} `json:"run"`
	}
}

func newRunReceiver(t *testing.T, before func(d runDelivery)) *runReceiver {
	rr := &runReceiver{deliveries: make(chan runDelivery, 16), before: before}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var d runDelivery
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &d.payload); err != nil {
			t.Errorf("payload: %v", err)
		}
		d.header = r.Header.Get("Qhronos-Run-Token")
		if rr.before != nil {
			rr.before(d)
		}
		w.WriteHeader(http.StatusAccepted)
		rr.deliveries <- d
	}))
	t.Cleanup(srv.Close)
	rr.url = srv.URL + "/jobs/export"
	return rr
}

// next waits for a delivery.
func (rr *runReceiver) next(t *testing.T) runDelivery {
	t.Helper()
	select {
	case d := <-rr.deliveries:
		return d
	case <-time.After(60 * time.Second):
		t.Fatal("no delivery within 60 s")
		return runDelivery{}
	}
}

// callBack posts body to url with the run token, as a receiver's job does.
func callBack(t *testing.T, url, token string, body any) (int, map[string]any) {
	t.Helper()
	var buf bytes.Buffer
	if body != nil {
		require.NoError(t, json.NewEncoder(&buf).Encode(body))
	}
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, url, &buf)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	var out map[string]any
	raw, _ := io.ReadAll(res.Body)
	_ = json.Unmarshal(raw, &out)
	return res.StatusCode, out
}

func (e *env) callbackEvent(name, url string, extra map[string]any) string {
	body := map[string]any{"name": name, "webhook": url, "completion": "callback",
		"start_time": time.Now().Add(time.Second).UTC().Format(time.RFC3339Nano)}
	for k, v := range extra {
		body[k] = v
	}
	return e.createEvent(e.master, body)["id"].(string)
}

func (e *env) occurrence(id string) map[string]any {
	res := e.do("GET", "/occurrences/"+id, e.master, nil)
	require.Equal(e.t, http.StatusOK, res.Status, "%s", res.Body)
	return res.object(e.t)
}

// A receiver answers 202 at once and calls back 3 s later: the occurrence
// is running in between, then completed with the run's output; the token
// stays out of the recorded request; a repeat of the same report is
// idempotent and a different one is refused.
func TestCallbackRunCompletesLater(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			rr := newRunReceiver(t, nil)
			e.sched.Start(context.Background())
			evID := e.callbackEvent("nightly export", rr.url, map[string]any{"max_runtime": "30m"})
			ev := e.do("GET", "/events/"+evID, e.master, nil).object(t)
			require.Equal(t, "callback", ev["completion"])
			require.Equal(t, "30m0s", ev["max_runtime"])

			d := rr.next(t)
			occID := d.payload.OccurrenceID
			require.NotEmpty(t, d.payload.Run.Token)
			require.Equal(t, d.payload.Run.Token, d.header, "the header carries the payload's token")
			require.Equal(t, e.http.URL+"/occurrences/"+occID+"/complete", d.payload.Run.CompleteURL)
			require.Equal(t, e.http.URL+"/occurrences/"+occID+"/heartbeat", d.payload.Run.HeartbeatURL)
			deadline, err := time.Parse(time.RFC3339Nano, d.payload.Run.Deadline)
			require.NoError(t, err)
			require.WithinDuration(t, time.Now().Add(30*time.Minute), deadline, time.Minute)

			var occ map[string]any
			require.Eventually(t, func() bool {
				occ = e.occurrence(occID)
				return occ["status"] == "running"
			}, 30*time.Second, 20*time.Millisecond, "accepted: running until the receiver calls back")
			run := occ["run"].(map[string]any)
			require.NotNil(t, run["deadline"])
			require.Nil(t, occ["completed_at"])

			// The job runs for 3 s (the receiver): a duration, not a
			// wait for anything; max_runtime is 30 minutes away.
			time.Sleep(3 * time.Second)
			require.Equal(t, "running", e.occurrence(occID)["status"], "no timeout before max_runtime")
			output := map[string]any{"rows": 42, "file": "export-2026-12-01.csv"}
			status, got := callBack(t, d.payload.Run.CompleteURL, d.payload.Run.Token,
				map[string]any{"status": "succeeded", "output": output})
			require.Equal(t, http.StatusOK, status, "%v", got)
			require.Equal(t, "completed", got["status"])
			run = got["run"].(map[string]any)
			require.Equal(t, "succeeded", run["status"])
			require.Equal(t, map[string]any{"rows": float64(42), "file": "export-2026-12-01.csv"}, run["output"])
			require.GreaterOrEqual(t, run["duration_ms"].(float64), float64(3000), "the run's duration")

			status, again := callBack(t, d.payload.Run.CompleteURL, d.payload.Run.Token,
				map[string]any{"status": "succeeded", "output": output})
			require.Equal(t, http.StatusOK, status, "the same report again is idempotent: %v", again)
			status, refused := callBack(t, d.payload.Run.CompleteURL, d.payload.Run.Token, map[string]any{"status": "failed"})
			require.Equal(t, http.StatusConflict, status, "a different report after the end: %v", refused)
			require.Contains(t, refused["error"], "completed")

			require.Eventually(t, func() bool {
				return e.do("GET", "/events/"+evID, e.master, nil).object(t)["last_status"] == "completed"
			}, 30*time.Second, 20*time.Millisecond, "the event's last_status follows the run")

			res := e.do("GET", "/occurrences/"+occID+"/attempts", e.master, nil)
			require.Equal(t, http.StatusOK, res.Status)
			require.NotContains(t, string(res.Body), d.payload.Run.Token, "the run token is a credential: never shown")
			var attempts []map[string]any
			res.json(t, &attempts)
			require.Len(t, attempts, 1)
			require.Equal(t, "running", attempts[0]["outcome"], "the attempt started the run")
		})
	}
}

// A run that neither completes nor heartbeats within max_runtime ends
// timed_out; a report after that is refused and kept as late.
func TestCallbackRunTimesOut(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			rr := newRunReceiver(t, nil)
			e.sched.Start(context.Background())
			evID := e.callbackEvent("hourly sync", rr.url, map[string]any{"max_runtime": "1s"})
			d := rr.next(t)
			var occ map[string]any
			require.Eventually(t, func() bool {
				occ = e.occurrence(d.payload.OccurrenceID)
				return occ["status"] == "timed_out"
			}, 60*time.Second, 50*time.Millisecond, "no callback within max_runtime")
			require.Contains(t, occ["error_message"], "timed out")
			require.NotNil(t, occ["completed_at"])

			status, got := callBack(t, d.payload.Run.CompleteURL, d.payload.Run.Token, map[string]any{"status": "succeeded"})
			require.Equal(t, http.StatusConflict, status, "a completion after the timeout does not resurrect it: %v", got)
			occ = e.occurrence(d.payload.OccurrenceID)
			require.Equal(t, "timed_out", occ["status"])
			require.Equal(t, "succeeded", occ["run"].(map[string]any)["status"], "the late report is kept")
			require.Eventually(t, func() bool {
				s, _ := e.do("GET", "/events/"+evID, e.master, nil).object(t)["last_status"].(string)
				return strings.HasPrefix(s, "timed_out")
			}, 30*time.Second, 20*time.Millisecond)

			res := e.do("GET", "/occurrences?event_id="+evID+"&status=timed_out", e.master, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			require.Contains(t, string(res.Body), d.payload.OccurrenceID)
		})
	}
}

// Heartbeats move a run's deadline (that they keep it alive past
// max_runtime is TestRunTimesOutUnlessItHeartbeats', on an injected
// clock); a run reported failed ends failed.
func TestCallbackRunHeartbeatsThenFails(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			rr := newRunReceiver(t, nil)
			e.sched.Start(context.Background())
			e.callbackEvent("invoice run", rr.url, map[string]any{"max_runtime": "1h"})
			d := rr.next(t)
			require.Eventually(t, func() bool { return e.occurrence(d.payload.OccurrenceID)["status"] == "running" },
				30*time.Second, 20*time.Millisecond)
			for range 3 {
				before := time.Now().UTC().Truncate(time.Second)
				status, got := callBack(t, d.payload.Run.HeartbeatURL, d.payload.Run.Token, nil)
				require.Equal(t, http.StatusOK, status, "%v", got)
				require.Equal(t, "running", got["status"])
				run := got["run"].(map[string]any)
				require.NotNil(t, run["heartbeat_at"])
				deadline, err := time.Parse(time.RFC3339Nano, run["deadline"].(string))
				require.NoError(t, err)
				require.False(t, deadline.Before(before.Add(time.Hour)), "the deadline is now + max_runtime")
			}
			status, got := callBack(t, d.payload.Run.CompleteURL, d.payload.Run.Token,
				map[string]any{"status": "failed", "output": map[string]any{"error": "ledger locked"}})
			require.Equal(t, http.StatusOK, status, "%v", got)
			require.Equal(t, "failed", got["status"])
			require.Equal(t, "the run reported failure", got["error_message"])
			status, got = callBack(t, d.payload.Run.HeartbeatURL, d.payload.Run.Token, nil)
			require.Equal(t, http.StatusConflict, status, "no heartbeat after the end: %v", got)
		})
	}
}

// A receiver that completes the run before it answers (the callback races
// the recording of its own 2xx) ends the occurrence completed all the same.
func TestCallbackRunCompletedBeforeItsDeliveryIsRecorded(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			var mu sync.Mutex
			var early []int
			rr := newRunReceiver(t, func(d runDelivery) {
				status, _ := callBack(t, d.payload.Run.CompleteURL, d.payload.Run.Token, map[string]any{"status": "succeeded"})
				mu.Lock()
				early = append(early, status)
				mu.Unlock()
			})
			e.sched.Start(context.Background())
			e.callbackEvent("quick job", rr.url, nil)
			d := rr.next(t)
			mu.Lock()
			require.Equal(t, []int{http.StatusOK}, early, "the early report is accepted")
			mu.Unlock()
			require.Eventually(t, func() bool {
				return e.occurrence(d.payload.OccurrenceID)["status"] == "completed"
			}, 30*time.Second, 20*time.Millisecond, "the early report decides the row when its 2xx is recorded")
		})
	}
}

// Who may report a run: the occurrence's own run token, or a token that
// may write its event; and what a report must say.
func TestCallbackRunAuthAndInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t, backends()[0].Open)
	rr := newRunReceiver(t, nil)
	e.sched.Start(context.Background())
	e.callbackEvent("first", rr.url, map[string]any{"tags": []string{"team-a"}})
	first := rr.next(t)
	e.callbackEvent("second", rr.url, map[string]any{"tags": []string{"team-a"}})
	second := rr.next(t)
	for _, d := range []runDelivery{first, second} {
		require.Eventually(t, func() bool { return e.occurrence(d.payload.OccurrenceID)["status"] == "running" },
			30*time.Second, 20*time.Millisecond)
	}
	complete := first.payload.Run.CompleteURL
	ok := map[string]any{"status": "succeeded"}

	status, _ := callBack(t, complete, second.payload.Run.Token, ok)
	require.Equal(t, http.StatusUnauthorized, status, "another occurrence's run token")
	status, _ = callBack(t, complete, "qrun_forged", ok)
	require.Equal(t, http.StatusUnauthorized, status)
	status, _ = callBack(t, complete, "", ok)
	require.Equal(t, http.StatusUnauthorized, status)
	reader, _ := e.mintToken("read", []string{"team-a"})
	status, _ = callBack(t, complete, reader, ok)
	require.Equal(t, http.StatusForbidden, status, "read access cannot complete a run")
	outsider, _ := e.mintToken("write", []string{"team-b"})
	status, _ = callBack(t, complete, outsider, ok)
	require.Equal(t, http.StatusNotFound, status, "another tenant's occurrence is invisible")

	for _, tc := range []struct {
		body  any
		field string
	}{
		{map[string]any{}, "status"},
		{map[string]any{"status": "done"}, "status"},
		{map[string]any{"status": "succeeded", "output": strings.Repeat("x", 17<<10)}, "output"},
		{map[string]any{"status": "succeeded", "exit_code": 0}, "exit_code"},
	} {
		status, got := callBack(t, complete, first.payload.Run.Token, tc.body)
		require.Equal(t, http.StatusBadRequest, status, "%v", got)
		require.Equal(t, tc.field, got["field"], "%v", got)
	}
	status, got := callBack(t, first.payload.Run.HeartbeatURL, first.payload.Run.Token, map[string]any{"x": 1})
	require.Equal(t, http.StatusBadRequest, status, "%v", got)

	writer, _ := e.mintToken("write", []string{"team-a"})
	status, got = callBack(t, complete, writer, map[string]any{"status": "succeeded", "output": map[string]any{"password": "hunter2"}})
	require.Equal(t, http.StatusOK, status, "a token that may write the event completes it: %v", got)
	require.NotContains(t, got["run"].(map[string]any)["output"], "hunter2", "the output is redacted like any value")
}

// The event fields: completion and max_runtime are checked and named.
func TestCallbackEventFields(t *testing.T) {
	t.Parallel()
	e := newEnv(t, backends()[0].Open)
	start := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	for _, tc := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"completion": "later"}, "completion"},
		{map[string]any{"max_runtime": "10m"}, "max_runtime"},
		{map[string]any{"completion": "callback", "max_runtime": "8d"}, "max_runtime"},
		{map[string]any{"completion": "callback", "max_runtime": "soon"}, "max_runtime"},
		{map[string]any{"completion": "callback", "webhook": "q:listener"}, "completion"},
	} {
		body := map[string]any{"name": "job", "webhook": "http://127.0.0.1:9999/x", "start_time": start}
		for k, v := range tc.body {
			body[k] = v
		}
		res := e.do("POST", "/events", e.master, body)
		require.Equal(t, http.StatusBadRequest, res.Status, "%v: %s", tc.body, res.Body)
		require.Equal(t, tc.field, res.object(t)["field"], "%s", res.Body)
	}
	ev := e.createEvent(e.master, map[string]any{"name": "job", "webhook": "http://127.0.0.1:9999/x",
		"start_time": start, "completion": "callback"})
	require.Equal(t, "1h0m0s", ev["max_runtime"], "the default max_runtime")
	id := ev["id"].(string)
	res := e.do("PUT", "/events/"+id, e.master, map[string]any{"completion": "response"})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	got := res.object(t)
	require.Equal(t, "response", got["completion"])
	require.Nil(t, got["max_runtime"], "max_runtime goes with callback")
	plain := e.createEvent(e.master, map[string]any{"name": "plain", "webhook": "http://127.0.0.1:9999/x", "start_time": start})
	require.Equal(t, "response", plain["completion"], "the default")
}

// An every-second job whose first run keeps going, under overlap skip: the
// instants that come meanwhile are skipped with reason overlap and never
// delivered; once the run completes, the next instant is delivered again.
func TestOverlapSkipWhileARunIsInProgress(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			rr := newRunReceiver(t, nil)
			e.sched.Start(context.Background())
			evID := e.callbackEvent("sync", rr.url, map[string]any{"rrule": "FREQ=SECONDLY", "overlap": "skip"})
			first := rr.next(t)

			skipped := func() []map[string]any {
				res := e.do("GET", "/occurrences?event_id="+evID+"&status=skipped", e.master, nil)
				require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
				var page struct {
					Data []map[string]any `json:"data"`
				}
				res.json(t, &page)
				return page.Data
			}
			var rows []map[string]any
			require.Eventually(t, func() bool { rows = skipped(); return len(rows) >= 2 },
				60*time.Second, 50*time.Millisecond, "the instants during the run are skipped")
			for _, r := range rows {
				require.Equal(t, "overlap", r["reason"], "%v", r)
				require.Contains(t, r["error_message"], "the previous run was still in progress")
			}
			select {
			case d := <-rr.deliveries:
				t.Fatalf("occurrence %s was delivered while the first run was in progress", d.payload.OccurrenceID)
			default:
			}

			status, got := callBack(t, first.payload.Run.CompleteURL, first.payload.Run.Token,
				map[string]any{"status": "succeeded"})
			require.Equal(t, http.StatusOK, status, "%v", got)
			next := rr.next(t)
			require.NotEqual(t, first.payload.OccurrenceID, next.payload.OccurrenceID, "a later instant runs")
		})
	}
}

func TestOverlapEventField(t *testing.T) {
	t.Parallel()
	e := newEnv(t, backends()[0].Open)
	start := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	res := e.do("POST", "/events", e.master, map[string]any{"name": "job", "webhook": "http://127.0.0.1:9999/x",
		"start_time": start, "overlap": "queue"})
	require.Equal(t, http.StatusBadRequest, res.Status, "%s", res.Body)
	require.Equal(t, "overlap", res.object(t)["field"])
	require.Contains(t, res.object(t)["error"], `"buffer_one"`, "the error lists the policies")

	plain := e.createEvent(e.master, map[string]any{"name": "plain", "webhook": "http://127.0.0.1:9999/x", "start_time": start})
	require.Equal(t, "allow", plain["overlap"], "the default")
	id := plain["id"].(string)
	for _, policy := range []string{"skip", "buffer_one", "buffer_all", "cancel_previous"} {
		res := e.do("PUT", "/events/"+id, e.master, map[string]any{"overlap": policy})
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
		require.Equal(t, policy, res.object(t)["overlap"])
	}
	res = e.do("PUT", "/events/"+id, e.master, map[string]any{"overlap": nil})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	require.Equal(t, "allow", res.object(t)["overlap"], "null restores the default")
	hist := e.do("GET", "/events/"+id+"/history", e.master, nil)
	require.Equal(t, http.StatusOK, hist.Status)
	require.Contains(t, string(hist.Body), `"cancel_previous"`, "the history shows the policy while it is set")
}
