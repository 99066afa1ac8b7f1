package api

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/redact"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/repository/repositorytest"
)

func TestNotificationChannelsLifecycle(t *testing.T) {
	for _, b := range repositorytest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			testNotificationChannelsLifecycle(t, b.Open)
		})
	}
}

func testNotificationChannelsLifecycle(t *testing.T, open func(testing.TB) *repository.Store) {
	e := newEnv(t, open)
	var mu sync.Mutex
	var bodies []string
	var verifier *standardwebhooks.Webhook
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		if err := verifier.Verify(body, r.Header); err != nil {
			t.Errorf("test notice signature: %v", err)
		}
		bodies = append(bodies, string(body))
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(recv.Close)

	res := e.do("POST", "/notification-channels", e.master, map[string]any{"name": "ops", "type": "webhook",
		"url": recv.URL + "/hook", "kinds": []string{"circuit_opened", "endpoint_disabled"}})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	created := res.object(t)
	id, _ := created["id"].(string)
	secret, _ := created["secret"].(string)
	require.True(t, strings.HasPrefix(secret, "whsec_"), "a generated secret is returned once: %s", res.Body)
	require.Equal(t, true, created["secret_set"])
	var err error
	mu.Lock()
	verifier, err = standardwebhooks.NewWebhook(secret)
	mu.Unlock()
	require.NoError(t, err)

	res = e.do("GET", "/notification-channels/"+id, e.master, nil)
	require.Equal(t, http.StatusOK, res.Status)
	require.NotContains(t, string(res.Body), secret, "the secret is write-only")
	require.NotContains(t, string(res.Body), `"secret"`)
	res = e.do("GET", "/notification-channels", e.master, nil)
	require.Equal(t, http.StatusOK, res.Status)
	require.Contains(t, string(res.Body), id)
	require.NotContains(t, string(res.Body), secret)

	res = e.do("POST", "/notification-channels/"+id+"/test", e.master, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	require.Equal(t, true, res.object(t)["delivered"], "%s", res.Body)
	mu.Lock()
	require.Len(t, bodies, 1)
	require.Contains(t, bodies[0], `"type":"test"`)
	mu.Unlock()

	res = e.do("PATCH", "/notification-channels/"+id, e.master, map[string]any{"kinds": []string{"missed"},
		"tags": []string{"team-a", "team-a", "billing"}})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	require.Equal(t, []any{"missed"}, res.object(t)["kinds"])
	require.Equal(t, []any{"team-a", "billing"}, res.object(t)["tags"], "scoped by tags, without duplicates")

	res = e.do("PATCH", "/notification-channels/"+id, e.master, map[string]any{"name": "ops-renamed", "kinds": []string{},
		"tags": []string{}})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	require.Equal(t, "ops-renamed", res.object(t)["name"])
	require.Equal(t, []any{}, res.object(t)["tags"], "no tags: every notice")
	require.NotContains(t, string(res.Body), secret)

	res = e.do("POST", "/notification-channels", e.master, map[string]any{"name": "ops-renamed", "type": "email",
		"to": []string{"ops@example.com"}})
	require.Equal(t, http.StatusConflict, res.Status, "%s", res.Body)

	// A test to a receiver that is gone answers with the failure.
	recv.Close()
	res = e.do("POST", "/notification-channels/"+id+"/test", e.master, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	require.Equal(t, false, res.object(t)["delivered"])

	res = e.do("DELETE", "/notification-channels/"+id, e.master, nil)
	require.Equal(t, http.StatusNoContent, res.Status)
	res = e.do("GET", "/notification-channels/"+id, e.master, nil)
	require.Equal(t, http.StatusNotFound, res.Status)
}

func TestNotificationChannelsBadInputNamesTheField(t *testing.T) {
	t.Parallel()
	e := newEnv(t, repositorytest.SQLite)
	cases := []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"type": "webhook", "url": "https://ops.example.com"}, "name"},
		{map[string]any{"name": "a", "type": "sms"}, "type"},
		{map[string]any{"name": "a", "type": "webhook", "url": "http://169.254.169.254/latest"}, "url"},
		{map[string]any{"name": "a", "type": "webhook", "url": "ftp://ops.example.com"}, "url"},
		{map[string]any{"name": "a", "type": "webhook", "url": "https://ops.example.com", "secret": "short"}, "secret"},
		{map[string]any{"name": "a", "type": "email", "to": []string{"ops@example.com", "nobody"}}, "to[1]"},
		{map[string]any{"name": "a", "type": "email"}, "to"},
		{map[string]any{"name": "a", "type": "email", "to": []string{"a@example.com"}, "secret": "0123456789abcdef"}, "secret"},
		{map[string]any{"name": "a", "type": "webhook", "url": "https://ops.example.com", "kinds": []string{"circuit_opened", "everything"}}, "kinds[1]"},
		{map[string]any{"name": "a", "type": "webhook", "url": "https://ops.example.com", "colour": "red"}, "colour"},
		{map[string]any{"name": "a", "type": "webhook", "url": "https://ops.example.com", "tags": []string{" padded"}}, "tags"},
		{map[string]any{"name": "a", "type": "webhook", "url": "https://ops.example.com", "tags": "team-a"}, "tags"},
		{map[string]any{"name": 7, "type": "webhook"}, "name"},
	}
	for _, c := range cases {
		res := e.do("POST", "/notification-channels", e.master, c.body)
		require.Equal(t, http.StatusBadRequest, res.Status, "%v: %s", c.body, res.Body)
		var eb errorBody
		res.json(t, &eb)
		require.Equal(t, c.field, eb.Field, "%v: %s", c.body, res.Body)
	}
	res := e.do("GET", "/notification-channels", e.master, nil)
	require.Equal(t, "[]", strings.TrimSpace(string(res.Body)), "nothing half written")

	read, _ := e.mintToken("read", nil)
	write, _ := e.mintToken("write", nil)
	for _, tok := range []string{read, write} {
		res := e.do("POST", "/notification-channels", tok, map[string]any{"name": "x", "type": "email",
			"to": []string{"a@example.com"}})
		require.Equal(t, http.StatusForbidden, res.Status)
		res = e.do("GET", "/notification-channels", tok, nil)
		require.Equal(t, http.StatusForbidden, res.Status)
	}
}

// A channel's url is often a credential itself (a Slack webhook's path, a
// ?token=): answers show only its scheme and host with a fingerprint, a
// PATCH of other fields keeps it, the answer sent back keeps it, and its
// fingerprint under another host is refused (issue #34).
func TestNotificationChannelURLIsWriteOnly(t *testing.T) {
	for _, b := range repositorytest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			testNotificationChannelURLIsWriteOnly(t, b.Open)
		})
	}
}

func testNotificationChannelURLIsWriteOnly(t *testing.T, open func(testing.TB) *repository.Store) {
	e := newEnv(t, open)
	var mu sync.Mutex
	var got []string
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.URL.RequestURI())
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(recv.Close)
	const path = "/services/T0001/B0002/sekritPath?token=tok123"
	reached := func() string {
		t.Helper()
		mu.Lock()
		defer mu.Unlock()
		require.NotEmpty(t, got)
		return got[len(got)-1]
	}
	noSecret := func(res response) {
		t.Helper()
		require.NotContains(t, string(res.Body), "sekritPath", "%s", res.Body)
		require.NotContains(t, string(res.Body), "tok123", "%s", res.Body)
	}

	res := e.do("POST", "/notification-channels", e.master, map[string]any{"name": "slack", "type": "webhook",
		"url": recv.URL + path})
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	noSecret(res)
	id, _ := res.object(t)["id"].(string)
	shown, _ := res.object(t)["url"].(string)
	fp, ok := strings.CutPrefix(shown, recv.URL+"/")
	require.True(t, ok, "the host stays in view: %s", shown)
	require.True(t, redact.IsFingerprint(fp), "the rest is a fingerprint of the shape every answer uses: %s", shown)
	for _, p := range []string{"/notification-channels/" + id, "/notification-channels"} {
		res = e.do("GET", p, e.master, nil)
		require.Equal(t, http.StatusOK, res.Status)
		noSecret(res)
		require.Contains(t, string(res.Body), shown)
	}

	send := func() {
		t.Helper()
		res := e.do("POST", "/notification-channels/"+id+"/test", e.master, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
		require.Equal(t, true, res.object(t)["delivered"], "%s", res.Body)
	}
	// Other fields change without the url; the answer sent back keeps it.
	res = e.do("PATCH", "/notification-channels/"+id, e.master, map[string]any{"name": "slack-ops"})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	noSecret(res)
	send()
	require.Equal(t, path, reached())
	res = e.do("PATCH", "/notification-channels/"+id, e.master, map[string]any{"url": shown, "kinds": []string{}})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	require.Equal(t, shown, res.object(t)["url"])
	send()
	require.Equal(t, path, reached())

	// The fingerprint does not follow a new host, nor stand for another URL.
	for _, u := range []string{"https://collector.example/" + fp, recv.URL + "/" + redact.Mask + "00000000"} {
		res = e.do("PATCH", "/notification-channels/"+id, e.master, map[string]any{"url": u})
		require.Equal(t, http.StatusBadRequest, res.Status, "%s", res.Body)
		var eb errorBody
		res.json(t, &eb)
		require.Equal(t, "url", eb.Field, "%s", res.Body)
	}
	res = e.do("PATCH", "/notification-channels/"+id, e.master, map[string]any{"url": "https://collector.example/" + fp})
	require.Contains(t, string(res.Body), "must be given again")
	send()
	require.Equal(t, path, reached(), "a refused change left the url as it was")

	// A new url given in full replaces it.
	res = e.do("PATCH", "/notification-channels/"+id, e.master, map[string]any{"url": recv.URL + "/v2?token=new456"})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	require.NotContains(t, string(res.Body), "new456")
	send()
	require.Equal(t, "/v2?token=new456", reached())
}
