package console

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
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
