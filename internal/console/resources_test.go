package console

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/client"
)

func mustCalendar(t *testing.T, s string) *client.Calendar {
	t.Helper()
	var c client.Calendar
	require.NoError(t, json.Unmarshal([]byte(s), &c))
	return &c
}

const sampleEndpoint = `{"id":"ep1","name":"billing hooks","description":"","url":"https://example.com/hooks?token=••••a1b2",
"headers":{"X-Api-Key":"••••c3d4"},"rate_limit":{"per_second":5},"max_concurrency":2,"timeout":"10s",
"auth":{"type":"basic","username":"svc"},"circuit":{"failures":3,"cool_down":"30s"},"tags":["billing"],
"state":"open","disabled_reason":"","state_changed_at":"2029-12-30T00:00:00Z","opened_at":"2029-12-30T00:00:00Z",
"cool_down_until":"2029-12-30T00:00:30Z","health":{"attempts":10,"succeeded":4,"success_ratio":0.4,
"since":"2029-12-29T23:00:00Z","latency_ms":{"p50":12,"p90":40,"p99":90},"consecutive_failures":3,
"last_error":"HTTP 500","last_error_at":"2029-12-30T00:00:00Z","last_success_at":null},
"previous_secret_expires_at":null,"version":3,"created_by":"master","created_at":"2029-12-01T00:00:00Z",
"updated_at":"2029-12-01T00:00:00Z"}`

const sampleCalendar = `{"id":"11111111-1111-4111-8111-111111111111","name":"holidays","timezone":"Europe/Prague",
"dates":["2030-01-01"],"ranges":[{"from":"2029-12-24","to":"2029-12-26"}],"rrules":["FREQ=WEEKLY;BYDAY=SU"],
"tags":[],"version":2,"created_by":"master","created_at":"2029-12-01T00:00:00Z","updated_at":"2029-12-01T00:00:00Z",
"replan_pending":true}`

const sampleChannel = `{"id":"ch1","name":"ops","type":"webhook","url":"https://ops.example.com/q","secret_set":true,
"to":[],"kinds":["circuit_opened"],"created_by":"master","created_at":"2029-12-01T00:00:00Z","updated_at":"2029-12-01T00:00:00Z"}`

const sampleCircuitHistory = `{"data":[
{"id":"c2","at":"2029-12-30T00:10:00Z","change":"disabled","from_state":"open","to_state":"disabled","reason":"manual",
"consecutive_failures":3,"subject":"alice","channel":"console"},
{"id":"c1","at":"2029-12-30T00:00:00Z","change":"opened","from_state":"healthy","to_state":"open",
"reason":"HTTP 500 <from> the receiver","consecutive_failures":3,"subject":"","channel":""}],
"pagination":{"limit":20,"next_cursor":"more"}}`

const sampleNotices = `{"data":[
{"id":"n2","at":"2029-12-30T00:10:00Z","kind":"test","summary":"Test notice for channel ops","outcome":"failed",
"answer":"post notice: HTTP 503","test":true},
{"id":"n1","at":"2029-12-30T00:00:00Z","kind":"circuit_opened","summary":"Endpoint billing: circuit opened",
"outcome":"delivered","answer":"HTTP 204","test":false}],"pagination":{"limit":25}}`

// resourceConsole is the test console with the calendars, endpoints and
// notification channels of the fake API.
func resourceConsole(t *testing.T) *testConsole {
	tc := newTestConsole(t)
	a := tc.api.answers
	a["GET /endpoints/ep1"] = jsonAnswer(200, sampleEndpoint)
	a["POST /endpoints/ep1/disable"] = jsonAnswer(200, strings.Replace(sampleEndpoint, `"state":"open"`, `"state":"disabled"`, 1))
	a["POST /endpoints/ep1/rotate-secret"] = jsonAnswer(200, strings.Replace(sampleEndpoint, `"version":3`, `"version":4,"secret":"whsec_rotated"`, 1))
	a["POST /endpoints"] = jsonAnswer(400, `{"error":"url: must be an http or https URL","field":"url"}`)
	a["GET /calendars"] = jsonAnswer(200, "["+sampleCalendar+"]")
	a["GET /calendars/11111111-1111-4111-8111-111111111111"] = jsonAnswer(200, sampleCalendar)
	a["DELETE /calendars/11111111-1111-4111-8111-111111111111"] = jsonAnswer(409, `{"error":"calendar is used by 2 events; remove it from them first"}`)
	a["PUT /calendars/11111111-1111-4111-8111-111111111111"] = jsonAnswer(412, `{"error":"calendar changed"}`)
	a["GET /notification-channels"] = jsonAnswer(200, "["+sampleChannel+"]")
	a["POST /notification-channels/ch1/test"] = jsonAnswer(200, `{"delivered":false,"error":"HTTP 503 from the receiver"}`)
	a["GET /endpoints/ep1/circuit-history"] = jsonAnswer(200, sampleCircuitHistory)
	a["GET /notification-channels/ch1"] = jsonAnswer(200, sampleChannel)
	a["GET /notification-channels/ch1/notices"] = jsonAnswer(200, sampleNotices)
	return tc
}

func TestResourcePagesRenderWithStrictCSP(t *testing.T) {
	t.Parallel()
	tc := resourceConsole(t)
	session, _ := tc.signIn()
	pages := map[string][]string{
		"/ui/":                     {"Open circuits", "See endpoints", "pending", "planned; fires at its instant", "ok, 1 handled"},
		"/ui/endpoints":            {"billing hooks", "40.0 %", "12 ms / 90 ms"},
		"/ui/endpoints?state=open": {"billing hooks"},
		"/ui/endpoints/new":        {"Consecutive failures that open it"},
		"/ui/endpoints/ep1": {"opens after 3 consecutive failures", "basic · user svc", "5 per second", "HTTP 500",
			"Circuit history", `data-change="opened"`, "HTTP 500 &lt;from&gt; the receiver", "alice (console)", "the breaker",
			"circuit-history ep1"},
		"/ui/endpoints/ep1/confirm/disable":                       {"Disable this endpoint?"},
		"/ui/calendars":                                           {"holidays", "re-planning"},
		"/ui/calendars/new":                                       {"Blocked ranges"},
		"/ui/calendars/11111111-1111-4111-8111-111111111111":      {"The next 12 months", "being re-planned"},
		"/ui/calendars/11111111-1111-4111-8111-111111111111/edit": {"2029-12-24..2029-12-26", "FREQ=WEEKLY;BYDAY=SU"},
		"/ui/notifications":                                       {"ops", "circuit_opened", "Add a channel", `href="/ui/notifications/ch1"`},
		"/ui/notifications/ch1":                                   {"Recent notices", "Endpoint billing: circuit opened", "HTTP 204", "post notice: HTTP 503", `value="ops"`},
	}
	for path, wants := range pages {
		res := tc.get(session, path)
		page := body(t, res)
		require.Equal(t, http.StatusOK, res.StatusCode, "%s: %s", path, page)
		for _, want := range wants {
			require.Contains(t, page, want, path)
		}
		require.Equal(t, contentSecurityPolicy, res.Header.Get("Content-Security-Policy"), path)
		require.NotContains(t, page, "<script>", path)
		require.NotContains(t, page, " style=", path)
		require.NotContains(t, page, testToken, path)
	}
	// The overview asked the API for open circuits and paused events.
	require.True(t, tc.api.called("GET /endpoints?limit=100&state=open"))
	require.True(t, tc.api.called("GET /events?limit=100&status=paused"))
}

func TestEndpointActionsGoThroughTheAPI(t *testing.T) {
	t.Parallel()
	tc := resourceConsole(t)
	session, csrf := tc.signIn()
	res := tc.post(session, "/ui/endpoints/ep1/do/disable", url.Values{"csrf": {csrf}})
	require.Equal(t, http.StatusSeeOther, res.StatusCode, body(t, res))
	require.Contains(t, res.Header.Get("Location"), "Endpoint+disabled")
	require.True(t, tc.api.called("POST /endpoints/ep1/disable"))

	// A rotation shows the new secret in its answer, once.
	res = tc.post(session, "/ui/endpoints/ep1/do/rotate-secret", url.Values{"csrf": {csrf}})
	page := body(t, res)
	require.Equal(t, http.StatusOK, res.StatusCode, page)
	require.Contains(t, page, "whsec_rotated")
	page = body(t, tc.get(session, "/ui/endpoints/ep1"))
	require.NotContains(t, page, "whsec_rotated")

	// Without the CSRF token nothing is sent.
	res = tc.post(session, "/ui/endpoints/ep1/do/enable", url.Values{})
	require.Equal(t, http.StatusForbidden, res.StatusCode)
	require.False(t, tc.api.called("POST /endpoints/ep1/enable"))

	// The API's validation error shows next to its field.
	res = tc.post(session, "/ui/endpoints/new", url.Values{"csrf": {csrf}, "name": {"x"}, "url": {"ftp://x"}})
	page = body(t, res)
	require.Equal(t, http.StatusBadRequest, res.StatusCode, page)
	require.Contains(t, page, `<p class="field-error" id="e-url-error">must be an http or https URL</p>`)
}

func TestCalendarRefusalsShowTheAPIsAnswer(t *testing.T) {
	t.Parallel()
	tc := resourceConsole(t)
	session, csrf := tc.signIn()
	id := "11111111-1111-4111-8111-111111111111"
	res := tc.post(session, "/ui/calendars/"+id+"/delete", url.Values{"csrf": {csrf}})
	require.Equal(t, http.StatusSeeOther, res.StatusCode, body(t, res))
	loc, err := url.Parse(res.Header.Get("Location"))
	require.NoError(t, err)
	require.Equal(t, "Not deleted: calendar is used by 2 events; remove it from them first", loc.Query().Get("problem"))

	page := body(t, tc.get(session, res.Header.Get("Location")))
	require.Contains(t, page, `<p class="error" role="alert">Not deleted: calendar is used by 2 events; remove it from them first</p>`)

	// An edit from a stale form is sent with If-Match and refused.
	res = tc.post(session, "/ui/calendars/"+id+"/edit", url.Values{"csrf": {csrf}, "name": {"h"}, "version": {"1"},
		"ranges": {"2030-12-24..2030-12-26"}})
	page = body(t, res)
	require.Equal(t, http.StatusBadRequest, res.StatusCode, page)
	require.Contains(t, page, "Someone changed this calendar")
}

func TestMonthViewMarksTheBlockedDays(t *testing.T) {
	t.Parallel()
	cal := mustCalendar(t, `{"id":"c","name":"n","timezone":"Europe/Prague","dates":["2030-01-01"],
"ranges":[{"from":"2030-02-10","to":"2030-02-12"}],"rrules":["FREQ=WEEKLY;BYDAY=SU"]}`)
	ms, err := months(cal, time.Date(2030, 1, 15, 10, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	require.Len(t, ms, 12)
	require.Equal(t, "January 2030", ms[0].Title)
	blocked := map[string]bool{}
	for _, m := range ms {
		for _, w := range m.Weeks {
			require.Len(t, w, 7)
			for _, d := range w {
				if d.Blocked {
					blocked[d.Date] = true
				}
			}
		}
	}
	for _, want := range []string{"2030-01-01", "2030-01-06", "2030-02-10", "2030-02-11", "2030-02-12"} {
		require.True(t, blocked[want], want)
	}
	require.False(t, blocked["2030-01-02"])
	// 2030-01-01 is a Tuesday: the first week has one padding day.
	require.Equal(t, 0, ms[0].Weeks[0][0].Day)
	require.Equal(t, 1, ms[0].Weeks[0][1].Day)
	// Four Sundays plus New Year in January 2030.
	require.Equal(t, 1+4, ms[0].Blocked)
}

func TestSearchOpensAnIDOrListsNames(t *testing.T) {
	t.Parallel()
	tc := resourceConsole(t)
	id := "22222222-2222-4222-8222-222222222222"
	tc.api.answers["GET /occurrences/"+id] = jsonAnswer(200, strings.Replace(sampleOccurrence, `"id":"oc1"`, `"id":"`+id+`"`, 1))
	// GET /events?key= finds ev1 by its key "cart-42"; "shared" stands in
	// two key scopes.
	tc.api.answers["GET /events"] = func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Query().Get("key") {
		case "cart-42":
			jsonAnswer(200, "["+sampleEvent+"]")(w, r)
		case "shared":
			jsonAnswer(200, "["+sampleEvent+","+sampleEvent+"]")(w, r)
		default:
			jsonAnswer(200, "[]")(w, r)
		}
	}
	session, _ := tc.signIn()
	res := tc.get(session, "/ui/search?q="+id)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, "/ui/occurrences/"+id, res.Header.Get("Location"))
	res = tc.get(session, "/ui/search?q=weekly")
	require.Equal(t, "/ui/events?q=weekly", res.Header.Get("Location"))
	res = tc.get(session, "/ui/search?q=cart-42")
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, "/ui/events/ev1", res.Header.Get("Location"), "an event's key opens its page")
	res = tc.get(session, "/ui/search?q=shared")
	require.Equal(t, "/ui/events?q=shared", res.Header.Get("Location"), "a key of two events lists by name")
	res = tc.get(session, "/ui/search?q="+strings.Repeat("k", 201))
	require.Equal(t, "/ui/events?q="+strings.Repeat("k", 201), res.Header.Get("Location"), "too long to be a key")

	// The not-found page of a signed-in user keeps the nav, no "Sign in".
	page := body(t, tc.get(session, "/ui/no-such-page"))
	require.Contains(t, page, `href="/ui/calendars"`)
	require.NotContains(t, page, "Sign in")
}

func TestEndpointEditSendsOnlyWhatChanged(t *testing.T) {
	t.Parallel()
	tc := resourceConsole(t)
	var got struct {
		body    map[string]any
		ifMatch string
	}
	done := make(chan struct{}, 1)
	tc.api.answers["PATCH /endpoints/ep1"] = func(w http.ResponseWriter, r *http.Request) {
		got.ifMatch = r.Header.Get("If-Match")
		_ = json.NewDecoder(r.Body).Decode(&got.body)
		done <- struct{}{}
		jsonAnswer(200, sampleEndpoint)(w, r)
	}
	session, csrf := tc.signIn()
	page := body(t, tc.get(session, "/ui/endpoints/ep1/edit"))
	require.Contains(t, page, `value="billing hooks"`)
	require.Contains(t, page, `name="version" value="3"`)

	// The form comes back as shown, with the name and the cool-down changed
	// and the rate limit emptied.
	form := url.Values{"csrf": {csrf}, "version": {"3"}, "name": {"billing hooks eu"},
		"url": {"https://example.com/hooks?token=••••a1b2"}, "tags": {"billing"}, "timeout": {"10s"},
		"max_concurrency": {"2"}, "rate_per_second": {""}, "failures": {"3"}, "cool_down": {"1m"}}
	res := tc.post(session, "/ui/endpoints/ep1/edit", form)
	require.Equal(t, http.StatusSeeOther, res.StatusCode, body(t, res))
	<-done
	require.Equal(t, `"ep1-v3"`, got.ifMatch)
	require.Equal(t, map[string]any{"name": "billing hooks eu", "rate_limit": nil,
		"circuit": map[string]any{"failures": float64(3), "cool_down": "1m"}}, got.body,
		"the fingerprinted URL and what did not change are not sent")
}

func TestEndpointSendTestShowsTheAnswer(t *testing.T) {
	t.Parallel()
	tc := resourceConsole(t)
	tc.api.answers["POST /endpoints/ep1/test"] = jsonAnswer(200, `{"delivered":false,"status_code":500,"duration_ms":12,`+
		`"error":"receiver answered 500","response_excerpt":"<b>boom</b>","truncated":false}`)
	session, csrf := tc.signIn()
	page := body(t, tc.get(session, "/ui/endpoints/ep1"))
	require.Contains(t, page, `id="send-test"`)
	require.NotContains(t, page, `id="test-result"`)

	res := tc.post(session, "/ui/endpoints/ep1/test", url.Values{"csrf": {csrf}})
	page = body(t, res)
	require.Equal(t, http.StatusOK, res.StatusCode, page)
	require.True(t, tc.api.called("POST /endpoints/ep1/test"))
	require.Contains(t, page, `id="test-result" data-delivered="false"`)
	require.Contains(t, page, `<dd id="test-status">500</dd>`)
	require.Contains(t, page, "receiver answered 500")
	require.Contains(t, page, "&lt;b&gt;boom&lt;/b&gt;", "the receiver's answer is escaped")

	// A refusal returns to the page with the API's message.
	tc.api.mu.Lock()
	tc.api.answers["POST /endpoints/ep1/test"] = jsonAnswer(400, `{"error":"endpoint ep1 is a nats broker endpoint","field":"id"}`)
	tc.api.mu.Unlock()
	res = tc.post(session, "/ui/endpoints/ep1/test", url.Values{"csrf": {csrf}})
	require.Equal(t, http.StatusSeeOther, res.StatusCode, body(t, res))
	require.Contains(t, res.Header.Get("Location"), "broker+endpoint")

	// Without the CSRF token nothing is sent.
	count := func() int {
		tc.api.mu.Lock()
		defer tc.api.mu.Unlock()
		n := 0
		for _, c := range tc.api.calls {
			if c == "POST /endpoints/ep1/test" {
				n++
			}
		}
		return n
	}
	before := count()
	res = tc.post(session, "/ui/endpoints/ep1/test", url.Values{})
	require.Equal(t, http.StatusForbidden, res.StatusCode)
	require.Equal(t, before, count())
}

func TestChannelEditSendsOnlyWhatChangedAndTestShowsOnItsPage(t *testing.T) {
	t.Parallel()
	tc := resourceConsole(t)
	var got map[string]any
	done := make(chan struct{}, 1)
	tc.api.answers["PATCH /notification-channels/ch1"] = func(w http.ResponseWriter, r *http.Request) {
		got = nil
		_ = json.NewDecoder(r.Body).Decode(&got)
		done <- struct{}{}
		jsonAnswer(200, sampleChannel)(w, r)
	}
	session, csrf := tc.signIn()
	page := body(t, tc.get(session, "/ui/notifications/ch1"))
	require.Contains(t, page, `action="/ui/notifications/ch1/edit"`)
	require.Contains(t, page, `value="circuit_opened" checked`)

	// Unchanged: nothing is sent.
	form := url.Values{"csrf": {csrf}, "name": {"ops"}, "url": {"https://ops.example.com/q"}, "kinds": {"circuit_opened"}}
	res := tc.post(session, "/ui/notifications/ch1/edit", form)
	require.Equal(t, http.StatusSeeOther, res.StatusCode, body(t, res))
	require.Contains(t, res.Header.Get("Location"), "Nothing+changed")
	require.False(t, tc.api.called("PATCH /notification-channels/ch1"))

	// The name and the kinds changed: only they are sent.
	form.Set("name", "ops pager")
	form["kinds"] = []string{"circuit_opened", "endpoint_disabled"}
	res = tc.post(session, "/ui/notifications/ch1/edit", form)
	require.Equal(t, http.StatusSeeOther, res.StatusCode, body(t, res))
	<-done
	require.Equal(t, map[string]any{"name": "ops pager", "kinds": []any{"circuit_opened", "endpoint_disabled"}}, got)
	require.Contains(t, res.Header.Get("Location"), "Channel+saved")

	// No kind ticked and tags typed: the empty list is sent (every kind),
	// and the tags scope the channel.
	delete(form, "kinds")
	form.Set("name", "ops")
	form.Set("tags", "billing, team-a")
	res = tc.post(session, "/ui/notifications/ch1/edit", form)
	require.Equal(t, http.StatusSeeOther, res.StatusCode, body(t, res))
	<-done
	require.Equal(t, map[string]any{"kinds": []any{}, "tags": []any{"billing", "team-a"}}, got)
	form["kinds"] = []string{"circuit_opened"}
	form.Del("tags")

	// The API's refusal shows next to its field.
	tc.api.mu.Lock()
	tc.api.answers["PATCH /notification-channels/ch1"] = jsonAnswer(400, `{"error":"url: must be https","field":"url"}`)
	tc.api.mu.Unlock()
	form.Set("url", "ftp://x")
	res = tc.post(session, "/ui/notifications/ch1/edit", form)
	page = body(t, res)
	require.Equal(t, http.StatusBadRequest, res.StatusCode, page)
	require.Contains(t, page, `<p class="field-error" id="n-url-error">must be https</p>`)

	// A test from the channel's page answers there.
	res = tc.post(session, "/ui/notifications/ch1/test", url.Values{"csrf": {csrf}, "back": {"channel"}})
	page = body(t, res)
	require.Equal(t, http.StatusOK, res.StatusCode, page)
	require.Contains(t, page, `id="test-result" data-delivered="false"`)
	require.Contains(t, page, "HTTP 503 from the receiver")
	require.Contains(t, page, "Recent notices")

	// Without the CSRF token nothing is sent.
	res = tc.post(session, "/ui/notifications/ch1/edit", url.Values{"name": {"x"}})
	require.Equal(t, http.StatusForbidden, res.StatusCode)
}

func TestEndpointEditShowsWhyTheURLCannotChangeKind(t *testing.T) {
	t.Parallel()
	tc := resourceConsole(t)
	tc.api.answers["PATCH /endpoints/ep1"] = jsonAnswer(409, `{"error":"url: endpoint is used by 2 events, which deliver `+
		`to an HTTP URL: a nats broker's URL would fail every delivery; create another endpoint for it","field":"url"}`)
	session, csrf := tc.signIn()
	form := url.Values{"csrf": {csrf}, "version": {"3"}, "name": {"billing hooks"}, "url": {"nats://127.0.0.1:4222"},
		"tags": {"billing"}, "timeout": {"10s"}, "max_concurrency": {"2"}, "rate_per_second": {"5"}, "failures": {"5"},
		"cool_down": {"30s"}}
	res := tc.post(session, "/ui/endpoints/ep1/edit", form)
	page := body(t, res)
	require.Equal(t, http.StatusBadRequest, res.StatusCode, page)
	require.Contains(t, page, "a nats broker&#39;s URL would fail every delivery", "the refusal is shown with the form")
	require.Contains(t, page, `value="nats://127.0.0.1:4222"`, "what was typed stays in the form")
}
