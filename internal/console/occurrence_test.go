package console

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/client"
)

// TestOccurrencePageThroughTheSDK: the occurrence page, its skip/unskip and
// replay controls and the event confirmation read and write through the Go
// SDK, with the API's refusals and 404s shown as before.
func TestOccurrencePageThroughTheSDK(t *testing.T) {
	t.Parallel()
	tc := newTestConsole(t)
	session, csrf := tc.signIn()
	skipBody := make(chan string, 1)
	tc.api.mu.Lock()
	tc.api.answers["POST /occurrences/oc1/skip"] = func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		skipBody <- string(b)
		jsonAnswer(200, strings.Replace(sampleOccurrence, `"status":"failed"`, `"status":"skipped"`, 1))(w, r)
	}
	tc.api.answers["POST /occurrences/oc1/unskip"] = jsonAnswer(409, `{"error":"only a skipped occurrence can be unskipped"}`)
	tc.api.mu.Unlock()

	res := tc.get(session, "/ui/occurrences/oc1")
	page := body(t, res)
	require.Equal(t, http.StatusOK, res.StatusCode, page)
	require.Contains(t, page, `<a href="/ui/events/ev1">weekly report</a>`, "the event, read through the SDK")
	require.Contains(t, page, "3 ms", "the attempt's lateness")
	require.Contains(t, page, `<pre class="excerpt">boom</pre>`)
	require.Contains(t, page, "HTTP 500")

	res = tc.get(session, "/ui/occurrences/nope")
	page = body(t, res)
	require.Equal(t, http.StatusNotFound, res.StatusCode, page)

	res = tc.post(session, "/ui/occurrences/oc1/skip", url.Values{"csrf": {csrf}, "reason": {"offsite"}}, "Origin", tc.srv.URL)
	_ = body(t, res)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.JSONEq(t, `{"reason":"offsite"}`, <-skipBody)
	require.Equal(t, "/ui/occurrences/oc1?notice="+urlQueryEscape("Skipped: it will not fire."), res.Header.Get("Location"))

	res = tc.post(session, "/ui/occurrences/oc1/unskip", url.Values{"csrf": {csrf}}, "Origin", tc.srv.URL)
	_ = body(t, res)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, "/ui/occurrences/oc1?notice="+urlQueryEscape("Could not unskip: only a skipped occurrence can be unskipped"),
		res.Header.Get("Location"))

	res = tc.post(session, "/ui/occurrences/nope/replay", url.Values{"csrf": {csrf}}, "Origin", tc.srv.URL)
	page = body(t, res)
	require.Equal(t, http.StatusNotFound, res.StatusCode, page)

	res = tc.post(session, "/ui/occurrences/oc1/skip", url.Values{"reason": {"no csrf"}}, "Origin", tc.srv.URL)
	_ = body(t, res)
	require.NotEqual(t, http.StatusSeeOther, res.StatusCode, "a form without its CSRF token is refused")
	require.Empty(t, skipBody)

	res = tc.get(session, "/ui/events/ev1/confirm/pause")
	page = body(t, res)
	require.Equal(t, http.StatusOK, res.StatusCode, page)
	require.Contains(t, page, "Pause “weekly report”")
}

// TestOccurrenceMove: a pending occurrence ahead offers Move; the picker is
// read in the event's zone and sent as POST /occurrences/{id}/move, and the
// API's refusal comes back as the page's notice.
func TestOccurrenceMove(t *testing.T) {
	t.Parallel()
	tc := newTestConsole(t)
	session, csrf := tc.signIn()
	pending := `{"id":"oc2","occurrence_id":"oc2","event_id":"ev1","scheduled_at":"2099-01-05T08:00:00Z",
"status":"pending","manual":false,"attempt_count":0}`
	moveBody := make(chan string, 2)
	var refuse atomic.Bool
	tc.api.mu.Lock()
	tc.api.answers["GET /occurrences/oc2"] = jsonAnswer(200, pending)
	tc.api.answers["GET /occurrences/oc2/attempts"] = jsonAnswer(200, `[]`)
	tc.api.answers["POST /occurrences/oc2/move"] = func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		moveBody <- string(b)
		if refuse.Load() {
			jsonAnswer(409, `{"error":"to: another occurrence of the event is at that moment","field":"to"}`)(w, r)
			return
		}
		jsonAnswer(200, pending)(w, r)
	}
	tc.api.mu.Unlock()

	res := tc.get(session, "/ui/occurrences/oc2")
	page := body(t, res)
	require.Equal(t, http.StatusOK, res.StatusCode, page)
	require.Contains(t, page, `action="/ui/occurrences/oc2/move"`)
	require.Contains(t, page, `<label for="move-to">Move to <span class="hint">Europe/Prague</span></label>`)
	require.NotContains(t, body(t, tc.get(session, "/ui/occurrences/oc1")), `id="move-form"`,
		"a failed occurrence cannot be moved")

	res = tc.post(session, "/ui/occurrences/oc2/move", url.Values{"csrf": {csrf}, "to": {"2099-03-01T10:30"},
		"reason": {"maintenance"}}, "Origin", tc.srv.URL)
	_ = body(t, res)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.JSONEq(t, `{"to":"2099-03-01T09:30:00Z","reason":"maintenance"}`, <-moveBody, "10:30 in Prague is 09:30 UTC")
	require.Equal(t, "/ui/occurrences/oc2?notice="+urlQueryEscape("Moved: it fires at 2099-03-01 10:30:00 +01:00."),
		res.Header.Get("Location"))

	refuse.Store(true)
	res = tc.post(session, "/ui/occurrences/oc2/move", url.Values{"csrf": {csrf}, "to": {"2099-03-01T10:30:00"}},
		"Origin", tc.srv.URL)
	_ = body(t, res)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.JSONEq(t, `{"to":"2099-03-01T09:30:00Z"}`, <-moveBody)
	require.Equal(t, "/ui/occurrences/oc2?notice="+urlQueryEscape("Could not move: to: another occurrence of the event is at that moment"),
		res.Header.Get("Location"))

	res = tc.post(session, "/ui/occurrences/oc2/move", url.Values{"csrf": {csrf}, "to": {"tomorrow"}}, "Origin", tc.srv.URL)
	_ = body(t, res)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, "/ui/occurrences/oc2?notice="+urlQueryEscape("Could not move: to must be a date and time"),
		res.Header.Get("Location"))
	require.Empty(t, moveBody, "a value that is not a time never reaches the API")

	res = tc.post(session, "/ui/occurrences/oc2/move", url.Values{"to": {"2099-03-01T10:30"}}, "Origin", tc.srv.URL)
	_ = body(t, res)
	require.NotEqual(t, http.StatusSeeOther, res.StatusCode, "a form without its CSRF token is refused")
	require.Empty(t, moveBody)
}

// TestOccurrencePageShowsEachRequest: each attempt's recorded request is
// shown (request line, headers by name, a JSON body indented, text
// escaped); an attempt without one says it was not recorded; with
// recording off the page keeps saying requests are not stored.
func TestOccurrencePageShowsEachRequest(t *testing.T) {
	t.Parallel()
	tc := newTestConsole(t)
	session, _ := tc.signIn()
	tc.api.mu.Lock()
	tc.api.answers["GET /occurrences/oc1/attempts"] = jsonAnswer(200, `[
{"id":"a1","attempt":1,"started_at":"2029-12-30T08:00:00Z","outcome":"retrying","request":null},
{"id":"a2","attempt":2,"started_at":"2029-12-30T08:01:00Z","outcome":"completed","request":{"method":"POST",
 "url":"https://hooks.example.com/in?token=••••0a1b2c3d","headers":{"X-Tenant":"<b>acme</b>","Webhook-Signature":"[redacted]",
 "Content-Type":"application/json"},"body":"{\"n\":1,\"tags\":[\"a\"]}","body_truncated":true}}]`)
	tc.api.mu.Unlock()

	res := tc.get(session, "/ui/occurrences/oc1")
	page := body(t, res)
	require.Equal(t, http.StatusOK, res.StatusCode, page)
	first := page[strings.Index(page, `id="request-1"`):strings.Index(page, `id="request-2"`)]
	require.Contains(t, first, "Not recorded", "an attempt made before requests were kept")
	second := page[strings.Index(page, `id="request-2"`):]
	require.Contains(t, second, `<code class="request-line">POST https://hooks.example.com/in?token=••••0a1b2c3d</code>`)
	require.Regexp(t, `(?s)<code>Content-Type</code>.*<code>Webhook-Signature</code>.*<code>X-Tenant</code>`, second,
		"headers sorted by name")
	require.Contains(t, second, `<code class="header-value">[redacted]</code>`)
	require.Contains(t, second, "&lt;b&gt;acme&lt;/b&gt;", "values are escaped")
	require.Contains(t, second, `<pre class="excerpt request-body">{&#34;n&#34;:1,&#34;tags&#34;:[&#34;a&#34;]}</pre>`,
		"a cut body is shown raw: it may not parse")
	require.Contains(t, second, "only its first 64 KiB are kept")
	require.NotContains(t, page, "does not store the request")

	off, err := New(Options{API: tc.api, EncryptionKey: testKey, RequestsOff: true})
	require.NoError(t, err)
	t.Cleanup(off.Close)
	offSrv := httptest.NewServer(off)
	t.Cleanup(offSrv.Close)
	tc2 := &testConsole{t: t, api: tc.api, srv: offSrv, c: off}
	session, _ = tc2.signIn()
	res = tc2.get(session, "/ui/occurrences/oc1")
	page = body(t, res)
	require.Equal(t, http.StatusOK, res.StatusCode, page)
	require.Contains(t, page, "does not store the request of an attempt")
	require.NotContains(t, page, `class="request-line"`)
}

// viewRequest indents a whole JSON body and keeps any other as it is.
func TestViewRequestIndentsJSON(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ body, want string }{
		{`{"a":[1,2]}`, "{\n  \"a\": [\n    1,\n    2\n  ]\n}"},
		{`name=acme&x=1`, `name=acme&x=1`},
		{``, ``},
	} {
		got := viewRequest(&client.AttemptRequest{Body: tc.body, Headers: map[string]string{}})
		if got.Body != tc.want {
			t.Errorf("body %q shown as %q, want %q", tc.body, got.Body, tc.want)
		}
	}
}
