package console

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// The Topics and Subscriptions pages over the fake API: a topic with a
// schema and one without, a subscription to it delivering to ep1 ("billing
// hooks") with a filter, and one to a pattern, paused, to an endpoint the
// token cannot read.

const sampleTopic = `{"name":"digest.daily","description":"The daily digest","schema":{"type":"object","required":["region"]},
"version":3,"created_by":"master","created_at":"2029-12-01T00:00:00Z","updated_at":"2029-12-02T00:00:00Z"}`

const sampleSubID = "33333333-3333-4333-8333-333333333333"

const sampleSub = `{"id":"` + sampleSubID + `","topic":"digest.daily","endpoint_id":"ep1",
"filter":"metadata.region == \"eu\"","description":"EU digests","tags":["billing"],"paused":false,"version":2,
"created_by":"master","created_at":"2029-12-03T00:00:00Z","updated_at":"2029-12-03T00:00:00Z"}`

const patternSub = `{"id":"44444444-4444-4444-8444-444444444444","topic":"digest.*","endpoint_id":"ep-hidden",
"filter":null,"description":"","tags":[],"paused":true,"version":1,
"created_by":"alice","created_at":"2029-12-04T00:00:00Z","updated_at":"2029-12-04T00:00:00Z"}`

// sent is what the fake API was sent on one route: bodies and If-Match.
type sent struct {
	mu      sync.Mutex
	bodies  []map[string]any
	ifMatch []string
}

func (s *sent) answer(status int, reply string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		s.mu.Lock()
		s.bodies = append(s.bodies, m)
		s.ifMatch = append(s.ifMatch, r.Header.Get("If-Match"))
		s.mu.Unlock()
		jsonAnswer(status, reply)(w, r)
	}
}

func (s *sent) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.bodies)
}

func (s *sent) last(t *testing.T) (map[string]any, string) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	require.NotEmpty(t, s.bodies, "the API was not called")
	return s.bodies[len(s.bodies)-1], s.ifMatch[len(s.ifMatch)-1]
}

func fanoutConsole(t *testing.T) *testConsole {
	tc := newTestConsole(t)
	a := tc.api.answers
	a["GET /topics"] = jsonAnswer(200, `{"data":[`+sampleTopic+`,{"name":"digest.weekly","description":"","schema":null,
"version":1,"created_by":"master","created_at":"2029-12-01T00:00:00Z","updated_at":"2029-12-01T00:00:00Z"}],
"pagination":{"limit":25,"next_cursor":"ZGlnZXN0LndlZWtseQ"}}`)
	a["GET /topics/digest.daily"] = jsonAnswer(200, sampleTopic)
	a["GET /subscriptions"] = jsonAnswer(200, `{"data":[`+sampleSub+`,`+patternSub+`],"pagination":{"limit":25}}`)
	a["GET /subscriptions/"+sampleSubID] = jsonAnswer(200, sampleSub)
	a["GET /endpoints/ep1"] = jsonAnswer(200, sampleEndpoint)
	return tc
}

func TestTopicPagesRenderWithStrictCSP(t *testing.T) {
	t.Parallel()
	tc := fanoutConsole(t)
	session, _ := tc.signIn()
	pages := map[string][]string{
		"/ui/topics": {`href="/ui/topics/digest.daily"`, `data-schema="yes"`, `data-schema="no"`, "The daily digest",
			`id="topic-form"`, `href="/ui/topics?cursor=ZGlnZXN0LndlZWtseQ"`, `href="/ui/topics" aria-current="page"`},
		"/ui/topics/digest.daily": {"{\n  &#34;type&#34;: &#34;object&#34;,\n  &#34;required&#34;: [\n    &#34;region&#34;\n  ]\n}",
			`<a href="/ui/endpoints/ep1">billing hooks</a>`, `metadata.region == &#34;eu&#34;`, `id="delete-topic"`,
			`name="version" value="3"`, `<code>digest.*</code>`},
		"/ui/topics/digest.daily/delete": {"Delete this topic from the catalogue?", `action="/ui/topics/digest.daily/delete"`},
		"/ui/subscriptions": {`<a href="/ui/endpoints/ep1">billing hooks</a>`, `<code>ep-hidden</code>`, "every firing",
			`data-paused="true"`, `<option value="digest.daily">`, `<option value="ep1" >billing hooks`,
			"<code>scheduled_at</code>", `<code>metadata.region == &#34;eu&#34;</code>`, `id="subscription-form"`,
			`href="/ui/subscriptions" aria-current="page"`},
		"/ui/subscriptions/" + sampleSubID: {"Subscription to", `id="pause-subscription"`, `href="/ui/topics/digest.daily"`,
			`<a href="/ui/endpoints/ep1">billing hooks</a>`, `name="version" value="2"`, "EU digests",
			`<option value="ep1" selected>`},
		"/ui/subscriptions/" + sampleSubID + "/delete": {"Delete this subscription?"},
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
	// The topic page lists the subscriptions naming it exactly.
	require.True(t, tc.api.called("GET /subscriptions?limit=50&topic=digest.daily"))
	// Every page is in the nav.
	page := body(t, tc.get(session, "/ui/endpoints"))
	require.Contains(t, page, `<a href="/ui/topics" >Topics</a>`)
	require.Contains(t, page, `<a href="/ui/subscriptions" >Subscriptions</a>`)
}

// A token without admin access reads the catalogue and is told it is the
// operator's: no create or edit form, no Delete.
func TestTopicsForATokenWithoutAdminAccess(t *testing.T) {
	t.Parallel()
	tc := fanoutConsole(t)
	tc.api.answers["GET /tokens"] = jsonAnswer(403, `{"error":"insufficient access"}`)
	tc.api.answers["POST /topics"] = jsonAnswer(403, `{"error":"insufficient access"}`)
	tc.api.answers["PATCH /topics/digest.daily"] = jsonAnswer(403, `{"error":"insufficient access"}`)
	session, csrf := tc.signIn()
	for _, path := range []string{"/ui/topics", "/ui/topics/digest.daily"} {
		res := tc.get(session, path)
		page := body(t, res)
		require.Equal(t, http.StatusOK, res.StatusCode, page)
		require.Contains(t, page, `id="topics-forbidden">The catalogue is the operator&#39;s`, path)
		require.NotContains(t, page, `id="topic-form"`, path)
		require.NotContains(t, page, `id="delete-topic"`, path)
		require.Contains(t, page, "digest.daily", path)
	}
	// A form posted anyway gets the API's refusal where it lands.
	for path, want := range map[string]string{"/ui/topics": "/ui/topics?problem=Not+created%3A+insufficient+access",
		"/ui/topics/digest.daily/edit": "/ui/topics/digest.daily?problem=Not+saved%3A+insufficient+access"} {
		res := tc.post(session, path, url.Values{"csrf": {csrf}, "name": {"x.y"}, "description": {"d"}})
		_ = body(t, res)
		require.Equal(t, http.StatusSeeOther, res.StatusCode, path)
		require.Equal(t, want, res.Header.Get("Location"), path)
	}
}

func TestTopicCreateEditAndDelete(t *testing.T) {
	t.Parallel()
	tc := fanoutConsole(t)
	var created, patched sent
	tc.api.answers["POST /topics"] = created.answer(201, sampleTopic)
	tc.api.answers["PATCH /topics/digest.daily"] = patched.answer(200, sampleTopic)
	tc.api.answers["DELETE /topics/digest.daily"] = jsonAnswer(409,
		`{"error":"topic is in use: 2 subscriptions name it; delete them or point them elsewhere first"}`)
	session, csrf := tc.signIn()

	// The schema goes as JSON; the browser's CR LF line breaks are no matter.
	form := url.Values{"csrf": {csrf}, "name": {" digest.daily "}, "description": {"The daily digest"},
		"schema": {"{\r\n  \"type\": \"object\",\r\n  \"required\": [\"region\"]\r\n}"}}
	res := tc.post(session, "/ui/topics", form)
	_ = body(t, res)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, "/ui/topics/digest.daily?notice=Topic+created.", res.Header.Get("Location"))
	got, _ := created.last(t)
	require.Equal(t, map[string]any{"name": "digest.daily", "description": "The daily digest",
		"schema": map[string]any{"type": "object", "required": []any{"region"}}}, got)

	// No schema: the member is left out.
	form.Set("schema", " ")
	form.Set("description", "")
	res = tc.post(session, "/ui/topics", form)
	_ = body(t, res)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	got, _ = created.last(t)
	require.Equal(t, map[string]any{"name": "digest.daily"}, got)

	// A schema that is not JSON never reaches the API.
	before := created.count()
	form.Set("schema", "{type: object")
	res = tc.post(session, "/ui/topics", form)
	page := body(t, res)
	require.Equal(t, http.StatusBadRequest, res.StatusCode, page)
	require.Contains(t, page, `<p class="field-error" id="tp-schema-error">must be a JSON document`)
	require.Contains(t, page, `>{type: object</textarea>`)
	require.Equal(t, before, created.count())

	// The API's refusals show next to their field, what was typed kept.
	tc.api.mu.Lock()
	tc.api.answers["POST /topics"] = jsonAnswer(400,
		`{"error":"schema: is not a valid JSON Schema: type must be a string or an array","field":"schema"}`)
	tc.api.mu.Unlock()
	form.Set("schema", `{"type": 7}`)
	res = tc.post(session, "/ui/topics", form)
	page = body(t, res)
	require.Equal(t, http.StatusBadRequest, res.StatusCode, page)
	require.Contains(t, page, `<p class="field-error" id="tp-schema-error">is not a valid JSON Schema: type must be a string or an array</p>`)
	require.Contains(t, page, `aria-invalid="true" aria-describedby="tp-schema-error">{&#34;type&#34;: 7}</textarea>`)
	tc.api.mu.Lock()
	tc.api.answers["POST /topics"] = jsonAnswer(409, `{"error":"name: a topic named \"digest.daily\" exists","field":"name"}`)
	tc.api.mu.Unlock()
	res = tc.post(session, "/ui/topics", form)
	page = body(t, res)
	require.Equal(t, http.StatusBadRequest, res.StatusCode, page)
	require.Contains(t, page, `<p class="field-error" id="tp-name-error">a topic named &#34;digest.daily&#34; exists</p>`)

	// An edit sends only what changed, conditional on the version read:
	// the schema as shown (indented, CR LF) is unchanged.
	edit := url.Values{"csrf": {csrf}, "version": {"3"}, "description": {"The daily digest"},
		"schema": {strings.ReplaceAll(prettySchema(rawJSON(`{"type":"object","required":["region"]}`)), "\n", "\r\n")}}
	res = tc.post(session, "/ui/topics/digest.daily/edit", edit)
	_ = body(t, res)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Contains(t, res.Header.Get("Location"), "Nothing+changed")
	require.Zero(t, patched.count())

	edit.Set("description", "Digests, daily")
	res = tc.post(session, "/ui/topics/digest.daily/edit", edit)
	_ = body(t, res)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, "/ui/topics/digest.daily?notice=Topic+saved.", res.Header.Get("Location"))
	got, ifMatch := patched.last(t)
	require.Equal(t, map[string]any{"description": "Digests, daily"}, got)
	require.Equal(t, `"digest.daily-v3"`, ifMatch)

	// An emptied schema box removes the schema: null.
	edit.Set("description", "The daily digest")
	edit.Set("schema", "")
	res = tc.post(session, "/ui/topics/digest.daily/edit", edit)
	_ = body(t, res)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	got, _ = patched.last(t)
	require.Equal(t, map[string]any{"schema": nil}, got)

	// A stale form is refused, not merged.
	tc.api.mu.Lock()
	tc.api.answers["PATCH /topics/digest.daily"] = jsonAnswer(412, `{"error":"the topic changed since it was read"}`)
	tc.api.mu.Unlock()
	edit.Set("schema", `{"type":"object"}`)
	res = tc.post(session, "/ui/topics/digest.daily/edit", edit)
	page = body(t, res)
	require.Equal(t, http.StatusBadRequest, res.StatusCode, page)
	require.Contains(t, page, "Someone changed this topic since you opened the form")
	require.Contains(t, page, `>{&#34;type&#34;:&#34;object&#34;}</textarea>`)

	// Delete is refused while a subscription names the topic: the API's
	// answer is shown on the topic's page.
	res = tc.post(session, "/ui/topics/digest.daily/delete", url.Values{"csrf": {csrf}})
	_ = body(t, res)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	page = body(t, tc.get(session, res.Header.Get("Location")))
	require.Contains(t, page, `<p class="error" role="alert">Not deleted: topic is in use: 2 subscriptions name it; delete them or point them elsewhere first</p>`)
	tc.api.mu.Lock()
	tc.api.answers["DELETE /topics/digest.daily"] = jsonAnswer(204, ``)
	tc.api.mu.Unlock()
	res = tc.post(session, "/ui/topics/digest.daily/delete", url.Values{"csrf": {csrf}})
	_ = body(t, res)
	require.Equal(t, "/ui/topics?notice=Topic+deleted.", res.Header.Get("Location"))

	// Without the CSRF token nothing is sent.
	res = tc.post(session, "/ui/topics", url.Values{"name": {"x.y"}})
	require.Equal(t, http.StatusForbidden, res.StatusCode, body(t, res))
}

func rawJSON(s string) *json.RawMessage {
	raw := json.RawMessage(s)
	return &raw
}

func TestSubscriptionListFilters(t *testing.T) {
	t.Parallel()
	tc := fanoutConsole(t)
	tc.api.answers["GET /subscriptions"] = jsonAnswer(200, `{"data":[`+patternSub+`],"pagination":{"limit":25,"next_cursor":"c2"}}`)
	session, _ := tc.signIn()
	page := body(t, tc.get(session, "/ui/subscriptions?topic=digest.*&paused=true&tags=billing,+ops"))
	require.True(t, tc.api.called("GET /subscriptions?limit=25&paused=true&tags=billing&tags=ops&topic=digest.%2A"))
	require.Contains(t, page, `<option value="true" selected>paused</option>`)
	require.Contains(t, page, `name="topic" value="digest.*"`)
	// The next page keeps the filters; the create form's topic is the one
	// filtered on.
	require.Contains(t, page, `href="/ui/subscriptions?cursor=c2&amp;paused=true&amp;tags=billing%2C&#43;ops&amp;topic=digest.%2A" rel="next"`)
	require.Contains(t, page, `<input id="s-topic" name="topic" value="digest.*"`)
	require.Contains(t, page, `action="/ui/subscriptions?paused=true&amp;tags=billing%2C&#43;ops&amp;topic=digest.%2A"`)

	// An empty filtered list says so.
	tc.api.mu.Lock()
	tc.api.answers["GET /subscriptions"] = jsonAnswer(200, `{"data":[],"pagination":{"limit":25}}`)
	tc.api.mu.Unlock()
	page = body(t, tc.get(session, "/ui/subscriptions?paused=false"))
	require.Contains(t, page, "No subscription matches these filters.")
	page = body(t, tc.get(session, "/ui/subscriptions"))
	require.Contains(t, page, "No subscriptions yet")
}

func TestSubscriptionCreateShowsTheFilterErrorNextToTheField(t *testing.T) {
	t.Parallel()
	tc := fanoutConsole(t)
	var created sent
	tc.api.answers["POST /subscriptions"] = created.answer(201, sampleSub)
	session, csrf := tc.signIn()

	form := url.Values{"csrf": {csrf}, "topic": {"digest.daily"}, "endpoint_id": {"ep1"},
		"filter": {"metadata.region ==\r\n  \"eu\""}, "description": {"EU digests"}, "tags": {"billing, "}, "paused": {"true"}}
	res := tc.post(session, "/ui/subscriptions", form)
	_ = body(t, res)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, "/ui/subscriptions/"+sampleSubID+"?notice=Subscription+created.", res.Header.Get("Location"))
	got, _ := created.last(t)
	require.Equal(t, map[string]any{"topic": "digest.daily", "endpoint_id": "ep1", "filter": "metadata.region ==\n  \"eu\"",
		"description": "EU digests", "tags": []any{"billing"}, "paused": true}, got)

	// No filter, no tags, not paused: left out (every firing).
	form.Set("filter", "  ")
	form.Set("tags", "")
	form.Del("paused")
	form.Set("description", "")
	res = tc.post(session, "/ui/subscriptions", form)
	_ = body(t, res)
	got, _ = created.last(t)
	require.Equal(t, map[string]any{"topic": "digest.daily", "endpoint_id": "ep1"}, got)

	// The API names the filter with CEL's message: it shows under Filter,
	// what was typed kept.
	tc.api.mu.Lock()
	tc.api.answers["POST /subscriptions"] = jsonAnswer(400,
		`{"error":"filter: does not compile: ERROR: <input>:1:10: undeclared reference to 'regoin'","field":"filter"}`)
	tc.api.mu.Unlock()
	form.Set("filter", "metadata.x == regoin")
	res = tc.post(session, "/ui/subscriptions", form)
	page := body(t, res)
	require.Equal(t, http.StatusBadRequest, res.StatusCode, page)
	require.Contains(t, page, `aria-invalid="true" aria-describedby="s-filter-error">metadata.x == regoin</textarea>
  <p class="field-error" id="s-filter-error">does not compile: ERROR: &lt;input&gt;:1:10: undeclared reference to &#39;regoin&#39;</p>`)
	require.Contains(t, page, `<input id="s-topic" name="topic" value="digest.daily"`)
	require.Contains(t, page, `<option value="ep1" selected>`)

	// An unknown topic and a tag outside the token's scope: each under its
	// own field.
	for _, c := range []struct{ answer, want string }{
		{`{"error":"topic: no topic named \"digest.dayly\": create it first (POST /topics), or name a pattern such as \"digest.*\"","field":"topic"}`,
			`<p class="field-error" id="s-topic-error">no topic named &#34;digest.dayly&#34;`},
		{`{"error":"tags: outside token scope: ops","field":"tags"}`, `<p class="field-error" id="s-tags-error">outside token scope: ops</p>`},
		{`{"error":"endpoint_id: unknown endpoint x","field":"endpoint_id"}`, `<p class="field-error" id="s-endpoint-error">unknown endpoint x</p>`},
	} {
		tc.api.mu.Lock()
		tc.api.answers["POST /subscriptions"] = jsonAnswer(400, c.answer)
		tc.api.mu.Unlock()
		res = tc.post(session, "/ui/subscriptions", form)
		page = body(t, res)
		require.Equal(t, http.StatusBadRequest, res.StatusCode, page)
		require.Contains(t, page, c.want)
	}
}

func TestSubscriptionEditPauseAndDelete(t *testing.T) {
	t.Parallel()
	tc := fanoutConsole(t)
	var patched sent
	tc.api.answers["PATCH /subscriptions/"+sampleSubID] = patched.answer(200, sampleSub)
	var deleted sent
	tc.api.answers["DELETE /subscriptions/"+sampleSubID] = deleted.answer(204, ``)
	session, csrf := tc.signIn()
	path := "/ui/subscriptions/" + sampleSubID

	// The form as shown changes nothing.
	edit := url.Values{"csrf": {csrf}, "version": {"2"}, "topic": {"digest.daily"}, "endpoint_id": {"ep1"},
		"filter": {`metadata.region == "eu"`}, "description": {"EU digests"}, "tags": {"billing"}}
	res := tc.post(session, path+"/edit", edit)
	_ = body(t, res)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Contains(t, res.Header.Get("Location"), "Nothing+changed")
	require.Zero(t, patched.count())

	// A cleared filter is sent as null, alone, conditional on the version.
	edit.Set("filter", "")
	res = tc.post(session, path+"/edit", edit)
	_ = body(t, res)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, path+"?notice=Subscription+saved.", res.Header.Get("Location"))
	got, ifMatch := patched.last(t)
	require.Equal(t, map[string]any{"filter": nil}, got)
	require.Equal(t, `"`+sampleSubID+`-v2"`, ifMatch)

	// Other members, each only when changed; no tags is the empty list.
	edit.Set("filter", `metadata.region == "eu"`)
	edit.Set("topic", "digest.*")
	edit.Set("tags", "")
	edit.Set("description", "")
	res = tc.post(session, path+"/edit", edit)
	_ = body(t, res)
	got, _ = patched.last(t)
	require.Equal(t, map[string]any{"topic": "digest.*", "tags": []any{}, "description": nil}, got)

	// The API's refusal of a filter shows under it on the subscription's page.
	tc.api.mu.Lock()
	tc.api.answers["PATCH /subscriptions/"+sampleSubID] = jsonAnswer(400,
		`{"error":"filter: must be true or false, not string","field":"filter"}`)
	tc.api.mu.Unlock()
	edit = url.Values{"csrf": {csrf}, "version": {"2"}, "topic": {"digest.daily"}, "endpoint_id": {"ep1"},
		"filter": {`metadata.region`}, "description": {"EU digests"}, "tags": {"billing"}}
	res = tc.post(session, path+"/edit", edit)
	page := body(t, res)
	require.Equal(t, http.StatusBadRequest, res.StatusCode, page)
	require.Contains(t, page, `<p class="field-error" id="s-filter-error">must be true or false, not string</p>`)
	require.Contains(t, page, `>metadata.region</textarea>`)
	require.Contains(t, page, `id="edit-subscription-h"`)

	// Pause and Resume are PATCHes of paused, back to the page.
	tc.api.mu.Lock()
	tc.api.answers["PATCH /subscriptions/"+sampleSubID] = patched.answer(200, sampleSub)
	tc.api.mu.Unlock()
	res = tc.post(session, path+"/pause", url.Values{"csrf": {csrf}})
	_ = body(t, res)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Contains(t, res.Header.Get("Location"), path+"?notice=Paused")
	got, _ = patched.last(t)
	require.Equal(t, map[string]any{"paused": true}, got)
	res = tc.post(session, path+"/resume", url.Values{"csrf": {csrf}})
	_ = body(t, res)
	require.Contains(t, res.Header.Get("Location"), path+"?notice=Resumed")
	got, _ = patched.last(t)
	require.Equal(t, map[string]any{"paused": false}, got)
	// An endpoint the token cannot read is offered by its id, selected, so
	// an edit sends it back unchanged.
	tc.api.mu.Lock()
	tc.api.answers["GET /subscriptions/44444444-4444-4444-8444-444444444444"] = jsonAnswer(200, patternSub)
	tc.api.mu.Unlock()
	page = body(t, tc.get(session, "/ui/subscriptions/44444444-4444-4444-8444-444444444444"))
	require.Contains(t, page, `<option value="ep-hidden" selected>ep-hidden (not visible to your token)</option>`)
	require.Contains(t, page, `<option value="ep1" >billing hooks · https://example.com/hooks`)
	require.Contains(t, page, "a pattern: every topic it matches")
	// A paused subscription's page offers Resume.
	tc.api.mu.Lock()
	tc.api.answers["GET /subscriptions/"+sampleSubID] = jsonAnswer(200, strings.Replace(sampleSub, `"paused":false`, `"paused":true`, 1))
	tc.api.mu.Unlock()
	page = body(t, tc.get(session, path))
	require.Contains(t, page, `id="resume-subscription"`)
	require.NotContains(t, page, `id="pause-subscription"`)
	// A refusal (a token that may not change it) is shown on the page.
	tc.api.mu.Lock()
	tc.api.answers["PATCH /subscriptions/"+sampleSubID] = jsonAnswer(403, `{"error":"insufficient access"}`)
	tc.api.mu.Unlock()
	res = tc.post(session, path+"/resume", url.Values{"csrf": {csrf}})
	_ = body(t, res)
	loc, err := url.Parse(res.Header.Get("Location"))
	require.NoError(t, err)
	require.Equal(t, "Refused: insufficient access", loc.Query().Get("problem"))

	// Delete asks first; the confirmation posts the delete.
	page = body(t, tc.get(session, path+"/delete"))
	require.Contains(t, page, `<form method="post" action="`+path+`/delete" class="actions">`)
	require.Zero(t, deleted.count())
	res = tc.post(session, path+"/delete", url.Values{"csrf": {csrf}})
	_ = body(t, res)
	require.Equal(t, "/ui/subscriptions?notice=Subscription+deleted.", res.Header.Get("Location"))
	require.Equal(t, 1, deleted.count())
}

// The topic's page lists the events that target it (GET /events?topic=),
// each linked, with a link to the Events list filtered by the topic, which
// shows the filter in its form, keeps it on the next page and in the bulk
// form, and clears it with the others. None: the page says the topic can
// be deleted. The portal, which reads no events, shows no such card.
func TestTopicPageListsTheEventsThatTargetIt(t *testing.T) {
	t.Parallel()
	tc := fanoutConsole(t)
	topicEvent := strings.Replace(sampleEvent, `"name":"weekly report"`, `"name":"morning digest"`, 1)
	tc.api.answers["GET /events"] = func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("topic") == "Digest Daily" {
			jsonAnswer(400, `{"error":"topic: may hold only a-z 0-9 _ - in dot-separated segments","field":"topic"}`)(w, r)
			return
		}
		w.Header().Set("Link", `</events?cursor=abc&limit=25&topic=digest.daily>; rel="next"`)
		jsonAnswer(200, "["+topicEvent+"]")(w, r)
	}
	session, _ := tc.signIn()

	page := body(t, tc.get(session, "/ui/topics/digest.daily"))
	require.True(t, tc.api.called("GET /events?limit=20&topic=digest.daily"), "the newest 20 that target it")
	require.Contains(t, page, `<h2 id="topic-events-h">Events that target this topic</h2>`)
	require.Contains(t, page, `<tr data-event="ev1"><td><a href="/ui/events/ev1">morning digest</a></td><td><span class="badge ok">active</span></td>`)
	require.Contains(t, page, `The newest 1 are shown.`)
	require.Contains(t, page, `<a href="/ui/events?topic=digest.daily" id="topic-events-all">All events that target it</a>`)
	require.NotContains(t, page, `id="no-topic-events"`)

	page = body(t, tc.get(session, "/ui/events?topic=digest.daily"))
	require.True(t, tc.api.called("GET /events?limit=25&topic=digest.daily"))
	require.Contains(t, page, `name="topic" id="events-topic" value="digest.daily"`, "the filter is shown")
	require.Contains(t, page, `<a href="/ui/events">Clear</a>`, "and can be cleared")
	require.Contains(t, page, `<input type="hidden" name="topic" value="digest.daily">`, "a bulk action comes back to it")
	require.Contains(t, page, `href="/ui/events?cursor=abc&amp;topic=digest.daily" rel="next"`)
	require.Contains(t, page, `<a href="/ui/events/ev1">morning digest</a>`)

	// A bulk action's confirmation returns to the filtered list.
	page = body(t, tc.get(session, "/ui/events/bulk?action=pause&id=ev1&topic=digest.daily"))
	require.Contains(t, page, `<a href="/ui/events?topic=digest.daily">Cancel</a>`)
	require.Contains(t, page, `<input type="hidden" name="topic" value="digest.daily">`)

	// A malformed name: the API's refusal on the list.
	res := tc.get(session, "/ui/events?topic="+url.QueryEscape("Digest Daily"))
	page = body(t, res)
	require.Equal(t, http.StatusBadRequest, res.StatusCode, page)
	require.Contains(t, page, "topic: may hold only a-z 0-9 _ - in dot-separated segments")
	require.Contains(t, page, `value="Digest Daily"`)

	// None: the topic can go, once no subscription names it either.
	tc.api.mu.Lock()
	tc.api.answers["GET /events"] = jsonAnswer(200, `[]`)
	tc.api.mu.Unlock()
	page = body(t, tc.get(session, "/ui/topics/digest.daily"))
	require.Contains(t, page, `<p class="empty" id="no-topic-events">No event targets this topic: it can be deleted once no subscription names it exactly either.</p>`)
	require.NotContains(t, page, `id="topic-events-all"`)
	tc.api.mu.Lock()
	tc.api.answers["GET /subscriptions"] = jsonAnswer(200, `{"data":[],"pagination":{"limit":50}}`)
	tc.api.mu.Unlock()
	page = body(t, tc.get(session, "/ui/topics/digest.daily"))
	require.Contains(t, page, `<p class="empty" id="no-topic-events">No event targets this topic, and no subscription names it exactly: it can be deleted.</p>`)

	// In the portal the page has no events card and asks for no events.
	tc.withPortal("https://app.example.com/settings")
	portal := tc.openPortal()
	tc.api.mu.Lock()
	tc.api.calls = nil
	tc.api.mu.Unlock()
	res = tc.get(portal, "/portal/topics/digest.daily")
	page = body(t, res)
	require.Equal(t, http.StatusOK, res.StatusCode, page)
	require.Contains(t, page, `id="topic-name">digest.daily</code>`)
	require.NotContains(t, page, "Events that target this topic")
	require.False(t, tc.api.called("GET /events"), "the portal reads no events")
}
