package console

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// concurrentEvent is sampleEvent sharing the key customer-42, at most 2 in
// flight.
var concurrentEvent = strings.Replace(sampleEvent, `"catch_up":"all",`,
	`"catch_up":"all","concurrency":{"key":"customer-42","limit":2},`, 1)

// A running key and a paused one, the paused one's name using every
// character a key may hold besides letters and digits, and a next page.
const sampleKeys = `{"data":[
{"key":"customer-42","limit":2,"in_flight":2,"waiting":3,"paused":false,"paused_at":null,"paused_by":null},
{"key":"tenant_7.eu:a@b-c","limit":1,"in_flight":1,"waiting":5,"paused":true,"paused_at":"2029-12-30T08:00:00Z","paused_by":"alice"}],
"pagination":{"limit":25,"next_cursor":"Y3VzdG9tZXI"}}`

const sampleKey = `{"key":"customer-42","limit":2,"in_flight":2,"waiting":3,"paused":false,"paused_at":null,"paused_by":null}`

const pausedKey = `{"key":"customer-42","limit":2,"in_flight":2,"waiting":3,"paused":true,
"paused_at":"2029-12-30T08:00:00Z","paused_by":"alice"}`

// The form sends the concurrency key and limit when a key is typed and
// nothing without one; a limit that is not a number is refused before the
// API; the API's refusals show under Concurrency key or limit, what was
// typed kept; the edit form reads both back and an emptied key removes
// the key (null).
func TestEventFormConcurrency(t *testing.T) {
	t.Parallel()
	tc := newTestConsole(t)
	session, csrf := tc.signIn()
	var created, saved capture
	tc.api.mu.Lock()
	tc.api.answers["POST /events"] = created.answer(201, concurrentEvent)
	tc.api.answers["PUT /events/ev1"] = saved.answer(200, concurrentEvent)
	tc.api.mu.Unlock()

	page := body(t, tc.get(session, "/ui/events/new"))
	require.Contains(t, page, `<input id="f-concurrency-key" name="concurrency_key" value="" placeholder="customer-42" spellcheck="false" >`)
	require.Contains(t, page, `<input id="f-concurrency-limit" name="concurrency_limit" value="" inputmode="numeric" >`)

	form := url.Values{"csrf": {csrf}, "name": {"sync customer 42"}, "start_time": {"tomorrow at 9am"},
		"rule_kind": {"rrule"}, "rule": {"FREQ=HOURLY"}, "action_type": {"webhook"}, "target_kind": {"url"},
		"target": {"https://example.com/h"}, "concurrency_key": {" customer-42 "}, "concurrency_limit": {"2"}}
	res := tc.post(session, "/ui/events/new", form)
	_ = body(t, res)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, map[string]any{"key": "customer-42", "limit": float64(2)}, created.last(t)["concurrency"])

	// No key: nothing to send on a create, whatever the limit says.
	form.Set("concurrency_key", "")
	res = tc.post(session, "/ui/events/new", form)
	_ = body(t, res)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.NotContains(t, created.last(t), "concurrency")

	// A key without a limit goes to the API, which names the missing limit.
	form.Set("concurrency_key", "customer-42")
	form.Set("concurrency_limit", "")
	res = tc.post(session, "/ui/events/new", form)
	_ = body(t, res)
	require.Equal(t, map[string]any{"key": "customer-42"}, created.last(t)["concurrency"])

	// A limit that is not a number never reaches the API.
	sent := func() int {
		created.mu.Lock()
		defer created.mu.Unlock()
		return len(created.bodies)
	}
	before := sent()
	form.Set("concurrency_limit", "two")
	res = tc.post(session, "/ui/events/new", form)
	page = body(t, res)
	require.Equal(t, http.StatusBadRequest, res.StatusCode, page)
	require.Regexp(t, `id="f-concurrency-limit" name="concurrency_limit" value="two" inputmode="numeric" aria-invalid="true">\s*`+
		`<p class="field-error" role="alert">must be a whole number from 1 to 1000</p>`, page)
	require.Equal(t, before, sent())

	// The API's refusals, each under its own input, what was typed kept.
	for _, c := range []struct{ key, limit, answer, want string }{
		{"customer 42", "2", `{"error":"concurrency.key: may hold only letters, digits and . _ : @ -","field":"concurrency.key"}`,
			`id="f-concurrency-key" name="concurrency_key" value="customer 42" placeholder="customer-42" spellcheck="false" aria-invalid="true">\s*` +
				`<p class="field-error" role="alert">may hold only letters, digits and . _ : @ -</p>`},
		{"customer-42", "1001", `{"error":"concurrency.limit: must be from 1 to 1000","field":"concurrency.limit"}`,
			`id="f-concurrency-limit" name="concurrency_limit" value="1001" inputmode="numeric" aria-invalid="true">\s*` +
				`<p class="field-error" role="alert">must be from 1 to 1000</p>`},
		{"customer-42", "", `{"error":"concurrency.limit: required: how many occurrences of the key may be in flight at once","field":"concurrency.limit"}`,
			`id="f-concurrency-limit" name="concurrency_limit" value="" inputmode="numeric" aria-invalid="true">\s*` +
				`<p class="field-error" role="alert">required: how many occurrences`},
		{"customer-42", "2", `{"error":"concurrency: must be an object","field":"concurrency"}`,
			`id="f-concurrency-key" name="concurrency_key" value="customer-42" placeholder="customer-42" spellcheck="false" aria-invalid="true">\s*` +
				`<p class="field-error" role="alert">must be an object</p>`},
	} {
		tc.api.mu.Lock()
		tc.api.answers["POST /events"] = jsonAnswer(400, c.answer)
		tc.api.mu.Unlock()
		form.Set("concurrency_key", c.key)
		form.Set("concurrency_limit", c.limit)
		res = tc.post(session, "/ui/events/new", form)
		page = body(t, res)
		require.Equal(t, http.StatusBadRequest, res.StatusCode, page)
		require.Regexp(t, c.want, page, c.answer)
		require.Contains(t, page, `name="concurrency_key" value="`+c.key+`"`)
		require.Contains(t, page, `name="concurrency_limit" value="`+c.limit+`"`)
	}

	// Editing: both read back; a changed limit is sent; an emptied key
	// removes the key, the limit left in its input or not.
	tc.api.mu.Lock()
	tc.api.answers["GET /events/ev1"] = jsonAnswer(200, concurrentEvent)
	tc.api.mu.Unlock()
	page = body(t, tc.get(session, "/ui/events/ev1/edit"))
	require.Contains(t, page, `name="concurrency_key" value="customer-42"`)
	require.Contains(t, page, `name="concurrency_limit" value="2"`)
	require.Contains(t, page, "empty it to remove the key")
	edit := url.Values{"csrf": {csrf}, "name": {"weekly report"}, "start_time": {"2030-01-06T09:00:00+01:00"},
		"timezone": {"Europe/Prague"}, "rule_kind": {"rrule"}, "orig_kind": {"rrule"}, "rule": {"FREQ=WEEKLY;BYDAY=MO"},
		"action_type": {"webhook"}, "target_kind": {"url"}, "target": {"https://example.com/hook"},
		"concurrency_key": {"customer-42"}, "concurrency_limit": {"5"}}
	res = tc.post(session, "/ui/events/ev1/edit", edit)
	_ = body(t, res)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, map[string]any{"key": "customer-42", "limit": float64(5)}, saved.last(t)["concurrency"])
	edit.Set("concurrency_key", "")
	res = tc.post(session, "/ui/events/ev1/edit", edit)
	_ = body(t, res)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	b := saved.last(t)
	require.Contains(t, b, "concurrency")
	require.Nil(t, b["concurrency"], "an emptied key removes it")

	// An event without a key: empty inputs.
	tc.api.mu.Lock()
	tc.api.answers["GET /events/ev1"] = jsonAnswer(200, sampleEvent)
	tc.api.mu.Unlock()
	page = body(t, tc.get(session, "/ui/events/ev1/edit"))
	require.Contains(t, page, `name="concurrency_key" value=""`)
	require.Contains(t, page, `name="concurrency_limit" value=""`)
}

// The event page names its concurrency key and limit, linked to the key's
// page, or says none.
func TestEventPageShowsConcurrency(t *testing.T) {
	t.Parallel()
	tc := newTestConsole(t)
	session, _ := tc.signIn()
	page := body(t, tc.get(session, "/ui/events/ev1"))
	require.Contains(t, page, `<dt>Concurrency</dt><dd id="concurrency"><span class="muted">none</span></dd>`)

	tc.api.mu.Lock()
	tc.api.answers["GET /events/ev1"] = jsonAnswer(200, concurrentEvent)
	tc.api.mu.Unlock()
	page = body(t, tc.get(session, "/ui/events/ev1"))
	require.Contains(t, page, `<dd id="concurrency"><a href="/ui/concurrency/customer-42"><code>customer-42</code></a> (limit 2)</dd>`)
}

// The Concurrency page lists the keys with their limit, in flight,
// waiting and pause, links each to its page and pages with the API's
// cursor; the API's refusal is the error page.
func TestConcurrencyKeysPage(t *testing.T) {
	t.Parallel()
	tc := newTestConsole(t)
	session, _ := tc.signIn()

	res := tc.get(session, "/ui/concurrency")
	page := body(t, res)
	require.Equal(t, http.StatusOK, res.StatusCode, page)
	require.True(t, tc.api.called("GET /concurrency-keys?limit=25"))
	require.Regexp(t, `<a href="/ui/concurrency" aria-current="page">Concurrency</a>`, page)
	require.Contains(t, page, `<tr data-key="customer-42"><td><a href="/ui/concurrency/customer-42"><code>customer-42</code></a></td>
<td class="num">2</td><td class="num">2</td><td class="num">3</td>
<td><span class="muted">no</span></td></tr>`)
	require.Contains(t, page, `<tr data-key="tenant_7.eu:a@b-c"><td><a href="/ui/concurrency/tenant_7.eu:a@b-c">`)
	require.Regexp(t, `<span class="badge warn">paused</span> since <time datetime="2029-12-30T08:00:00Z"[^>]*>[^<]*</time> by alice</td>`, page)
	require.Contains(t, page, `<a href="/ui/concurrency?cursor=Y3VzdG9tZXI" rel="next">Next page</a>`)
	require.NotContains(t, page, "First page", "the first page links no first page")

	res = tc.get(session, "/ui/concurrency?cursor=Y3VzdG9tZXI")
	page = body(t, res)
	require.Equal(t, http.StatusOK, res.StatusCode, page)
	require.True(t, tc.api.called("GET /concurrency-keys?cursor=Y3VzdG9tZXI&limit=25"))
	require.Contains(t, page, `<a href="/ui/concurrency">First page</a>`)

	tc.api.mu.Lock()
	tc.api.answers["GET /concurrency-keys"] = jsonAnswer(200, `{"data":[],"pagination":{"limit":25}}`)
	tc.api.mu.Unlock()
	page = body(t, tc.get(session, "/ui/concurrency"))
	require.Contains(t, page, `<p class="empty" id="no-concurrency-keys">No event your token can read names a concurrency key.`)
	require.NotContains(t, page, `class="pager"`)

	tc.api.mu.Lock()
	tc.api.answers["GET /concurrency-keys"] = jsonAnswer(400, `{"error":"cursor: is not a cursor this server issued","field":"cursor"}`)
	tc.api.mu.Unlock()
	res = tc.get(session, "/ui/concurrency?cursor=forged")
	page = body(t, res)
	require.Equal(t, http.StatusBadRequest, res.StatusCode)
	require.Contains(t, page, "cursor: is not a cursor this server issued")

	tc.api.mu.Lock()
	tc.api.answers["GET /concurrency-keys"] = jsonAnswer(403, `{"error":"insufficient access"}`)
	tc.api.mu.Unlock()
	res = tc.get(session, "/ui/concurrency")
	page = body(t, res)
	require.Equal(t, http.StatusForbidden, res.StatusCode)
	require.Contains(t, page, "insufficient access")

	// Every call carried the session's token.
	tc.api.mu.Lock()
	defer tc.api.mu.Unlock()
	for i, call := range tc.api.calls {
		if strings.HasPrefix(call, "GET /concurrency-keys") {
			require.Equal(t, "Bearer "+testToken, tc.api.auth[i])
		}
	}
}

// A key's page shows its figures and pauses or resumes it with a CSRF form
// (POST /concurrency-keys/{key}/pause, /resume), then comes back with a
// notice; the API's 403 is shown on the page, a 404 is the error page.
func TestConcurrencyKeyPauseAndResume(t *testing.T) {
	t.Parallel()
	tc := newTestConsole(t)
	session, csrf := tc.signIn()
	var paused, resumed capture
	tc.api.mu.Lock()
	tc.api.answers["POST /concurrency-keys/customer-42/pause"] = paused.answer(200, pausedKey)
	tc.api.answers["POST /concurrency-keys/customer-42/resume"] = resumed.answer(200, sampleKey)
	tc.api.mu.Unlock()

	res := tc.get(session, "/ui/concurrency/customer-42")
	page := body(t, res)
	require.Equal(t, http.StatusOK, res.StatusCode, page)
	require.Regexp(t, `<a href="/ui/concurrency" aria-current="page">Concurrency</a>`, page)
	require.Contains(t, page, `<dd id="key-limit">2 `)
	require.Contains(t, page, `<dd id="key-in-flight">2</dd>`)
	require.Contains(t, page, `<dd id="key-waiting">3 · <a href="/ui/inflight?reason=concurrency_wait" id="key-waiting-link">`)
	require.Contains(t, page, `<dd id="key-paused">no</dd>`)
	require.Regexp(t, `<form method="post" action="/ui/concurrency/customer-42/pause" class="inline"><input type="hidden" name="csrf" value="`+
		csrf+`"><button type="submit" id="pause-key"`, page)
	require.NotContains(t, page, `id="resume-key"`)

	// Without the CSRF token, or signed out, nothing is sent.
	res = tc.post(session, "/ui/concurrency/customer-42/pause", url.Values{})
	require.Equal(t, http.StatusForbidden, res.StatusCode, body(t, res))
	res = tc.post(nil, "/ui/concurrency/customer-42/pause", url.Values{"csrf": {csrf}})
	require.Equal(t, http.StatusUnauthorized, res.StatusCode, body(t, res))
	require.False(t, tc.api.called("POST /concurrency-keys/customer-42/pause"))

	res = tc.post(session, "/ui/concurrency/customer-42/pause", url.Values{"csrf": {csrf}})
	_ = body(t, res)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.True(t, strings.HasPrefix(res.Header.Get("Location"), "/ui/concurrency/customer-42?notice=Paused"), res.Header.Get("Location"))
	require.Equal(t, []string{"Bearer " + testToken}, paused.auth)
	require.Equal(t, []string{"console"}, paused.via)

	tc.api.mu.Lock()
	tc.api.answers["GET /concurrency-keys/customer-42"] = jsonAnswer(200, pausedKey)
	tc.api.mu.Unlock()
	page = body(t, tc.get(session, "/ui/concurrency/customer-42?notice=Paused"))
	require.Contains(t, page, `<span class="badge warn" id="key-state">paused</span>`)
	require.Regexp(t, `<dd id="key-paused">since <time datetime="2029-12-30T08:00:00Z"[^>]*>[^<]*</time> by alice: none of its occurrences takes a slot`, page)
	require.Contains(t, page, `action="/ui/concurrency/customer-42/resume"`)
	require.NotContains(t, page, `id="pause-key"`)

	res = tc.post(session, "/ui/concurrency/customer-42/resume", url.Values{"csrf": {csrf}})
	_ = body(t, res)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.True(t, strings.HasPrefix(res.Header.Get("Location"), "/ui/concurrency/customer-42?notice=Resumed"), res.Header.Get("Location"))
	require.Len(t, resumed.auth, 1)

	// A token that may not change every event naming the key: the API's
	// 403 on the key's page.
	tc.api.mu.Lock()
	tc.api.answers["POST /concurrency-keys/customer-42/pause"] = jsonAnswer(403,
		`{"error":"your token cannot modify every event naming this concurrency key"}`)
	tc.api.mu.Unlock()
	res = tc.post(session, "/ui/concurrency/customer-42/pause", url.Values{"csrf": {csrf}})
	_ = body(t, res)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	loc := res.Header.Get("Location")
	require.True(t, strings.HasPrefix(loc, "/ui/concurrency/customer-42?problem=Refused"), loc)
	page = body(t, tc.get(session, loc))
	require.Contains(t, page, `<p class="error" role="alert">Refused: your token cannot modify every event naming this concurrency key</p>`)

	// A key no event of the token names.
	res = tc.get(session, "/ui/concurrency/nobody")
	page = body(t, res)
	require.Equal(t, http.StatusNotFound, res.StatusCode)
	require.Contains(t, page, "Not found, or not visible to your token.")
	res = tc.post(session, "/ui/concurrency/nobody/resume", url.Values{"csrf": {csrf}})
	page = body(t, res)
	require.Equal(t, http.StatusNotFound, res.StatusCode)
	require.Contains(t, page, "Not found, or not visible to your token.")
}

// waitingOccurrence is a due occurrence of concurrentEvent waiting for a
// slot of its key.
const waitingOccurrence = `{"id":"oc1","occurrence_id":"oc1","event_id":"ev1","scheduled_at":"2029-12-30T08:00:00Z",
"status":"pending","reason":"concurrency_wait","manual":false,"attempt_count":0,
"error_message":"waiting: concurrency key customer-42 is at its limit or paused"}`

// In flight filters by the reason concurrency_wait and says what a waiting
// row waits for; the occurrence page says why it waits, linking its key.
func TestWaitingOccurrencesShowTheirKey(t *testing.T) {
	t.Parallel()
	tc := newTestConsole(t)
	session, _ := tc.signIn()
	tc.api.mu.Lock()
	tc.api.answers["GET /occurrences"] = jsonAnswer(200, `{"data":[`+waitingOccurrence+`],"pagination":{"limit":25,"total":1}}`)
	tc.api.answers["GET /occurrences/oc1"] = jsonAnswer(200, waitingOccurrence)
	tc.api.answers["GET /occurrences/oc1/attempts"] = jsonAnswer(200, `[]`)
	tc.api.answers["GET /events/ev1"] = jsonAnswer(200, concurrentEvent)
	tc.api.mu.Unlock()

	res := tc.get(session, "/ui/inflight?reason=concurrency_wait")
	page := body(t, res)
	require.Equal(t, http.StatusOK, res.StatusCode, page)
	require.True(t, listedWith(tc, "reason=concurrency_wait"), "the API lists the waiting ones")
	require.Contains(t, page, `<option value="concurrency_wait" selected>`)
	require.Contains(t, page, `<span class="badge">due</span> <span class="tag">concurrency_wait</span> waiting for its concurrency key's slot`)
	require.Contains(t, page, "waiting: concurrency key customer-42 is at its limit or paused")

	res = tc.get(session, "/ui/inflight?reason=overlap")
	page = body(t, res)
	require.Equal(t, http.StatusBadRequest, res.StatusCode)
	require.Contains(t, page, `<span class="field-error" id="if-reason-error">choose any or concurrency_wait</span>`)

	page = body(t, tc.get(session, "/ui/occurrences/oc1"))
	require.Contains(t, page, `<dd id="reason"><span class="tag">concurrency_wait</span> waiting for a slot of its concurrency key `+
		`<a href="/ui/concurrency/customer-42"><code>customer-42</code></a></dd>`)
	require.Contains(t, page, `<dt>Why</dt><dd class="err-text">waiting: concurrency key customer-42 is at its limit or paused</dd>`)
}

// listedWith reports whether the console listed occurrences with param
// (name=value) in the query.
func listedWith(tc *testConsole, param string) bool {
	tc.api.mu.Lock()
	defer tc.api.mu.Unlock()
	for _, c := range tc.api.calls {
		if rest, ok := strings.CutPrefix(c, "GET /occurrences?"); ok && strings.Contains("&"+rest+"&", "&"+param+"&") {
			return true
		}
	}
	return false
}
