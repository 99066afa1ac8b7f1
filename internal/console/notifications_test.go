package console

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// The Notifications page lists each channel's tags ("all notices" without
// any), offers the missed kind in its place, sends the Tags input as the
// tags list, and shows the API's refusal naming tags next to that input.
func TestChannelTagsOnTheNotificationsPage(t *testing.T) {
	t.Parallel()
	tc := resourceConsole(t)
	tagged := strings.Replace(strings.Replace(sampleChannel, `"id":"ch1","name":"ops"`, `"id":"ch2","name":"billing pager"`, 1),
		`"kinds":["circuit_opened"]`, `"kinds":["missed"],"tags":["billing","ops-eu"]`, 1)
	tc.api.answers["GET /notification-channels"] = jsonAnswer(200, "["+sampleChannel+","+tagged+"]")
	var mu sync.Mutex
	var sent []map[string]any
	answer := jsonAnswer(201, strings.Replace(tagged, `"secret_set":true`, `"secret_set":true,"secret":"whsec_once"`, 1))
	tc.api.answers["POST /notification-channels"] = func(w http.ResponseWriter, r *http.Request) {
		var got map[string]any
		_ = json.NewDecoder(r.Body).Decode(&got)
		mu.Lock()
		sent = append(sent, got)
		mu.Unlock()
		answer(w, r)
	}
	session, csrf := tc.signIn()

	page := body(t, tc.get(session, "/ui/notifications"))
	require.Contains(t, page, `<span class="tag">billing</span> <span class="tag">ops-eu</span>`)
	require.Contains(t, page, "all notices", "the untagged channel takes every notice")
	require.Contains(t, page, `<input id="n-tags" name="tags" value=""`)
	at := func(kind string) int {
		i := strings.Index(page, `value="`+kind+`"`)
		require.GreaterOrEqual(t, i, 0, kind)
		return i
	}
	require.Less(t, at("run_timed_out"), at("missed"))
	require.Less(t, at("missed"), at("circuit_opened"))

	// The tags go as a list, trimmed, empty pieces left out.
	form := url.Values{"csrf": {csrf}, "name": {"billing pager"}, "type": {"webhook"},
		"url": {"https://ops.example.com/q"}, "kinds": {"missed"}, "tags": {" billing, ops-eu ,"}}
	res := tc.post(session, "/ui/notifications", form)
	page = body(t, res)
	require.Equal(t, http.StatusOK, res.StatusCode, page)
	require.Contains(t, page, "whsec_once")
	mu.Lock()
	require.Equal(t, map[string]any{"name": "billing pager", "type": "webhook", "url": "https://ops.example.com/q",
		"kinds": []any{"missed"}, "tags": []any{"billing", "ops-eu"}}, sent[0])
	mu.Unlock()

	// No tags: the member is left out (every notice).
	form.Set("tags", " ")
	res = tc.post(session, "/ui/notifications", form)
	require.Equal(t, http.StatusOK, res.StatusCode, body(t, res))
	mu.Lock()
	require.NotContains(t, sent[1], "tags")
	mu.Unlock()
	tc.api.mu.Lock()
	tc.api.answers["POST /notification-channels"] = jsonAnswer(400,
		`{"error":"tags: tags must be at most 100 characters","field":"tags"}`)
	tc.api.mu.Unlock()

	// The API's refusal shows next to the Tags input, which keeps what was
	// typed.
	long := strings.Repeat("t", 101)
	form.Set("tags", "billing, "+long)
	res = tc.post(session, "/ui/notifications", form)
	page = body(t, res)
	require.Equal(t, http.StatusBadRequest, res.StatusCode, page)
	require.Contains(t, page, `<p class="field-error" id="n-tags-error">tags must be at most 100 characters</p>`)
	require.Contains(t, page, `value="billing, `+long+`" placeholder="billing, ops" aria-invalid="true" aria-describedby="n-tags-error"`)
	require.Contains(t, page, `value="missed" checked`)
}
