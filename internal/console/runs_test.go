package console

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// callbackEvent is sampleEvent completing by callback within 30 minutes.
var callbackEvent = strings.Replace(sampleEvent, `"catch_up":"all",`,
	`"catch_up":"all","completion":"callback","max_runtime":"30m0s",`, 1)

// The form sends how occurrences complete and the max runtime of a callback
// event; the API's refusals show under Completion and Max runtime, what was
// typed kept; the edit form reads both back, an emptied max runtime of a
// callback event is cleared (the default again), and the event page says
// how its runs complete.
func TestEventFormCompletion(t *testing.T) {
	t.Parallel()
	tc := newTestConsole(t)
	session, csrf := tc.signIn()
	var created, saved capture
	tc.api.mu.Lock()
	tc.api.answers["POST /events"] = created.answer(201, callbackEvent)
	tc.api.answers["PUT /events/ev1"] = saved.answer(200, callbackEvent)
	tc.api.mu.Unlock()

	page := body(t, tc.get(session, "/ui/events/new"))
	require.Regexp(t, `id="f-completion-response" checked`, page, "a new event completes by response")
	require.Contains(t, page, `<input id="f-max-runtime" name="max_runtime" value="" placeholder="1h" >`)

	form := url.Values{"csrf": {csrf}, "name": {"nightly export"}, "start_time": {"tomorrow at 9am"},
		"rule_kind": {"once"}, "action_type": {"webhook"}, "target_kind": {"url"}, "target": {"https://example.com/h"},
		"completion": {"callback"}, "max_runtime": {"30m"}}
	res := tc.post(session, "/ui/events/new", form)
	_ = body(t, res)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	b := created.last(t)
	require.Equal(t, "callback", b["completion"])
	require.Equal(t, "30m", b["max_runtime"])

	// Max runtime goes with callback only (the page disables it otherwise).
	form.Set("completion", "response")
	res = tc.post(session, "/ui/events/new", form)
	_ = body(t, res)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	b = created.last(t)
	require.Equal(t, "response", b["completion"])
	require.NotContains(t, b, "max_runtime", "nothing to send for a response event")

	// The API's refusals, each under its own field.
	for _, c := range []struct {
		form   url.Values
		answer string
		want   *regexp.Regexp
	}{
		{url.Values{"completion": {"callback"}, "max_runtime": {"10d"}},
			`{"error":"max_runtime: must be at most 168h0m0s","field":"max_runtime"}`,
			regexp.MustCompile(`id="f-max-runtime" name="max_runtime" value="10d" placeholder="1h" aria-invalid="true">\s*` +
				`<p class="field-error" role="alert">must be at most 168h0m0s</p>`)},
		{url.Values{"completion": {"sometimes"}},
			`{"error":"completion: must be \"response\" or \"callback\"","field":"completion"}`,
			regexp.MustCompile(`</fieldset>\s*<p class="field-error" role="alert">must be &#34;response&#34; or ` +
				`&#34;callback&#34;</p>\s*<label for="f-max-runtime">`)},
		{url.Values{"completion": {"callback"}, "action_type": {"websocket"}, "target": {"worker-1"}},
			`{"error":"completion: \"callback\" is for webhook, api_call and broker actions","field":"completion"}`,
			regexp.MustCompile(`</fieldset>\s*<p class="field-error" role="alert">&#34;callback&#34; is for webhook, ` +
				`api_call and broker actions</p>\s*<label for="f-max-runtime">`)},
	} {
		tc.api.mu.Lock()
		tc.api.answers["POST /events"] = jsonAnswer(400, c.answer)
		tc.api.mu.Unlock()
		f := url.Values{}
		for k, v := range form {
			f[k] = v
		}
		for k, v := range c.form {
			f[k] = v
		}
		res := tc.post(session, "/ui/events/new", f)
		page := body(t, res)
		require.Equal(t, http.StatusBadRequest, res.StatusCode, page)
		require.Regexp(t, c.want, page)
		if c.form.Get("completion") == "callback" {
			require.Contains(t, page, `id="f-completion-callback" checked`, "the choice is kept")
		}
	}

	// Editing a callback event: both read back; an emptied max runtime is
	// cleared; back to response, only the choice is sent.
	tc.api.mu.Lock()
	tc.api.answers["GET /events/ev1"] = jsonAnswer(200, callbackEvent)
	tc.api.mu.Unlock()
	page = body(t, tc.get(session, "/ui/events/ev1/edit"))
	require.Contains(t, page, `id="f-completion-callback" checked`)
	require.Contains(t, page, `<input id="f-max-runtime" name="max_runtime" value="30m0s"`)
	edit := url.Values{"csrf": {csrf}, "name": {"weekly report"}, "start_time": {"2030-01-06T09:00:00+01:00"},
		"timezone": {"Europe/Prague"}, "rule_kind": {"rrule"}, "orig_kind": {"rrule"}, "rule": {"FREQ=WEEKLY;BYDAY=MO"},
		"action_type": {"webhook"}, "target_kind": {"url"}, "target": {"https://example.com/hook"},
		"completion": {"callback"}, "max_runtime": {""}}
	res = tc.post(session, "/ui/events/ev1/edit", edit)
	_ = body(t, res)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	b = saved.last(t)
	require.Equal(t, "callback", b["completion"])
	require.Contains(t, b, "max_runtime")
	require.Nil(t, b["max_runtime"], "cleared: the default again")
	edit.Set("completion", "response")
	edit.Set("max_runtime", "30m0s")
	res = tc.post(session, "/ui/events/ev1/edit", edit)
	_ = body(t, res)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	b = saved.last(t)
	require.Equal(t, "response", b["completion"])
	require.NotContains(t, b, "max_runtime")

	// The event page says how runs complete.
	page = body(t, tc.get(session, "/ui/events/ev1"))
	require.Regexp(t, `<dd id="completion">by callback`, page)
	require.Regexp(t, `<dd id="max-runtime">30m0s `, page)
	tc.api.mu.Lock()
	tc.api.answers["GET /events/ev1"] = jsonAnswer(200, sampleEvent)
	tc.api.mu.Unlock()
	page = body(t, tc.get(session, "/ui/events/ev1"))
	require.Contains(t, page, `<dd id="completion">by the receiver's response</dd>`, "an event without completion completes by response")
	require.NotContains(t, page, `id="max-runtime"`)
	page = body(t, tc.get(session, "/ui/events/ev1/edit"))
	require.Contains(t, page, `id="f-completion-response" checked`)
	require.Contains(t, page, `<input id="f-max-runtime" name="max_runtime" value=""`)
}

// runningOccurrence is oc1 of callbackEvent while its run is under way.
const runningOccurrence = `{"id":"oc1","occurrence_id":"oc1","event_id":"ev1","scheduled_at":"2029-12-30T08:00:00Z",
"status":"running","manual":false,"attempt_count":1,"status_code":202,"started_at":"2029-12-30T08:00:00Z",
"run":{"deadline":"2029-12-30T08:30:00Z","heartbeat_at":"2029-12-30T08:10:00Z",
"status":null,"output":null,"reported_at":null,"duration_ms":null}}`

// The occurrence page shows a run: its deadline and last heartbeat while
// it is running; then the reported status, the output indented and
// escaped, when it was reported and how long the run took; a run that
// timed out is a failure (Failures, replay); an occurrence of a response
// event has no run section.
func TestOccurrencePageShowsTheRun(t *testing.T) {
	t.Parallel()
	tc := newTestConsole(t)
	session, _ := tc.signIn()
	running := runningOccurrence
	completed := strings.NewReplacer(`"status":"running"`, `"status":"completed"`,
		`"started_at":"2029-12-30T08:00:00Z",`, `"started_at":"2029-12-30T08:00:00Z","completed_at":"2029-12-30T08:01:33Z",`,
		`"run":{"deadline":"2029-12-30T08:30:00Z"`, `"run":{"deadline":null`,
		`"status":null,"output":null,"reported_at":null,"duration_ms":null`,
		`"status":"succeeded","output":{"rows":42,"note":"\u003cb\u003edone\u003c/b\u003e","ratio":0.10000000000000001},`+
			`"reported_at":"2029-12-30T08:01:33Z","duration_ms":93000`,
	).Replace(running)
	timedOut := strings.NewReplacer(`"status":"running"`, `"status":"timed_out"`,
		`"attempt_count":1,`, `"attempt_count":1,"error_message":"the run timed out: no completion or heartbeat within its max_runtime",`,
		`"run":{"deadline":"2029-12-30T08:30:00Z"`, `"run":{"deadline":null`,
		`"duration_ms":null`, `"duration_ms":1800000`,
	).Replace(running)
	require.NotEqual(t, running, completed)
	require.NotEqual(t, running, timedOut)
	answer := func(occ string) {
		tc.api.mu.Lock()
		tc.api.answers["GET /events/ev1"] = jsonAnswer(200, callbackEvent)
		tc.api.answers["GET /occurrences/oc1"] = jsonAnswer(200, occ)
		tc.api.answers["GET /occurrences/oc1/attempts"] = jsonAnswer(200, `[{"id":"a1","attempt":1,
"started_at":"2029-12-30T08:00:00Z","duration_ms":12,"status_code":202,"outcome":"running","lateness_ms":3}]`)
		tc.api.mu.Unlock()
	}
	section := func(page string) string {
		i := strings.Index(page, `<section class="card" id="run">`)
		require.GreaterOrEqual(t, i, 0, "no run section:\n%s", page)
		return page[i : i+strings.Index(page[i:], "</section>")]
	}

	answer(running)
	res := tc.get(session, "/ui/occurrences/oc1")
	page := body(t, res)
	require.Equal(t, http.StatusOK, res.StatusCode, page)
	require.Contains(t, page, `<span class="badge warn" id="occurrence-status">running</span>`)
	require.Contains(t, page, `<span class="badge warn">running</span>`, "the attempt that started the run")
	run := section(page)
	require.Contains(t, run, `<dd id="run-deadline"><time datetime="2029-12-30T08:30:00Z"`, "while running, its deadline")
	require.Contains(t, run, `09:30:00 +01:00`, "in the event's zone")
	require.Contains(t, run, `<dd id="run-heartbeat"><time datetime="2029-12-30T08:10:00Z"`)
	require.Contains(t, run, `<span class="muted">not yet</span>`)
	require.Contains(t, run, `<p class="muted" id="run-output">None reported.</p>`)
	require.NotContains(t, run, "run-duration")
	require.NotContains(t, page, `id="replay"`, "a running occurrence is not replayed")

	answer(completed)
	page = body(t, tc.get(session, "/ui/occurrences/oc1"))
	require.Contains(t, page, `<span class="badge ok" id="occurrence-status">completed</span>`)
	run = section(page)
	require.NotContains(t, run, "run-deadline", "over: no deadline")
	require.Contains(t, run, `<dd id="run-status"><span class="badge ok">succeeded</span></dd>`)
	require.Contains(t, run, `<dd id="run-reported-at"><time datetime="2029-12-30T08:01:33Z"`)
	require.Contains(t, run, `<dd id="run-duration">1m33s</dd>`)
	require.Contains(t, run, "<pre class=\"excerpt\" id=\"run-output\">{\n  &#34;note&#34;: &#34;&lt;b&gt;done&lt;/b&gt;&#34;,\n"+
		"  &#34;ratio&#34;: 0.10000000000000001,\n  &#34;rows&#34;: 42\n}</pre>",
		"the output indented, its strings as they read and escaped for the page, its numbers as written")
	require.NotContains(t, page, "<b>done</b>")

	answer(timedOut)
	page = body(t, tc.get(session, "/ui/occurrences/oc1"))
	require.Contains(t, page, `<span class="badge bad" id="occurrence-status">timed_out</span>`)
	require.Contains(t, page, "the run timed out: no completion or heartbeat within its max_runtime")
	require.Contains(t, page, `id="replay"`, "a timed-out occurrence may be replayed")
	require.Regexp(t, `<a href="/ui/failures"[^>]*aria-current="page"`, page, "it belongs to Failures")
	run = section(page)
	require.Contains(t, run, `<span class="muted">nothing</span>`, "no report came")
	require.Contains(t, run, `<dd id="run-duration">30m0s</dd>`)

	answer(sampleOccurrence)
	page = body(t, tc.get(session, "/ui/occurrences/oc1"))
	require.NotContains(t, page, `id="run"`, "a response event's occurrence has no run")
}

// running and timed_out are shown and filtered wherever statuses are: the
// badges, In flight (running among its states, with the run's deadline),
// Failures (timed_out among them), the overview's backlog and failure
// count, and the event page's delivery health.
func TestRunningAndTimedOutStates(t *testing.T) {
	t.Parallel()
	require.Equal(t, "badge warn", badgeClass("running"))
	require.Equal(t, "badge bad", badgeClass("timed_out"))
	require.Equal(t, "badge ok", badgeClass("succeeded"))
	require.Equal(t, "failures", occurrenceNav("timed_out"))
	require.Equal(t, "events", occurrenceNav("running"))

	tc := newTestConsole(t)
	session, _ := tc.signIn()
	timedOut := strings.NewReplacer(`"status":"failed"`, `"status":"timed_out"`,
		`"error_message":"HTTP 500"`, `"error_message":"the run timed out: no completion or heartbeat within its max_runtime"`,
	).Replace(sampleOccurrence)
	stats := `{"since":"2029-12-30T00:00:00Z","until":"2029-12-31T00:00:00Z","total":{"occurrences":4,
"by_status":{"completed":1,"failed":1,"running":1,"timed_out":2},"attempts":4,"due":0,"retrying":0},"by_action":{}}`
	tc.api.mu.Lock()
	tc.api.answers["GET /occurrences"] = func(w http.ResponseWriter, r *http.Request) {
		list := timedOut
		if strings.Contains(r.URL.Query().Get("status"), "running") {
			list = runningOccurrence
		}
		jsonAnswer(200, `{"data":[`+list+`],"pagination":{"limit":25,"total":1}}`)(w, r)
	}
	tc.api.answers["GET /stats"] = jsonAnswer(200, stats)
	tc.api.answers["GET /status"] = jsonAnswer(200, `{"status":"ok","version":"test","instance_id":"i1","backends":{},
"queue":{"pending":4,"running":3},"scheduler":{}}`)
	tc.api.answers["GET /events/ev1/occurrences"] = jsonAnswer(200, "["+sampleOccurrence+","+timedOut+","+runningOccurrence+"]")
	tc.api.answers["GET /occurrences/oc1/attempts"] = jsonAnswer(200, `[]`)
	tc.api.mu.Unlock()
	statusAsked := func(path string) string {
		tc.api.mu.Lock()
		defer tc.api.mu.Unlock()
		for i := len(tc.api.calls) - 1; i >= 0; i-- {
			if rest, ok := strings.CutPrefix(tc.api.calls[i], "GET /occurrences?"); ok {
				q, err := url.ParseQuery(rest)
				require.NoError(t, err)
				return q.Get("status")
			}
		}
		t.Fatalf("%s listed no occurrences", path)
		return ""
	}

	// In flight: every state in flight by default, running on its own.
	page := body(t, tc.get(session, "/ui/inflight"))
	require.Equal(t, "pending,dispatching,retrying,awaiting_ack,running", statusAsked("/ui/inflight"))
	require.Contains(t, page, `<option value="running" >running</option>`)
	require.Contains(t, page, `<span class="badge warn">running</span> accepted, not yet completed; times out <time datetime="2029-12-30T08:30:00Z"`)
	page = body(t, tc.get(session, "/ui/inflight?state=running"))
	require.Equal(t, "running", statusAsked("/ui/inflight?state=running"))
	require.Contains(t, page, `<option value="running" selected>running</option>`)
	res := tc.get(session, "/ui/inflight?state=ran")
	page = body(t, res)
	require.Equal(t, http.StatusBadRequest, res.StatusCode)
	require.Contains(t, page, "choose due, dispatching, retrying, awaiting ack or running")

	// Failures: timed out among them by default, and on its own.
	page = body(t, tc.get(session, "/ui/failures"))
	require.Equal(t, "failed,timed_out,missed", statusAsked("/ui/failures"))
	require.Contains(t, page, `<span class="badge bad">timed_out</span>`)
	require.Contains(t, page, "the run timed out")
	require.Contains(t, page, `<option value="failed,timed_out,missed" selected>failed, timed out or missed</option>`)
	page = body(t, tc.get(session, "/ui/failures?status=timed_out"))
	require.Equal(t, "timed_out", statusAsked("/ui/failures?status=timed_out"))
	require.Contains(t, page, `<option value="timed_out" selected>timed out</option>`)
	page = body(t, tc.get(session, "/ui/failures/replay?status=timed_out&window=24h"))
	require.Contains(t, page, `<input type="hidden" name="status" value="timed_out">`)

	// The overview: running rows in the backlog, explained; timed-out ones
	// among the last hour's failures.
	page = body(t, tc.get(session, "/ui/"))
	require.Regexp(t, `<tr><td>running</td><td>accepted by its receiver, which runs the job; waits for its completion `+
		`by callback \(or times out\)</td><td class="num">3</td></tr>`, page)
	require.Contains(t, page, `id="failed-hour">3<`, "1 failed and 2 timed out")
	require.Contains(t, page, `<span class="badge bad">timed_out</span>`)
	require.Contains(t, page, `<span class="badge warn">running</span>`)

	// The event page: a timed-out delivery is a failure, replayable; a
	// running one is neither.
	page = body(t, tc.get(session, "/ui/events/ev1"))
	require.Contains(t, page, "0 completed, 2 failed in the deliveries below")
	require.Equal(t, 2, strings.Count(page, `action="/ui/occurrences/oc1/replay"`), "the failed and the timed-out rows")
}

// indentJSON indents a run's output for people; what does not parse is
// shown as it is.
func TestIndentJSON(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{`{"b":[1,2],"a":"\u0026\u003c"}`, "{\n  \"a\": \"&<\",\n  \"b\": [\n    1,\n    2\n  ]\n}"},
		{`12345678901234567890`, `12345678901234567890`},
		{`"done"`, `"done"`},
		{`{not json`, `{not json`},
	} {
		require.Equal(t, c.want, indentJSON([]byte(c.in)), c.in)
	}
}

// The form offers the overlap policies (allow for a new event) and sends
// the one chosen; the API's refusal shows under Overlap; the edit form and
// the event page read the event's policy back.
func TestEventFormOverlap(t *testing.T) {
	t.Parallel()
	tc := newTestConsole(t)
	session, csrf := tc.signIn()
	buffered := strings.Replace(callbackEvent, `"completion":"callback",`, `"completion":"callback","overlap":"buffer_all",`, 1)
	var created capture
	tc.api.mu.Lock()
	tc.api.answers["POST /events"] = created.answer(201, buffered)
	tc.api.answers["GET /events/ev1"] = jsonAnswer(200, buffered)
	tc.api.mu.Unlock()

	page := body(t, tc.get(session, "/ui/events/new"))
	require.Contains(t, page, `<option value="allow" selected>allow: fire anyway (default)</option>`)
	form := url.Values{"csrf": {csrf}, "name": {"hourly sync"}, "start_time": {"tomorrow at 9am"},
		"rule_kind": {"rrule"}, "rule": {"FREQ=HOURLY"}, "action_type": {"webhook"}, "target_kind": {"url"},
		"target": {"https://example.com/h"}, "completion": {"callback"}, "overlap": {"buffer_all"}}
	res := tc.post(session, "/ui/events/new", form)
	_ = body(t, res)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, "buffer_all", created.last(t)["overlap"])

	tc.api.mu.Lock()
	tc.api.answers["POST /events"] = jsonAnswer(400, `{"error":"overlap: must be one of \"allow\", \"skip\"","field":"overlap"}`)
	tc.api.mu.Unlock()
	form.Set("overlap", "queue")
	res = tc.post(session, "/ui/events/new", form)
	page = body(t, res)
	require.Equal(t, http.StatusBadRequest, res.StatusCode, page)
	require.Regexp(t, `<select id="f-overlap" name="overlap" aria-invalid="true">`, page)
	require.Regexp(t, `</select>\s*<p class="field-error" role="alert">must be one of`, page)

	page = body(t, tc.get(session, "/ui/events/ev1/edit"))
	require.Contains(t, page, `<option value="buffer_all" selected>`)
	page = body(t, tc.get(session, "/ui/events/ev1"))
	require.Contains(t, page, `<dd id="overlap">buffer all: every instant waits; they run one after another</dd>`)
}
