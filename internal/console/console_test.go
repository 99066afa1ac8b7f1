package console

import (
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const (
	testKey   = "0123456789abcdef0123456789abcdef-test-key"
	testToken = "qhr_test_token_that_must_never_leak"
)

// fakeAPI answers the console's API calls with canned JSON and records them.
type fakeAPI struct {
	mu      sync.Mutex
	calls   []string // "METHOD /path?query"
	auth    []string
	answers map[string]func(w http.ResponseWriter, r *http.Request)
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.calls = append(f.calls, r.Method+" "+r.URL.RequestURI())
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	h := f.answers[r.Method+" "+r.URL.Path]
	f.mu.Unlock()
	if h == nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"error":"not found"}`)
		return
	}
	h(w, r)
}

func (f *fakeAPI) called(prefix string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.calls {
		if strings.HasPrefix(c, prefix) {
			return true
		}
	}
	return false
}

func jsonAnswer(status int, body string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

const sampleEvent = `{"id":"ev1","name":"weekly report","description":"d","start_time":"2030-01-06T08:00:00Z",
"timezone":"Europe/Prague","rrule":"FREQ=WEEKLY;BYDAY=MO;BYHOUR=9;BYMINUTE=0","schedule":null,"cron":null,
"action":{"type":"webhook","params":{"url":"https://example.com/hook"}},"webhook":"https://example.com/hook",
"metadata":{"a":1},"tags":["reports"],"status":"active","retry":{"max_attempts":3},"catch_up":"all","timeout":"10s",
"hmac_secret_set":false,"created_by":"master","created_via":"console","version":1,"next_run_at":"2030-01-06T08:00:00Z",
"last_run_at":null,"last_status":"","created_at":"2029-12-01T00:00:00Z","updated_at":"2029-12-01T00:00:00Z"}`

const sampleOccurrence = `{"id":"oc1","occurrence_id":"oc1","event_id":"ev1","scheduled_at":"2029-12-30T08:00:00Z",
"status":"failed","manual":false,"attempt_count":1,"status_code":500,"response_body":"boom","error_message":"HTTP 500",
"started_at":"2029-12-30T08:00:00Z","completed_at":"2029-12-30T08:00:01Z"}`

func newFakeAPI() *fakeAPI {
	stats := `{"since":"2029-12-30T00:00:00Z","until":"2029-12-31T00:00:00Z","total":{"occurrences":3,
"by_status":{"completed":2,"failed":1},"attempts":3,"duration_ms":{"count":3,"p50":5,"p95":9,"p99":9},
"lateness_ms":{"count":3,"p50":12,"p95":40,"p99":40},"due":0,"retrying":0},"by_action":{}}`
	timeline := `{"since":"2029-12-30T00:00:00Z","until":"2029-12-30T00:02:00Z","step":"1m","buckets":[
{"start":"2029-12-30T00:00:00Z","attempts":2,"completed":1,"failed":1,"lateness_ms":{"count":2,"p50":3,"p95":9,"p99":9}},
{"start":"2029-12-30T00:01:00Z","attempts":0,"completed":0,"failed":0,"lateness_ms":{"count":0,"p50":0,"p95":0,"p99":0}}]}`
	status := `{"status":"ok","version":"test","instance_id":"i1","uptime":"1m","backends":{"database":"sqlite",
"database_status":"ok","coordination":"in-process","coordination_status":"ok"},"queue":{"pending":4,"completed":9},
"scheduler":{"dispatcher":{"runs":3,"last_run":"2029-12-30T00:00:00Z","result":1},"expander":{"runs":0}}}`
	attempts := `[{"id":"a1","attempt":1,"manual":false,"started_at":"2029-12-30T08:00:00Z","duration_ms":12,
"status_code":500,"outcome":"failed","error":"HTTP 500","response_excerpt":"boom","truncated":false,"lateness_ms":3}]`
	return &fakeAPI{answers: map[string]func(http.ResponseWriter, *http.Request){
		"GET /events": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Link", `</events?cursor=abc&limit=25>; rel="next"`)
			jsonAnswer(200, "["+sampleEvent+"]")(w, r)
		},
		"GET /events/ev1":                 jsonAnswer(200, sampleEvent),
		"GET /events/ev1/preview":         jsonAnswer(200, `{"timezone":"Europe/Prague","instants":[{"utc":"2030-01-06T08:00:00Z","local":"2030-01-06T09:00:00+01:00"}]}`),
		"GET /events/ev1/occurrences":     jsonAnswer(200, "["+sampleOccurrence+"]"),
		"GET /calendars":                  jsonAnswer(200, `[]`),
		"GET /events/ev1/exceptions":      jsonAnswer(200, `{"data":[]}`),
		"GET /events/ev1/history":         jsonAnswer(200, `{"data":[],"pagination":{"limit":50}}`),
		"GET /occurrences/oc1":            jsonAnswer(200, sampleOccurrence),
		"GET /occurrences/oc1/attempts":   jsonAnswer(200, attempts),
		"GET /occurrences":                jsonAnswer(200, `{"data":[`+sampleOccurrence+`],"pagination":{"page":1,"limit":25,"total":1}}`),
		"GET /stats":                      jsonAnswer(200, stats),
		"GET /stats/timeline":             jsonAnswer(200, timeline),
		"GET /status":                     jsonAnswer(200, status),
		"GET /tokens":                     jsonAnswer(200, `[{"id":"t1","type":"jwt","sub":"svc","access":"read","scope":["reports"],"expires_at":"2030-01-01T00:00:00Z","created_at":"2029-01-01T00:00:00Z"}]`),
		"GET /openapi.json":               jsonAnswer(200, `{"openapi":"3.0.3","info":{"title":"Qhronos","version":"1"},"paths":{"/events":{"get":{"summary":"List events","parameters":[{"name":"q","in":"query","schema":{"type":"string"}}],"responses":{"200":{"description":"ok","content":{"application/json":{"schema":{"type":"array","items":{"$ref":"#/components/schemas/Event"}}}}}}}}},"components":{"schemas":{"Event":{"type":"object"}}}}`),
		"POST /events/ev1/pause":          jsonAnswer(200, sampleEvent),
		"POST /schedules/preview":         jsonAnswer(200, `{"timezone":"UTC","instants":[{"utc":"2030-01-06T08:00:00Z","local":"2030-01-06T08:00:00Z"}]}`),
		"POST /occurrences/oc1/retry":     jsonAnswer(200, `{"id":"oc1","status":"retrying"}`),
		"POST /events/ev1/rotate-secret":  jsonAnswer(200, `{"event_id":"ev1","hmac_secret":"whsec_new"}`),
		"POST /occurrences/retry":         jsonAnswer(200, `{"requeued":1,"limit_reached":false}`),
		"DELETE /tokens/t1":               jsonAnswer(204, ``),
		"POST /tokens":                    jsonAnswer(200, `{"id":"t2","token":"eyJminted","type":"jwt","sub":"svc","access":"read","scope":["reports"],"expires_at":"2030-01-01T00:00:00Z","created_at":"2029-01-01T00:00:00Z"}`),
		"POST /events/ev1/trigger":        jsonAnswer(200, `{}`),
		"PUT /events/ev1":                 jsonAnswer(200, sampleEvent),
		"DELETE /events/ev1":              jsonAnswer(204, ``),
		"POST /events/ev1/resume":         jsonAnswer(200, sampleEvent),
		"GET /events/ev1/occurrences/404": jsonAnswer(404, `{"error":"not found"}`),
		"GET /endpoints":                  jsonAnswer(200, "["+sampleEndpoint+"]"),

		// The Concurrency pages' keys (concurrency_test.go).
		"GET /concurrency-keys":             jsonAnswer(200, sampleKeys),
		"GET /concurrency-keys/customer-42": jsonAnswer(200, sampleKey),
	}}
}

// testConsole is a console over a fake API, served by httptest.
type testConsole struct {
	t   *testing.T
	api *fakeAPI
	srv *httptest.Server
	c   *Console
}

func newTestConsole(t *testing.T) *testConsole {
	t.Helper()
	api := newFakeAPI()
	c, err := New(Options{API: api, EncryptionKey: testKey})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	srv := httptest.NewServer(c)
	t.Cleanup(srv.Close)
	return &testConsole{t: t, api: api, srv: srv, c: c}
}

// client is a browser-like client without redirects followed. It uses the
// test server's own transport: on http.DefaultTransport, another parallel
// test's server closing (httptest closes DefaultTransport's idle
// connections) broke a request just given a pooled connection.
func (tc *testConsole) client() *http.Client {
	c := *tc.srv.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}

func body(t *testing.T, res *http.Response) string {
	t.Helper()
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return string(b)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// signIn signs in with testToken and returns the session cookie and the
// forms' CSRF token.
func (tc *testConsole) signIn() (*http.Cookie, string) {
	t := tc.t
	t.Helper()
	res, err := tc.client().Get(tc.srv.URL + "/ui/login")
	require.NoError(t, err)
	page := body(t, res)
	pre := res.Cookies()
	m := csrfField.FindStringSubmatch(page)
	require.NotNil(t, m, page)
	req, _ := http.NewRequest("POST", tc.srv.URL+"/ui/login", strings.NewReader(url.Values{"token": {testToken},
		"csrf": {m[1]}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for _, ck := range pre {
		req.AddCookie(ck)
	}
	res, err = tc.client().Do(req)
	require.NoError(t, err)
	_ = body(t, res)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, "/ui/", res.Header.Get("Location"))
	var session *http.Cookie
	for _, ck := range res.Cookies() {
		if ck.Name == sessionCookie {
			session = ck
		}
	}
	require.NotNil(t, session)
	res = tc.get(session, "/ui/events")
	page = body(t, res)
	require.Equal(t, http.StatusOK, res.StatusCode, page)
	m = csrfField.FindStringSubmatch(page)
	require.NotNil(t, m)
	return session, m[1]
}

func (tc *testConsole) get(session *http.Cookie, path string) *http.Response {
	tc.t.Helper()
	req, _ := http.NewRequest("GET", tc.srv.URL+path, nil)
	if session != nil {
		req.AddCookie(session)
	}
	res, err := tc.client().Do(req)
	require.NoError(tc.t, err)
	return res
}

func (tc *testConsole) post(session *http.Cookie, path string, form url.Values, headers ...string) *http.Response {
	tc.t.Helper()
	req, _ := http.NewRequest("POST", tc.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	if session != nil {
		req.AddCookie(session)
	}
	res, err := tc.client().Do(req)
	require.NoError(tc.t, err)
	return res
}

func TestSignInKeepsTheTokenOnlyInASealedHttpOnlyCookie(t *testing.T) {
	t.Parallel()
	tc := newTestConsole(t)
	session, _ := tc.signIn()
	require.True(t, session.HttpOnly)
	require.Equal(t, http.SameSiteStrictMode, session.SameSite)
	require.Equal(t, Prefix, session.Path)
	require.NotContains(t, session.Value, testToken)
	require.NotContains(t, session.Value, "test_token")
	tc.api.mu.Lock()
	defer tc.api.mu.Unlock()
	for i, call := range tc.api.calls {
		require.NotContains(t, call, testToken, "a URL carried the token")
		require.Equal(t, "Bearer "+testToken, tc.api.auth[i], "every API call is made with the session's token")
	}
	require.Contains(t, tc.api.calls, "GET /events?limit=1", "sign-in verifies the token with the API")
}

func TestSessionCookieIsSecureUnderTLS(t *testing.T) {
	t.Parallel()
	sb, err := newSessionBox(testKey, time.Hour, time.Now)
	require.NoError(t, err)
	r := httptest.NewRequest("POST", "https://console.example/ui/login", nil)
	r.TLS = &tls.ConnectionState{}
	w := httptest.NewRecorder()
	require.NoError(t, sb.start(w, r, testToken))
	var found bool
	for _, ck := range w.Result().Cookies() {
		if ck.Name == sessionCookie {
			found = true
			require.True(t, ck.Secure)
			require.True(t, ck.HttpOnly)
		}
	}
	require.True(t, found)
}

func TestTamperedOrExpiredSessionIsRefused(t *testing.T) {
	t.Parallel()
	now := time.Now()
	clock := func() time.Time { return now }
	sb, err := newSessionBox(testKey, time.Hour, clock)
	require.NoError(t, err)
	w := httptest.NewRecorder()
	require.NoError(t, sb.start(w, httptest.NewRequest("POST", "/ui/login", nil), testToken))
	var ck *http.Cookie
	for _, c := range w.Result().Cookies() {
		if c.Name == sessionCookie {
			ck = c
		}
	}
	require.NotNil(t, ck)
	read := func(value string) bool {
		r := httptest.NewRequest("GET", "/ui/", nil)
		r.AddCookie(&http.Cookie{Name: sessionCookie, Value: value})
		_, ok := sb.read(r)
		return ok
	}
	require.True(t, read(ck.Value))
	tampered := []byte(ck.Value)
	tampered[len(tampered)/2] ^= 1
	require.False(t, read(string(tampered)))
	other, err := newSessionBox(testKey+"-other", time.Hour, clock)
	require.NoError(t, err)
	r := httptest.NewRequest("GET", "/ui/", nil)
	r.AddCookie(ck)
	_, ok := other.read(r)
	require.False(t, ok, "another key cannot open it")
	now = now.Add(time.Hour + time.Second)
	require.False(t, read(ck.Value), "expired")
}

func TestStateChangesNeedTheCSRFTokenAndSameOrigin(t *testing.T) {
	t.Parallel()
	tc := newTestConsole(t)
	session, csrf := tc.signIn()

	res := tc.post(session, "/ui/events/ev1/do/pause", url.Values{})
	require.Equal(t, http.StatusForbidden, res.StatusCode, body(t, res))
	res = tc.post(session, "/ui/events/ev1/do/pause", url.Values{"csrf": {"forged"}})
	require.Equal(t, http.StatusForbidden, res.StatusCode, body(t, res))
	res = tc.post(session, "/ui/events/ev1/do/pause", url.Values{"csrf": {csrf}}, "Origin", "https://evil.example")
	require.Equal(t, http.StatusForbidden, res.StatusCode, body(t, res))
	require.False(t, tc.api.called("POST /events/ev1/pause"), "no refused request reached the API")

	res = tc.post(session, "/ui/events/ev1/do/pause", url.Values{"csrf": {csrf}}, "Origin", tc.srv.URL)
	_ = body(t, res)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.True(t, tc.api.called("POST /events/ev1/pause"))
	require.Contains(t, res.Header.Get("Location"), "/ui/events/ev1?notice=")

	// The sign-in form is protected too (double submit).
	res = tc.post(nil, "/ui/login", url.Values{"token": {testToken}, "csrf": {"x"}})
	require.Equal(t, http.StatusForbidden, res.StatusCode, body(t, res))
}

// An opaque origin ("null": a sandboxed frame, a data: page) is a cross
// origin post even with a valid CSRF token (issue #34).
func TestStateChangesFromANullOriginAreRefused(t *testing.T) {
	t.Parallel()
	tc := newTestConsole(t)
	session, csrf := tc.signIn()

	res := tc.post(session, "/ui/events/ev1/do/pause", url.Values{"csrf": {csrf}}, "Origin", "null")
	require.Equal(t, http.StatusForbidden, res.StatusCode, body(t, res))
	res = tc.post(session, "/ui/events/ev1/do/pause", url.Values{}, "Origin", "null", "X-CSRF-Token", csrf)
	require.Equal(t, http.StatusForbidden, res.StatusCode, body(t, res))
	require.False(t, tc.api.called("POST /events/ev1/pause"), "no refused request reached the API")

	// The sign-in form too, with its own valid token.
	res, err := tc.client().Get(tc.srv.URL + "/ui/login")
	require.NoError(t, err)
	m := csrfField.FindStringSubmatch(body(t, res))
	require.NotNil(t, m)
	req, _ := http.NewRequest("POST", tc.srv.URL+"/ui/login", strings.NewReader(url.Values{"token": {testToken},
		"csrf": {m[1]}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "null")
	for _, ck := range res.Cookies() {
		req.AddCookie(ck)
	}
	res, err = tc.client().Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusForbidden, res.StatusCode, body(t, res))
	for _, ck := range res.Cookies() {
		require.NotEqual(t, sessionCookie, ck.Name, "no session from a null origin")
	}
}

func TestAnAPI401SignsTheUserOut(t *testing.T) {
	t.Parallel()
	tc := newTestConsole(t)
	session, _ := tc.signIn()
	tc.api.mu.Lock()
	tc.api.answers["GET /stats"] = jsonAnswer(401, `{"error":"token revoked"}`)
	tc.api.mu.Unlock()
	res := tc.get(session, "/ui/")
	_ = body(t, res)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, "/ui/login?ended=1", res.Header.Get("Location"))
	var cleared bool
	for _, ck := range res.Cookies() {
		if ck.Name == sessionCookie && ck.MaxAge < 0 {
			cleared = true
		}
	}
	require.True(t, cleared, "the session cookie is cleared")
}

func TestWithoutASessionPagesAskToSignIn(t *testing.T) {
	t.Parallel()
	tc := newTestConsole(t)
	for _, path := range []string{"/ui/", "/ui/events", "/ui/failures", "/ui/tokens", "/ui/live", "/ui/api", "/ui/concurrency"} {
		res := tc.get(nil, path)
		_ = body(t, res)
		require.Equal(t, http.StatusSeeOther, res.StatusCode, path)
		require.Equal(t, "/ui/login", res.Header.Get("Location"), path)
	}
	res := tc.post(nil, "/ui/events/ev1/do/delete", url.Values{})
	require.Equal(t, http.StatusUnauthorized, res.StatusCode, body(t, res))
	require.Empty(t, tc.api.calls)
}

func TestEveryPageRendersWithStrictCSP(t *testing.T) {
	t.Parallel()
	tc := newTestConsole(t)
	session, _ := tc.signIn()
	pages := map[string]string{
		"/ui/":                            "Deliveries per minute",
		"/ui/events":                      "weekly report",
		"/ui/events?q=week&status=paused": "weekly report",
		"/ui/events/new":                  "Next 10 instants",
		"/ui/events/ev1":                  "Every week on Monday at 09:00 (Europe/Prague)",
		"/ui/events/ev1/edit":             "FREQ=WEEKLY;BYDAY=MO;BYHOUR=9;BYMINUTE=0",
		"/ui/events/ev1/confirm/delete":   "Delete this event?",
		"/ui/occurrences/oc1":             "boom",
		"/ui/failures":                    "HTTP 500",
		"/ui/failures/replay":             "This re-sends",
		"/ui/live":                        "Occurrences appear here",
		"/ui/tokens":                      "svc",
		"/ui/tokens/t1/revoke":            "Revoke token t1?",
		"/ui/api":                         "List events",
		"/ui/concurrency":                 "tenant_7.eu:a@b-c",
		"/ui/concurrency/customer-42":     "the smallest limit its events name",
	}
	for path, want := range pages {
		res := tc.get(session, path)
		page := body(t, res)
		require.Equal(t, http.StatusOK, res.StatusCode, "%s: %s", path, page)
		require.Contains(t, page, want, path)
		require.Equal(t, contentSecurityPolicy, res.Header.Get("Content-Security-Policy"), path)
		require.Equal(t, "no-store", res.Header.Get("Cache-Control"), path)
		require.NotContains(t, page, "<script>", path)
		require.NotContains(t, page, " style=", path)
		require.NotContains(t, page, testToken, path)
	}
	res := tc.get(session, "/ui/no-such-page")
	require.Equal(t, http.StatusNotFound, res.StatusCode, body(t, res))
	res = tc.get(nil, "/ui/static/vendor/uplot/uPlot.iife.min.js")
	require.Equal(t, http.StatusOK, res.StatusCode, body(t, res))
}

func TestAPIFieldErrorsShowNextToTheirField(t *testing.T) {
	t.Parallel()
	tc := newTestConsole(t)
	session, csrf := tc.signIn()
	tc.api.mu.Lock()
	tc.api.answers["POST /events"] = jsonAnswer(400, `{"error":"rrule: unknown FREQ \"SOMETIMES\"","field":"rrule"}`)
	tc.api.mu.Unlock()
	form := url.Values{"csrf": {csrf}, "name": {"x"}, "rule_kind": {"rrule"}, "rule": {"FREQ=SOMETIMES"},
		"start_time": {"tomorrow"}, "target": {"https://example.com"}, "action_type": {"webhook"}}
	res := tc.post(session, "/ui/events/new", form)
	page := body(t, res)
	require.Equal(t, http.StatusBadRequest, res.StatusCode)
	require.Regexp(t, `data-error-for="rule"\s*>unknown FREQ &#34;SOMETIMES&#34;</p>`, page)
	require.Contains(t, page, `value="FREQ=SOMETIMES"`, "what the user typed is kept")

	form.Set("metadata", "{not json")
	res = tc.post(session, "/ui/events/new", form)
	page = body(t, res)
	require.Equal(t, http.StatusBadRequest, res.StatusCode)
	require.Contains(t, page, "must be valid JSON")

	// The live preview answers JSON naming the form field.
	res = tc.post(session, "/ui/preview", url.Values{"rule_kind": {"rrule"}, "rule": {"FREQ=DAILY"}}, "X-CSRF-Token", csrf)
	var pv previewAnswer
	require.NoError(t, json.Unmarshal([]byte(body(t, res)), &pv))
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.Len(t, pv.Instants, 1)
	// A bad zone and a bad rule: the API names the zone only; each error
	// still shows under its own field, in the preview and on submit.
	tc.api.mu.Lock()
	tc.api.answers["POST /schedules/preview"] = zoneThenRule
	tc.api.answers["POST /events"] = jsonAnswer(400, `{"error":"timezone: unknown time zone","field":"timezone"}`)
	tc.api.mu.Unlock()
	res = tc.post(session, "/ui/preview", url.Values{"timezone": {"Mars/Base"}, "rule_kind": {"rrule"},
		"rule": {"FREQ=SOMETIMES"}}, "X-CSRF-Token", csrf)
	pv = previewAnswer{}
	require.NoError(t, json.Unmarshal([]byte(body(t, res)), &pv))
	require.Equal(t, http.StatusBadRequest, res.StatusCode)
	require.Equal(t, "timezone", pv.Field)
	require.Equal(t, "unknown time zone", pv.Error)
	require.Equal(t, map[string]string{"timezone": "unknown time zone", "rule": "undefined frequency: SOMETIMES"}, pv.Errors)

	form.Set("metadata", "{}")
	form.Set("timezone", "Mars/Base")
	res = tc.post(session, "/ui/events/new", form)
	page = body(t, res)
	require.Equal(t, http.StatusBadRequest, res.StatusCode)
	require.Regexp(t, `id="f-timezone"[^>]*>\s*<p class="field-error" data-error-for="timezone"\s*>unknown time zone</p>`, page)
	require.Regexp(t, `data-error-for="rule"\s*>undefined frequency: SOMETIMES</p>`, page)

	// A bad zone with a good rule leaves the rule without an error.
	res = tc.post(session, "/ui/preview", url.Values{"timezone": {"Mars/Base"}, "rule_kind": {"rrule"},
		"rule": {"FREQ=DAILY"}}, "X-CSRF-Token", csrf)
	pv = previewAnswer{}
	require.NoError(t, json.Unmarshal([]byte(body(t, res)), &pv))
	require.Equal(t, map[string]string{"timezone": "unknown time zone"}, pv.Errors)
}

// zoneThenRule answers a schedule preview as the API does: an unknown zone
// first, else an undefined RRULE frequency, else one instant.
func zoneThenRule(w http.ResponseWriter, r *http.Request) {
	var b map[string]any
	_ = json.NewDecoder(r.Body).Decode(&b)
	switch {
	case b["timezone"] == "Mars/Base":
		jsonAnswer(400, `{"error":"timezone: unknown time zone","field":"timezone"}`)(w, r)
	case b["rrule"] == "FREQ=SOMETIMES":
		jsonAnswer(400, `{"error":"rrule: undefined frequency: SOMETIMES","field":"rrule"}`)(w, r)
	default:
		jsonAnswer(200, `{"timezone":"UTC","instants":[{"utc":"2030-01-01T09:00:00Z","local":"2030-01-01T09:00:00"}]}`)(w, r)
	}
}

func TestMintedTokenIsShownOnceInTheAnswerOnly(t *testing.T) {
	t.Parallel()
	tc := newTestConsole(t)
	session, csrf := tc.signIn()
	res := tc.post(session, "/ui/tokens", url.Values{"csrf": {csrf}, "sub": {"svc"}, "access": {"read"},
		"scope": {"reports"}, "expires": {"30d"}})
	page := body(t, res)
	require.Equal(t, http.StatusOK, res.StatusCode, page)
	require.Contains(t, page, `id="minted-token">eyJminted</code>`)
	require.Empty(t, res.Header.Get("Location"))
	res = tc.get(session, "/ui/tokens")
	require.NotContains(t, body(t, res), "eyJminted")
}

func TestDescribeRule(t *testing.T) {
	t.Parallel()
	start := time.Date(2030, 1, 6, 8, 0, 0, 0, time.UTC)
	for _, tt := range []struct{ kind, rule, zone, want string }{
		{"rrule", "FREQ=WEEKLY;BYDAY=MO,WE;BYHOUR=9;BYMINUTE=0", "Europe/Prague", "Every week on Monday and Wednesday at 09:00 (Europe/Prague)"},
		{"rrule", "FREQ=DAILY;INTERVAL=2;COUNT=5", "UTC", "Every 2 days at 08:00, 5 times (UTC)"},
		{"rrule", "FREQ=MONTHLY;BYDAY=-1FR", "UTC", "Every month on last Friday at 08:00 (UTC)"},
		{"cron", "30 7 * * *", "UTC", "Every day at 07:30 (UTC)"},
		{"cron", "*/5 * * * *", "UTC", "Every 5 minutes (UTC)"},
		{"cron", "@every 90s", "UTC", "Every 90s (UTC)"},
		{"schedule", `{"frequency":"weekly","by_day":["tu"],"by_hour":[10]}`, "UTC", "Every week on Tuesday at 10:00 (UTC)"},
		{"once", "", "Europe/Prague", "Once, at 2030-01-06 09:00:00 +01:00 (Europe/Prague)"},
	} {
		require.Equal(t, tt.want, describeRule(tt.kind, tt.rule, start, tt.zone), tt.rule)
	}
}

// TestRedirectBackAcceptsOnlyConsolePaths: the back= of a console form is
// followed only when it is a path of the console; anything a browser could
// read as another origin falls back to the occurrence's page.
func TestRedirectBackAcceptsOnlyConsolePaths(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"/ui/events/ev1", "/ui/failures?status=failed&since=2029-12-30T00%3A00%3A00Z", "/ui/"} {
		got, accepted := consolePath(ok)
		require.True(t, accepted, ok)
		require.Equal(t, ok, got)
	}
	for _, bad := range []string{"", "//evil.com", "/\\evil.com", "/\t/evil.com", "/\n/evil.com", "/ui/\t/x",
		"https://evil.com/ui/", "/%2F/evil.com", "/%5Cevil.com", "/%09/evil.com", "/ui/%09/x", "/ui/../../evil",
		"/ui/%2e%2e/%2e%2e/x", "evil.com", "/ui@evil.com", "///evil.com", "/ui/\\\\evil.com", "/ui /x",
		"/events/ev1"} {
		_, accepted := consolePath(bad)
		require.False(t, accepted, "%q", bad)
	}

	tc := newTestConsole(t)
	session, csrf := tc.signIn()
	for _, back := range []string{"/\t/evil.com", "//evil.com", "/\\evil.com", "/%2F/evil.com"} {
		res := tc.post(session, "/ui/occurrences/oc1/replay", url.Values{"csrf": {csrf}, "back": {back}},
			"Origin", tc.srv.URL)
		_ = body(t, res)
		require.Equal(t, http.StatusSeeOther, res.StatusCode)
		require.True(t, strings.HasPrefix(res.Header.Get("Location"), "/ui/occurrences/oc1?"),
			"back=%q redirected to %q", back, res.Header.Get("Location"))
	}
}
