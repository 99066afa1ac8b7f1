package console

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// An event upserted by key shows its key (and debounce) on its page and
// in the events list.
func TestEventKeyShowsOnTheEventPageAndInTheList(t *testing.T) {
	t.Parallel()
	tc := newTestConsole(t)
	session, _ := tc.signIn()
	keyed := strings.Replace(sampleEvent, `"status":"active"`,
		`"status":"active","key":"cart:user-42","debounce":"1h0m0s","max_wait":"24h0m0s"`, 1)
	tc.api.mu.Lock()
	tc.api.answers["GET /events/ev1"] = jsonAnswer(200, keyed)
	tc.api.answers["GET /events"] = jsonAnswer(200, "["+keyed+"]")
	tc.api.mu.Unlock()

	res := tc.get(session, "/ui/events/ev1")
	page := body(t, res)
	require.Equal(t, http.StatusOK, res.StatusCode, page)
	require.Contains(t, page, `<code id="event-key">cart:user-42</code>`)
	require.Contains(t, page, "1h0m0s after each upsert, at most 24h0m0s after the first of a burst")

	res = tc.get(session, "/ui/events")
	page = body(t, res)
	require.Equal(t, http.StatusOK, res.StatusCode, page)
	require.Contains(t, page, `<code class="muted event-key">cart:user-42</code>`)
}
