package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// An operator makes an event that completes by callback in the console's
// form (Max runtime offered only then, the API's refusal under it), sees
// how it completes on its page and triggers it. The receiver accepts the
// delivery at once (202): the occurrence page shows the run under way with
// its deadline (and In flight lists it), then the heartbeat, then — once
// the receiver completes it with the delivery's run token — the reported
// status, the output and the run's duration. Edited to a max runtime of
// one second, the next run nobody completes ends timed out, a failure
// listed under Failures.
func TestConsoleCallbackRuns(t *testing.T) {
	onBothStores(t, consolePostgres, func(t *testing.T, srv consoleServer, p *page) {
		p.signIn(srv.master)
		callbackRunStory(t, srv, p)
	})
}

// startedRun is what a delivery of a callback event told its receiver
// about the run it starts.
type startedRun struct {
	Header, Token, CompleteURL, HeartbeatURL, Deadline string
}

// runReceiver answers every delivery 202 (the run started; it is completed
// later, or never) and keeps each occurrence's run, in order of arrival.
type runReceiver struct {
	srv *httptest.Server

	mu    sync.Mutex
	runs  map[string]startedRun // occurrence id → its run
	order []string
}

func newRunReceiver(t *testing.T) *runReceiver {
	t.Helper()
	rc := &runReceiver{runs: map[string]startedRun{}}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		var p struct {
			OccurrenceID string `json:"occurrence_id"`
			Run          *struct {
				Token        string `json:"token"`
				CompleteURL  string `json:"complete_url"`
				HeartbeatURL string `json:"heartbeat_url"`
				Deadline     string `json:"deadline"`
			} `json:"run"`
		}
		_ = json.Unmarshal(body, &p)
		run := startedRun{Header: r.Header.Get("Qhronos-Run-Token")}
		if p.Run != nil {
			run.Token, run.CompleteURL, run.HeartbeatURL, run.Deadline = p.Run.Token, p.Run.CompleteURL,
				p.Run.HeartbeatURL, p.Run.Deadline
		}
		rc.mu.Lock()
		if _, seen := rc.runs[p.OccurrenceID]; !seen {
			rc.order = append(rc.order, p.OccurrenceID)
		}
		rc.runs[p.OccurrenceID] = run
		rc.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

// URL is where the event delivers.
func (rc *runReceiver) URL() string { return rc.srv.URL + "/jobs" }

// waitRun waits until the n-th occurrence (from 1) was delivered and
// returns its id and run.
func (rc *runReceiver) waitRun(t *testing.T, n int) (string, startedRun) {
	t.Helper()
	eventually(t, fireTimeout, fmt.Sprintf("the receiver got occurrence %d", n), func() bool {
		rc.mu.Lock()
		defer rc.mu.Unlock()
		return len(rc.order) >= n
	})
	rc.mu.Lock()
	defer rc.mu.Unlock()
	id := rc.order[n-1]
	return id, rc.runs[id]
}

// reportRun posts to a run's complete or heartbeat URL with its run token,
// as the receiver does, and requires the API to take it.
func reportRun(t *testing.T, url, token string, body any) {
	t.Helper()
	var rd io.Reader = http.NoBody
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest("POST", url, rd)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode, "POST %s: %s", url, raw)
}

func callbackRunStory(t *testing.T, srv consoleServer, p *page) {
	rc := newRunReceiver(t)

	// The form: Max runtime is offered only for completion by callback.
	p.open("/ui/events/new")
	p.settle()
	p.waitFor("Max runtime hidden and off while completion is by response", `(function(){
		var m = document.querySelector("#f-max-runtime");
		return document.querySelector("#f-completion-response").checked && m.hidden && m.disabled &&
			document.querySelector('label[for="f-max-runtime"]').hidden;
	})()`, pageTimeout)
	p.fill("#f-name", "nightly export")
	p.fill("#f-target", rc.URL())
	p.tick("#f-completion-callback")
	p.waitFor("Max runtime offered for callback, 1h by default", `(function(){
		var m = document.querySelector("#f-max-runtime");
		return !m.hidden && !m.disabled && m.placeholder === "1h";
	})()`, pageTimeout)
	p.fill("#f-max-runtime", "10d")
	p.click(`#event-form button[type=submit]`)
	p.waitFor("the API's refusal under Max runtime, what was chosen kept", `(function(){
		var m = document.querySelector("#f-max-runtime"), err = document.querySelector("#f-max-runtime + .field-error");
		return !!m && !m.hidden && m.value === "10d" && m.getAttribute("aria-invalid") === "true" &&
			document.querySelector("#f-completion-callback").checked &&
			!!err && err.innerText.indexOf("must be between 1s and 168h0m0s") >= 0;
	})()`, pageTimeout)
	p.fill("#f-max-runtime", "30m")
	p.shot("console-event-form-callback", 1280, false)
	p.click(`#event-form button[type=submit]`)
	p.waitText(".notice", "Event created", pageTimeout)
	p.waitText("#completion", "by callback", pageTimeout)
	p.waitText("#max-runtime", "30m0s", pageTimeout)
	p.shot("console-event-callback", 1280, false)
	loc, err := p.location()
	require.NoError(t, err)
	eventPage := loc[strings.Index(loc, "/ui/events/"):]
	if i := strings.IndexByte(eventPage, '?'); i >= 0 {
		eventPage = eventPage[:i]
	}

	trigger := func() {
		p.open(eventPage + "/confirm/trigger")
		p.click("#confirm")
		p.waitText(".notice", "Triggered", pageTimeout)
	}
	trigger()

	// The delivery carries the run: its token (header and payload alike)
	// and where to complete it.
	occID, run := rc.waitRun(t, 1)
	require.True(t, strings.HasPrefix(run.Token, "qrun_"), "a run token: %+v", run)
	require.Equal(t, run.Token, run.Header, "the header carries the payload's token")
	require.True(t, strings.HasSuffix(run.CompleteURL, "/occurrences/"+occID+"/complete"), run.CompleteURL)
	require.True(t, strings.HasSuffix(run.HeartbeatURL, "/occurrences/"+occID+"/heartbeat"), run.HeartbeatURL)

	// Accepted, it runs: the page shows the deadline, 30 minutes ahead.
	occPage := "/ui/occurrences/" + occID
	p.reloadUntil(occPage, "the run under way with its deadline", `(function(){
		var s = document.querySelector("#occurrence-status"), r = document.querySelector("#run-status");
		return !!s && s.innerText === "running" && !!document.querySelector("#run-deadline time") &&
			!!r && r.innerText === "not yet" && document.querySelector("#run-heartbeat").innerText === "none" &&
			!document.querySelector("#run-duration") && !document.querySelector("#replay");
	})()`, fireTimeout)
	deadline, err := time.Parse(time.RFC3339Nano, p.attr("#run-deadline time", "datetime"))
	require.NoError(t, err)
	require.WithinDuration(t, time.Now().Add(30*time.Minute), deadline, 2*time.Minute, "max_runtime from the 2xx")
	p.waitText("#attempts", "running", pageTimeout)
	p.shot("console-run-running", 1280, false)

	// In flight lists it among the running, with its deadline.
	p.open("/ui/inflight?state=running")
	p.waitFor("the run in flight", fmt.Sprintf(`(function(){
		var r = document.querySelector('#inflight tr[data-occurrence=%q]');
		return !!r && r.getAttribute("data-status") === "running" && r.querySelector(".state").innerText.indexOf("times out") >= 0 &&
			!!r.querySelector(".state time") && document.querySelector("#if-state").value === "running";
	})()`, occID), pageTimeout)

	// A heartbeat shows, and moves the deadline.
	reportRun(t, run.HeartbeatURL, run.Token, nil)
	p.reloadUntil(occPage, "the heartbeat shown", `!!document.querySelector("#run-heartbeat time")`, pageTimeout)

	// The receiver completes the run: its status, output and duration.
	reportRun(t, run.CompleteURL, run.Token, map[string]any{"status": "succeeded",
		"output": map[string]any{"rows": 42, "file": "<export-1>.csv"}})
	p.reloadUntil(occPage, "the run completed with its output and duration", `(function(){
		var s = document.querySelector("#occurrence-status"), o = document.querySelector("#run-output"),
			d = document.querySelector("#run-duration"), r = document.querySelector("#run-status");
		return !!s && s.innerText === "completed" && !!r && r.innerText === "succeeded" &&
			!!o && o.innerText.indexOf('"rows": 42') >= 0 && o.innerText.indexOf('"file": "<export-1>.csv"') >= 0 &&
			o.children.length === 0 && !!d && /^\d/.test(d.innerText) &&
			!!document.querySelector("#run-reported-at time") && !document.querySelector("#run-deadline");
	})()`, fireTimeout)
	p.shot("console-run-completed", 1280, false)

	// Edited in the form to one second of max runtime, the next run that
	// nobody completes times out: a failure.
	p.open(eventPage + "/edit")
	p.settle()
	p.waitFor("the edit form reads the completion back", `document.querySelector("#f-completion-callback").checked &&
		document.querySelector("#f-max-runtime").value === "30m0s"`, pageTimeout)
	p.fill("#f-max-runtime", "1s")
	p.click(`#event-form button[type=submit]`)
	p.waitText(".notice", "Event saved", pageTimeout)
	p.waitText("#max-runtime", "1s", pageTimeout)
	trigger()
	lateID, _ := rc.waitRun(t, 2)
	require.NotEqual(t, occID, lateID)
	p.reloadUntil("/ui/occurrences/"+lateID, "the run timed out", `(function(){
		var s = document.querySelector("#occurrence-status");
		return !!s && s.innerText === "timed_out" && s.className.indexOf("bad") >= 0 &&
			document.querySelector("main").innerText.indexOf("the run timed out") >= 0 &&
			document.querySelector("#run-status").innerText === "nothing" && !!document.querySelector("#replay") &&
			document.querySelector('nav a[href="/ui/failures"]').getAttribute("aria-current") === "page";
	})()`, fireTimeout)
	p.shot("console-run-timed-out", 1280, false)
	p.open("/ui/failures?status=timed_out&window=1h")
	p.waitFor("the timed-out run among the failures, not the completed one", fmt.Sprintf(`(function(){
		var r = document.querySelector('#failures tr[data-occurrence=%q]');
		return !!r && r.innerText.indexOf("timed_out") >= 0 && r.innerText.indexOf("nightly export") >= 0 &&
			!document.querySelector('#failures tr[data-occurrence=%q]');
	})()`, lateID, occID), pageTimeout)
	p.open(eventPage)
	p.waitText("#history", "timed_out", pageTimeout)
	p.waitText("#history", "completed", pageTimeout)
}
