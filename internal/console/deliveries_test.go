package console

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/client"
)

// The fan-out views over the fake API: an event that targets the topic
// digest.daily (fanout_test.go's catalogue), an occurrence of it that
// fired to four subscriptions (one delivered, one failed, one filtered,
// one pending) with a second page of deliveries, and the attempts made
// for one subscription.

const topicEvent = `{"id":"ev1","name":"morning digest","description":"","start_time":"2030-01-07T08:00:00Z",
"timezone":"Europe/Paris","rrule":"FREQ=DAILY","schedule":null,"cron":null,"topic":"digest.daily",
"action":{"type":"topic","params":{"topic":"digest.daily"}},"metadata":{"region":"eu"},"tags":[],"status":"active",
"catch_up":"all","completion":"response","hmac_secret_set":false,"created_by":"master","version":1,
"created_at":"2029-12-01T00:00:00Z","updated_at":"2029-12-01T00:00:00Z"}`

const fanoutOccurrence = `{"id":"oc1","occurrence_id":"oc1","event_id":"ev1","scheduled_at":"2029-12-30T08:00:00Z",
"status":"failed","manual":false,"attempt_count":3,"error_message":"1 of 4 deliveries failed",
"fanout":{"subscriptions":4,"delivered":1,"failed":1,"filtered":1,"pending":1}}`

const fanoutAttempts = `[
{"id":"a1","occurrence_id":"oc1","attempt":1,"started_at":"2029-12-30T08:00:00Z","outcome":"completed","status_code":200,"subscription_id":"sub-ok"},
{"id":"a2","occurrence_id":"oc1","attempt":1,"started_at":"2029-12-30T08:00:00Z","outcome":"failed","status_code":503,"error":"HTTP 503","subscription_id":"sub-bad"},
{"id":"a3","occurrence_id":"oc1","attempt":1,"started_at":"2029-12-30T08:00:00Z","outcome":"retrying","error":"connection refused","subscription_id":"sub-slow"}]`

const fanoutDeliveries = `{"data":[
{"subscription_id":"sub-ok","endpoint_id":"ep1","status":"delivered","attempts":[
 {"id":"a1","occurrence_id":"oc1","attempt":1,"started_at":"2029-12-30T08:00:00Z","outcome":"completed","status_code":200,"subscription_id":"sub-ok"}]},
{"subscription_id":"sub-bad","endpoint_id":"ep2","status":"failed","error":"HTTP 503: <b>down</b>","attempts":[
 {"id":"a2","occurrence_id":"oc1","attempt":1,"started_at":"2029-12-30T08:00:00Z","outcome":"failed","status_code":503,"error":"HTTP 503","subscription_id":"sub-bad"}]},
{"subscription_id":"sub-eu","endpoint_id":"ep3","status":"filtered","attempts":[]},
{"subscription_id":"sub-slow","endpoint_id":"ep4","status":"pending","next_attempt_at":"2029-12-30T08:05:00Z","attempts":[
 {"id":"a3","occurrence_id":"oc1","attempt":1,"started_at":"2029-12-30T08:00:00Z","outcome":"retrying","error":"connection refused","subscription_id":"sub-slow"}]}],
"pagination":{"limit":100,"next_cursor":"c2"}}`

// deliveryConsole is fanoutConsole with the topic event and its fan-out
// occurrence.
func deliveryConsole(t *testing.T) *testConsole {
	tc := fanoutConsole(t)
	a := tc.api.answers
	a["GET /events/ev1"] = jsonAnswer(200, topicEvent)
	a["GET /occurrences/oc1"] = jsonAnswer(200, fanoutOccurrence)
	a["GET /occurrences/oc1/attempts"] = jsonAnswer(200, fanoutAttempts)
	a["GET /occurrences/oc1/deliveries"] = func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("cursor") == "c2" {
			jsonAnswer(200, `{"data":[],"pagination":{"limit":100}}`)(w, r)
			return
		}
		jsonAnswer(200, fanoutDeliveries)(w, r)
	}
	return tc
}

// replayForms finds the subscriptions a row's Replay would send again.
var replayForms = regexp.MustCompile(`name="subscription" value="([^"]+)"`)

func TestOccurrencePageShowsTheFanout(t *testing.T) {
	t.Parallel()
	tc := deliveryConsole(t)
	session, _ := tc.signIn()

	res := tc.get(session, "/ui/occurrences/oc1")
	page := body(t, res)
	require.Equal(t, http.StatusOK, res.StatusCode, page)
	require.True(t, tc.api.called("GET /occurrences/oc1/deliveries?limit=100"), "the first page of 100")
	require.Contains(t, page, `<a href="/ui/events/ev1">morning digest</a> · <a href="/ui/topics/digest.daily" id="occurrence-topic">topic digest.daily</a>`)
	require.Contains(t, page, `id="fanout-counts" data-subscriptions="4" data-delivered="1" data-failed="1" data-pending="1" data-filtered="1">4 subscriptions matched`)
	fanout := page[strings.Index(page, `id="fanout"`):strings.Index(page, `<h2>Attempts</h2>`)]
	for _, want := range []string{
		`<tr data-subscription="sub-bad" data-status="failed"><td><a href="/ui/subscriptions/sub-bad"><code>sub-bad</code></a></td>`,
		`<a href="/ui/endpoints/ep1">billing hooks</a>`, `<a href="/ui/endpoints/ep2"><code>ep2</code></a>`,
		`<span class="badge bad">failed</span>`, `<span class="badge ok">delivered</span>`,
		`<span class="badge warn">pending</span>`, `<span class="badge">filtered</span>`,
		`503 <span class="err-text">HTTP 503: &lt;b&gt;down&lt;/b&gt;</span>`,
		`<span class="err-text">connection refused</span>`, `datetime="2029-12-30T08:05:00Z"`,
		`action="/ui/occurrences/oc1/replay"`,
		`<a href="/ui/occurrences/oc1?deliveries=c2#fanout">More</a>`,
	} {
		require.Contains(t, fanout, want)
	}
	var replayable []string
	for _, m := range replayForms.FindAllStringSubmatch(fanout, -1) {
		replayable = append(replayable, m[1])
	}
	require.Equal(t, []string{"sub-ok", "sub-bad"}, replayable, "a delivered or failed delivery replays, not a filtered or pending one")
	require.NotContains(t, fanout, `<span class="err-text">HTTP 503</span>`, "a delivered row shows no error")

	// The whole occurrence's Replay sends the failed deliveries only.
	require.Contains(t, page, `id="replay"`)
	require.Contains(t, page, "Re-sends the failed deliveries only")
	// The Attempts table names each attempt's subscription.
	attempts := page[strings.Index(page, `id="attempts"`):]
	require.Contains(t, attempts, `<th scope="col">Subscription</th>`)
	require.Contains(t, attempts, `<a href="/ui/subscriptions/sub-slow"><code>sub-slow</code></a>`)
	// Each attempt's request, named by its subscription (fan-out attempts
	// share their numbers).
	require.Contains(t, attempts, `<div class="sent-request" id="request-a2">`+"\n"+`<h3>Attempt 1 · subscription <code>sub-bad</code></h3>`)

	// The next page: its cursor goes to the API, and the page links back.
	res = tc.get(session, "/ui/occurrences/oc1?deliveries=c2")
	page = body(t, res)
	require.Equal(t, http.StatusOK, res.StatusCode, page)
	require.True(t, tc.api.called("GET /occurrences/oc1/deliveries?cursor=c2&limit=100"))
	require.Contains(t, page, `id="fanout-empty">No more deliveries.`)
	require.Contains(t, page, `<a href="/ui/occurrences/oc1#fanout">← The first deliveries</a>`)

	// Nothing failed: no whole-occurrence Replay (the API would refuse it),
	// each row's still.
	tc.api.mu.Lock()
	tc.api.answers["GET /occurrences/oc1"] = jsonAnswer(200, strings.NewReplacer(`"status":"failed"`, `"status":"completed"`,
		`"failed":1`, `"failed":0`).Replace(fanoutOccurrence))
	tc.api.mu.Unlock()
	page = body(t, tc.get(session, "/ui/occurrences/oc1"))
	require.NotContains(t, page, `id="replay"`)
	require.Contains(t, page, `name="subscription" value="sub-bad"`)
}

// An occurrence of an event that runs an action has no Fan-out card, no
// Subscription column, and the console asks for no deliveries.
func TestOccurrencePageWithoutFanout(t *testing.T) {
	t.Parallel()
	tc := newTestConsole(t)
	session, _ := tc.signIn()
	page := body(t, tc.get(session, "/ui/occurrences/oc1"))
	require.Contains(t, page, `<a href="/ui/events/ev1">weekly report</a> · https://example.com/hook`)
	require.NotContains(t, page, `id="fanout"`)
	require.NotContains(t, page, `<th scope="col">Subscription</th>`)
	require.Contains(t, page, "Sends it again with the same delivery id")
	require.False(t, tc.api.called("GET /occurrences/oc1/deliveries"))
}

// A token that may not list the deliveries still sees the counts.
func TestFanoutCountsWhenTheDeliveriesCannotBeListed(t *testing.T) {
	t.Parallel()
	tc := deliveryConsole(t)
	tc.api.answers["GET /occurrences/oc1/deliveries"] = jsonAnswer(403, `{"error":"insufficient access"}`)
	session, _ := tc.signIn()
	res := tc.get(session, "/ui/occurrences/oc1")
	page := body(t, res)
	require.Equal(t, http.StatusOK, res.StatusCode, page)
	require.Contains(t, page, `data-failed="1"`)
	require.Contains(t, page, `id="fanout-unlisted"`)
	require.NotContains(t, page, `id="fanout-deliveries"`)
}

// A row's Replay sends that subscription's delivery again; the whole
// occurrence's sends the failed ones; refusals come back as the notice.
func TestReplayOneDeliveryOfAFanout(t *testing.T) {
	t.Parallel()
	tc := deliveryConsole(t)
	var retry sent
	tc.api.answers["POST /occurrences/oc1/retry"] = retry.answer(200, `{"id":"oc1","occurrence_id":"oc1","event_id":"ev1",
"scheduled_at":"2029-12-30T08:00:00Z","status":"retrying","fanout":{"subscriptions":4,"delivered":1,"failed":0,"filtered":1,"pending":2}}`)
	session, csrf := tc.signIn()

	res := tc.post(session, "/ui/occurrences/oc1/replay", url.Values{"csrf": {csrf}, "subscription": {"sub-bad"}},
		"Origin", tc.srv.URL)
	_ = body(t, res)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	got, _ := retry.last(t)
	require.Equal(t, map[string]any{"subscription_id": "sub-bad"}, got)
	require.Equal(t, "/ui/occurrences/oc1?notice="+urlQueryEscape(
		"Replay queued: the delivery to subscription sub-bad is sent again; the occurrence is retrying."),
		res.Header.Get("Location"))

	res = tc.post(session, "/ui/occurrences/oc1/replay", url.Values{"csrf": {csrf}}, "Origin", tc.srv.URL)
	_ = body(t, res)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	got, _ = retry.last(t)
	require.Nil(t, got, "the whole occurrence: no subscription named")
	require.Equal(t, "/ui/occurrences/oc1?notice="+urlQueryEscape(
		"Replay queued: its failed deliveries are sent again; the occurrence is retrying."), res.Header.Get("Location"))

	tc.api.mu.Lock()
	tc.api.answers["POST /occurrences/oc1/retry"] = jsonAnswer(409,
		`{"error":"subscription_id: this occurrence has no delivery to that subscription","field":"subscription_id"}`)
	tc.api.mu.Unlock()
	res = tc.post(session, "/ui/occurrences/oc1/replay", url.Values{"csrf": {csrf}, "subscription": {"sub-nope"}},
		"Origin", tc.srv.URL)
	_ = body(t, res)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, "/ui/occurrences/oc1?notice="+urlQueryEscape(
		"Replay failed: subscription_id: this occurrence has no delivery to that subscription"), res.Header.Get("Location"))
}

func TestSubscriptionPageListsRecentDeliveries(t *testing.T) {
	t.Parallel()
	tc := fanoutConsole(t)
	tc.api.answers["GET /subscriptions/"+sampleSubID+"/deliveries"] = func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("cursor") == "older" {
			jsonAnswer(200, `{"data":[],"pagination":{"limit":25}}`)(w, r)
			return
		}
		jsonAnswer(200, `{"data":[
{"id":"a9","occurrence_id":"oc9","attempt":2,"manual":true,"started_at":"2029-12-31T08:00:00Z","outcome":"completed","status_code":204,"subscription_id":"`+sampleSubID+`"},
{"id":"a8","occurrence_id":"oc9","attempt":1,"started_at":"2029-12-30T08:00:00Z","outcome":"failed","status_code":503,"error":"HTTP 503","subscription_id":"`+sampleSubID+`"}],
"pagination":{"limit":25,"next_cursor":"older"}}`)(w, r)
	}
	session, _ := tc.signIn()
	res := tc.get(session, "/ui/subscriptions/"+sampleSubID)
	page := body(t, res)
	require.Equal(t, http.StatusOK, res.StatusCode, page)
	require.True(t, tc.api.called("GET /subscriptions/"+sampleSubID+"/deliveries?limit=25"))
	card := page[strings.Index(page, `id="recent-deliveries"`):]
	require.Regexp(t, `(?s)<tr data-occurrence="oc9"><td><a href="/ui/occurrences/oc9"><code>oc9</code></a></td><td>2 \(manual\)</td>.*`+
		`<span class="badge ok">completed</span></td><td>204</td>.*<td>1</td>.*<span class="badge bad">failed</span> `+
		`<span class="err-text">HTTP 503</span></td><td>503</td>`, card, "newest first, as the API lists them")
	require.Contains(t, card, `href="/ui/subscriptions/`+sampleSubID+`?deliveries=older#recent-deliveries"`)

	page = body(t, tc.get(session, "/ui/subscriptions/"+sampleSubID+"?deliveries=older"))
	require.True(t, tc.api.called("GET /subscriptions/"+sampleSubID+"/deliveries?cursor=older&limit=25"))
	require.Contains(t, page, `id="no-deliveries">No older delivery.`)

	// A server without the route leaves the card saying so.
	tc.api.mu.Lock()
	delete(tc.api.answers, "GET /subscriptions/"+sampleSubID+"/deliveries")
	tc.api.mu.Unlock()
	res = tc.get(session, "/ui/subscriptions/"+sampleSubID)
	page = body(t, res)
	require.Equal(t, http.StatusOK, res.StatusCode, page)
	require.Contains(t, page, "The deliveries cannot be listed here.")
}

// The event form targets a topic: the catalogue is offered, the body names
// the topic instead of an action (no target, secret or callback), the
// API's refusals of topic and metadata show next to their fields, and an
// edit reads the topic back.
func TestEventFormTargetsATopic(t *testing.T) {
	t.Parallel()
	tc := deliveryConsole(t)
	var created, updated sent
	tc.api.answers["POST /events"] = created.answer(201, topicEvent)
	tc.api.answers["PUT /events/ev1"] = updated.answer(200, topicEvent)
	session, csrf := tc.signIn()

	page := body(t, tc.get(session, "/ui/events/new"))
	require.Contains(t, page, `<option value="topic" >topic (fan-out to its subscribers)</option>`)
	require.Contains(t, page, `<option value="digest.daily" >digest.daily · The daily digest</option>`)
	require.Contains(t, page, `<option value="digest.weekly" >digest.weekly</option>`)
	require.Contains(t, page, `<div id="f-topic-fields" hidden>`, "a new event runs a webhook")
	require.Contains(t, page, `<div id="f-action-fields" >`)

	form := url.Values{"csrf": {csrf}, "name": {"morning digest"}, "start_time": {"tomorrow at 9am"},
		"rule_kind": {"rrule"}, "rule": {"FREQ=DAILY"}, "timezone": {"Europe/Paris"}, "action_type": {"topic"},
		"topic": {"digest.daily"}, "metadata": {`{"region":"eu"}`}, "target_kind": {"url"},
		"target": {"https://ignored.example.com"}, "hmac_secret": {"ignored"}, "encryption_jwk": {"{not a key"},
		"completion": {"callback"}, "max_runtime": {"1h"}, "overlap": {"allow"}, "max_attempts": {"2"}}
	res := tc.post(session, "/ui/events/new", form)
	page = body(t, res)
	require.Equal(t, http.StatusSeeOther, res.StatusCode, page)
	got, _ := created.last(t)
	require.Equal(t, "digest.daily", got["topic"])
	require.Equal(t, "response", got["completion"], "a topic completes by its deliveries' answers")
	require.Equal(t, map[string]any{"region": "eu"}, got["metadata"])
	require.Equal(t, map[string]any{"max_attempts": float64(2)}, got["retry"])
	for _, absent := range []string{"action", "hmac_secret", "max_runtime", "webhook"} {
		require.NotContains(t, got, absent)
	}

	// No topic chosen: refused before the API.
	before := created.count()
	form.Set("topic", "")
	res = tc.post(session, "/ui/events/new", form)
	page = body(t, res)
	require.Equal(t, http.StatusBadRequest, res.StatusCode)
	require.Contains(t, page, `<p class="field-error" role="alert">choose a topic of the catalogue</p>`)
	require.Equal(t, before, created.count())

	// The API's refusals, next to their fields; the topic picker shown.
	for field, answer := range map[string]string{
		"topic":    `{"error":"topic: no topic named \"digest.hourly\": create it first (POST /topics)","field":"topic"}`,
		"metadata": `{"error":"metadata: at '': missing property 'region'","field":"metadata"}`,
	} {
		tc.api.mu.Lock()
		tc.api.answers["POST /events"] = jsonAnswer(400, answer)
		tc.api.mu.Unlock()
		form.Set("topic", "digest.hourly")
		res = tc.post(session, "/ui/events/new", form)
		page = body(t, res)
		require.Equal(t, http.StatusBadRequest, res.StatusCode, field)
		require.Contains(t, page, `<div id="f-topic-fields" >`, field)
		require.Contains(t, page, `<div id="f-action-fields" hidden>`, field)
		require.Contains(t, page, `<option value="digest.hourly" selected>digest.hourly</option>`,
			"a topic not in the catalogue is kept as chosen")
		if field == "topic" {
			require.Regexp(t, `id="f-topic" name="topic" aria-invalid="true">(?s:.*?)</select>\s*<p class="field-error" role="alert">no topic named &#34;digest.hourly&#34;`, page)
		} else {
			require.Regexp(t, `name="metadata"[^>]*>[^<]*</textarea>\s*<p class="field-error" role="alert">at &#39;&#39;: missing property &#39;region&#39;</p>`, page)
			require.Contains(t, page, "<details open>", "More options opens on the metadata's error")
		}
	}

	// Edit: the topic is chosen, and saving sends it back.
	page = body(t, tc.get(session, "/ui/events/ev1/edit"))
	require.Contains(t, page, `<option value="topic" selected>`)
	require.Contains(t, page, `<option value="digest.daily" selected>digest.daily · The daily digest</option>`)
	require.Contains(t, page, `<div id="f-topic-fields" >`)
	form.Set("topic", "digest.weekly")
	res = tc.post(session, "/ui/events/ev1/edit", form)
	page = body(t, res)
	require.Equal(t, http.StatusSeeOther, res.StatusCode, page)
	got, _ = updated.last(t)
	require.Equal(t, "digest.weekly", got["topic"])
	require.NotContains(t, got, "action")
}

// The event page names the topic and links its page.
func TestEventPageLinksItsTopic(t *testing.T) {
	t.Parallel()
	tc := deliveryConsole(t)
	session, _ := tc.signIn()
	res := tc.get(session, "/ui/events/ev1")
	page := body(t, res)
	require.Equal(t, http.StatusOK, res.StatusCode, page)
	require.Contains(t, page, `<dt>Target</dt><dd><a href="/ui/topics/digest.daily" id="event-topic">topic digest.daily</a>`)
	require.Contains(t, page, "<dt>Signing</dt><dd>each subscription's endpoint secret</dd>")
	require.Contains(t, page, `<dd id="completion">by its deliveries' answers`)
}

// A topic event's target reads "topic <name>", from its topic member or,
// without one, from its action's params.
func TestTopicEventTarget(t *testing.T) {
	t.Parallel()
	for name, raw := range map[string]string{
		"topic member": topicEvent,
		"action only":  strings.Replace(topicEvent, `"topic":"digest.daily",`, "", 1),
	} {
		var e client.Event
		require.NoError(t, json.Unmarshal([]byte(raw), &e), name)
		v := viewEvent(&e)
		if got, want := v.Target(), "topic digest.daily"; got != want {
			t.Errorf("%s: got %q, want %q", name, got, want)
		}
		if got, want := formFromEvent(v).Topic, "digest.daily"; got != want {
			t.Errorf("%s: the form reads the topic %q, want %q", name, got, want)
		}
	}
}
