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
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

const (
	portalCode  = "qpl_portal_code_that_must_never_leak"
	portalToken = "qhr_portal_token_that_must_never_leak"
)

// withPortal makes the fake API redeem portalCode once, for customer-42,
// as the real one does (a second redeem is not found).
func (tc *testConsole) withPortal(back string) {
	var used atomic.Bool
	tc.api.answers["POST /portal-links/redeem"] = func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Code string }
		_ = json.NewDecoder(r.Body).Decode(&in)
		if in.Code != portalCode || used.Swap(true) {
			jsonAnswer(404, `{"error":"code: this portal link was already used or has expired; ask for a new one","field":"code"}`)(w, r)
			return
		}
		out, _ := json.Marshal(map[string]any{"token": portalToken, "tags": []string{"customer-42"},
			"expires_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339), "return_url": back})
		jsonAnswer(200, string(out))(w, r)
	}
}

// openPortal opens the portal link and returns the portal session cookie.
func (tc *testConsole) openPortal() *http.Cookie {
	t := tc.t
	t.Helper()
	res := tc.get(nil, "/portal/login?code="+portalCode)
	_ = body(t, res)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, "/portal/endpoints", res.Header.Get("Location"), "the code leaves the address bar")
	for _, ck := range res.Cookies() {
		if ck.Name == portalCookie {
			return ck
		}
	}
	t.Fatal("no portal session cookie")
	return nil
}

var hrefs = regexp.MustCompile(`(?:href|action)="([^"]*)"`)

// A portal link signs in once: the code is redeemed over the API without a
// token, the session's cookie is the portal's own (on /portal, HttpOnly,
// sealed), and opening the link again says it was used.
func TestPortalLinkSignsInOnce(t *testing.T) {
	t.Parallel()
	tc := newTestConsole(t)
	tc.withPortal("https://app.example.com/settings")
	session := tc.openPortal()
	require.Equal(t, PortalPrefix, session.Path)
	require.True(t, session.HttpOnly)
	require.Equal(t, http.SameSiteLaxMode, session.SameSite, "sent on the navigation from the customer's app")
	require.False(t, session.Secure, "plain HTTP")
	require.NotContains(t, session.Value, portalToken)

	res := tc.get(nil, "/portal/login?code="+portalCode)
	page := body(t, res)
	require.Equal(t, http.StatusGone, res.StatusCode)
	require.Contains(t, page, "This portal link was already used or has expired")
	for _, ck := range res.Cookies() {
		require.NotEqual(t, portalCookie, ck.Name, "a used link starts no session")
	}

	tc.api.mu.Lock()
	defer tc.api.mu.Unlock()
	redeems := 0
	for i, call := range tc.api.calls {
		require.NotContains(t, call, portalCode, "a URL carried the code")
		if call == "POST /portal-links/redeem" {
			redeems++
			require.Empty(t, tc.api.auth[i], "the code is the credential")
		}
	}
	require.Equal(t, 2, redeems)
}

// The portal's pages: the portal's navigation only, its tags named, the
// Back link leaving the frame, every link and form under /portal, and
// every API call made with the portal session's token.
func TestPortalPagesStayInThePortal(t *testing.T) {
	t.Parallel()
	tc := newTestConsole(t)
	tc.withPortal("https://app.example.com/settings")
	tc.api.answers["GET /endpoints/ep1"] = jsonAnswer(200, sampleEndpoint)
	tc.api.answers["GET /endpoints/ep1/circuit-history"] = jsonAnswer(200, `{"data":[],"pagination":{"limit":20}}`)
	session := tc.openPortal()

	for _, path := range []string{"/portal/endpoints", "/portal/endpoints/ep1", "/portal/endpoints/new"} {
		res := tc.get(session, path)
		page := body(t, res)
		require.Equal(t, http.StatusOK, res.StatusCode, "%s: %s", path, page)
		require.Contains(t, page, `<nav aria-label="Portal">`)
		require.NotContains(t, page, `aria-label="Console"`)
		for _, hidden := range []string{">Events<", ">Tokens<", ">Notifications<", ">Overview<", ">Calendars<", "/search"} {
			require.NotContains(t, page, hidden, "%s shows %s", path, hidden)
		}
		require.Contains(t, page, `id="portal-scope">Limited to <span class="tag">customer-42</span>`)
		require.Contains(t, page, `<a class="portal-back" href="https://app.example.com/settings" target="_top" id="portal-back">Back</a>`)
		for _, m := range hrefs.FindAllStringSubmatch(page, -1) {
			link := m[1]
			if strings.HasPrefix(link, "/ui/static/") || strings.HasPrefix(link, "https://app.example.com/") ||
				strings.HasPrefix(link, "#") {
				continue
			}
			require.True(t, strings.HasPrefix(link, "/portal/"), "%s links out of the portal: %s", path, link)
		}
	}
	res := tc.get(session, "/portal/endpoints/new")
	require.Contains(t, body(t, res), `name="tags" value="customer-42"`, "a new endpoint carries the portal's tag")
	res = tc.get(session, "/portal/endpoints/ep1")
	require.NotContains(t, body(t, res), "Events delivering here", "the portal reads no events")

	tc.api.mu.Lock()
	defer tc.api.mu.Unlock()
	for i, call := range tc.api.calls {
		if call != "POST /portal-links/redeem" {
			require.Equal(t, "Bearer "+portalToken, tc.api.auth[i], call)
			require.False(t, strings.HasPrefix(call, "GET /events"), "the portal reads no events: %s", call)
		}
	}
}

// Outside its pages a portal session finds nothing: the console's other
// pages under /portal are not found, /ui does not take its cookie (not even
// copied into the console's), and /portal does not take a console session.
func TestPortalSessionReachesNothingElse(t *testing.T) {
	t.Parallel()
	tc := newTestConsole(t)
	tc.withPortal("")
	session := tc.openPortal()
	for _, path := range []string{"/portal/events", "/portal/tokens", "/portal/notifications", "/portal/calendars",
		"/portal/live", "/portal/api", "/portal/search?q=x", "/portal/overview"} {
		res := tc.get(session, path)
		page := body(t, res)
		require.Equal(t, http.StatusNotFound, res.StatusCode, path)
		require.Contains(t, page, "There is no such page in the portal.")
	}
	res := tc.get(session, "/portal/")
	_ = body(t, res)
	require.Equal(t, "/portal/endpoints", res.Header.Get("Location"))

	copied := *session
	copied.Name, copied.Path = sessionCookie, Prefix
	for _, path := range []string{"/ui/", "/ui/tokens", "/ui/events"} {
		res := tc.get(&copied, path)
		_ = body(t, res)
		require.Equal(t, http.StatusSeeOther, res.StatusCode, path)
		require.Equal(t, "/ui/login", res.Header.Get("Location"), "%s: the console takes no portal session", path)
	}

	console, _ := tc.signIn()
	moved := *console
	moved.Name, moved.Path = portalCookie, PortalPrefix
	res = tc.get(&moved, "/portal/endpoints")
	_ = body(t, res)
	require.Equal(t, "/portal/login", res.Header.Get("Location"), "the portal takes no console session")
	res = tc.get(nil, "/portal/login")
	page := body(t, res)
	require.Equal(t, http.StatusUnauthorized, res.StatusCode)
	require.Contains(t, page, "Your portal session has ended")
}

// The portal's pages may be framed by the configured origins only; the
// console never. Its cookie is then SameSite=None, Secure and Partitioned
// over HTTPS (sent inside the embedding site's frame), and Lax over HTTP.
func TestPortalFraming(t *testing.T) {
	t.Parallel()
	header := func(c *Console, path string) http.Header {
		w := httptest.NewRecorder()
		c.ServeHTTP(w, httptest.NewRequest("GET", "http://q.example"+path, nil))
		return w.Result().Header
	}
	closed, err := New(Options{API: newFakeAPI(), EncryptionKey: testKey})
	require.NoError(t, err)
	t.Cleanup(closed.Close)
	for _, path := range []string{"/portal/login", "/ui/login"} {
		h := header(closed, path)
		require.Contains(t, h.Get("Content-Security-Policy"), "frame-ancestors 'none'", path)
		require.Equal(t, "DENY", h.Get("X-Frame-Options"), path)
	}

	open, err := New(Options{API: newFakeAPI(), EncryptionKey: testKey,
		FrameAncestors: []string{"https://app.example.com", "https://*.example.org"}})
	require.NoError(t, err)
	t.Cleanup(open.Close)
	h := header(open, "/portal/endpoints")
	csp := h.Get("Content-Security-Policy")
	require.Contains(t, csp, "frame-ancestors https://app.example.com https://*.example.org;")
	require.NotContains(t, csp, "'none'; base-uri")
	require.Contains(t, csp, "default-src 'none'", "the rest of the policy stays")
	require.Empty(t, h.Get("X-Frame-Options"), "it cannot name origins and would forbid what CSP allows")
	h = header(open, "/ui/login")
	require.Contains(t, h.Get("Content-Security-Policy"), "frame-ancestors 'none'", "the console is never framed")
	require.Equal(t, "DENY", h.Get("X-Frame-Options"))

	for _, tlsOn := range []bool{true, false} {
		r := httptest.NewRequest("GET", "http://q.example/portal/login", nil)
		if tlsOn {
			r.TLS = &tls.ConnectionState{}
		}
		w := httptest.NewRecorder()
		require.NoError(t, open.sessions.startPortal(w, r, portalToken, time.Now().Add(time.Hour),
			portalScope{Tags: []string{"customer-42"}}))
		ck := w.Result().Cookies()[0]
		if tlsOn {
			require.Equal(t, http.SameSiteNoneMode, ck.SameSite)
			require.True(t, ck.Secure)
			require.True(t, ck.Partitioned)
		} else {
			require.Equal(t, http.SameSiteLaxMode, ck.SameSite, "browsers refuse None without Secure")
			require.False(t, ck.Partitioned)
		}
	}
}

// A failed redeem is logged without the code.
func TestPortalCodeNeverLogged(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zap.DebugLevel)
	api := newFakeAPI()
	api.answers["POST /portal-links/redeem"] = jsonAnswer(500, `{"error":"internal error"}`)
	c, err := New(Options{API: api, EncryptionKey: testKey, Logger: zap.New(core)})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	w := httptest.NewRecorder()
	c.ServeHTTP(w, httptest.NewRequest("GET", "http://q.example/portal/login?code="+portalCode, nil))
	require.Equal(t, http.StatusInternalServerError, w.Code)
	require.NotZero(t, logs.Len(), "the failure is logged")
	for _, e := range logs.All() {
		line, _ := json.Marshal(e.ContextMap())
		require.NotContains(t, e.Message+string(line), portalCode)
	}
	b, _ := io.ReadAll(w.Result().Body)
	require.NotContains(t, string(b), portalCode)
}

// The portal's Failures and occurrence pages show the deliveries and
// their attempts and replay them, name events by id only (the portal reads
// no events), offer no skip or move, and come back within the portal.
func TestPortalFailuresAndReplay(t *testing.T) {
	t.Parallel()
	tc := newTestConsole(t)
	tc.withPortal("")
	session := tc.openPortal()

	res := tc.get(session, "/portal/failures")
	page := body(t, res)
	require.Equal(t, http.StatusOK, res.StatusCode, page)
	require.Contains(t, page, `<code>ev1</code>`, "the event by id")
	require.Contains(t, page, `href="/portal/occurrences/oc1"`)
	require.Contains(t, page, `action="/portal/occurrences/oc1/replay"`)
	require.NotContains(t, page, "/ui/events/")

	res = tc.get(session, "/portal/occurrences/oc1")
	page = body(t, res)
	require.Equal(t, http.StatusOK, res.StatusCode, page)
	require.Contains(t, page, `id="replay"`)
	require.Contains(t, page, "HTTP 500", "its attempts")

	// A pending one ahead: the console offers skip and move, the portal not.
	tc.api.answers["GET /occurrences/oc2"] = jsonAnswer(200, `{"id":"oc2","occurrence_id":"oc2","event_id":"ev1",
"scheduled_at":"2099-01-01T00:00:00Z","status":"pending","manual":false,"attempt_count":0}`)
	tc.api.answers["GET /occurrences/oc2/attempts"] = jsonAnswer(200, `[]`)
	console, _ := tc.signIn()
	res = tc.get(console, "/ui/occurrences/oc2")
	require.Contains(t, body(t, res), `id="skip"`, "the console's page")
	res = tc.get(session, "/portal/occurrences/oc2")
	pending := body(t, res)
	require.Equal(t, http.StatusOK, res.StatusCode, pending)
	require.NotContains(t, pending, `id="skip"`)
	require.NotContains(t, pending, `id="move"`)

	csrf := csrfField.FindStringSubmatch(page)[1]
	res = tc.post(session, "/portal/occurrences/oc1/replay", url.Values{"csrf": {csrf}, "back": {"/ui/events/ev1"}},
		"Origin", tc.srv.URL)
	_ = body(t, res)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.True(t, strings.HasPrefix(res.Header.Get("Location"), "/portal/occurrences/oc1?notice=Replay+queued"),
		"a back link out of the portal is not followed: %s", res.Header.Get("Location"))

	tc.api.mu.Lock()
	defer tc.api.mu.Unlock()
	require.Contains(t, tc.api.calls, "POST /occurrences/oc1/retry")
	for i, call := range tc.api.calls {
		if tc.api.auth[i] == "Bearer "+portalToken {
			require.False(t, strings.HasPrefix(call, "GET /events"), "the portal reads no events: %s", call)
		}
	}
}
