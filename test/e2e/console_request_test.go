package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/qhronostest"
)

// The exact request of each attempt: what a receiver got is what the API
// answers and the occurrence page shows, secrets excepted, and no secret
// reaches the API, the page or the logs.
func TestConsoleAttemptRequest(t *testing.T) {
	onStores(t, consoleSQLiteVerbose, consolePostgresVerbose, requestStory)
}

// consoleSQLiteVerbose and consolePostgresVerbose log every delivery at
// debug level, so the story can look for secrets in everything logged.
func consoleSQLiteVerbose(t *testing.T) consoleServer {
	p := start(t, "console-sqlite", map[string]string{"QHRONOS_SCHEDULER_MAX_SLEEP": "250ms",
		"QHRONOS_LOG_LEVEL": "debug", "QHRONOS_LOG_DELIVERIES": "true"})
	eventually(t, readyTimeout, "the banner shows the master token", func() bool {
		return masterTokenLine.MatchString(p.stderr.String())
	})
	m := masterTokenLine.FindStringSubmatch(p.stderr.String())
	return consoleServer{url: p.url, master: m[1], logs: p.stderr.String}
}

func consolePostgresVerbose(t *testing.T) consoleServer {
	d := newDeployment(t)
	d.withSharedRedis()
	p := d.start("console-postgres", "QHRONOS_LOG_LEVEL", "debug", "QHRONOS_LOG_DELIVERIES", "true")
	return consoleServer{url: p.url, master: d.token, logs: p.stderr.String}
}

// capturedRequest is what the loopback receiver got.
type capturedRequest struct {
	method, uri string
	header      http.Header
	body        []byte
}

// attemptRequest is an attempt's request as the API answers it.
type attemptRequest struct {
	Method        string            `json:"method"`
	URL           string            `json:"url"`
	Headers       map[string]string `json:"headers"`
	Body          string            `json:"body"`
	BodyTruncated bool              `json:"body_truncated"`
}

var fingerprint = regexp.MustCompile(`^••••[0-9a-f]{8}$`)

func requestStory(t *testing.T, srv consoleServer, p *page) {
	got := make(chan capturedRequest, 4)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- capturedRequest{method: r.Method, uri: r.URL.RequestURI(), header: r.Header.Clone(), body: b}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(recv.Close)

	secrets := []string{"QSECRET-e2e-query", "HSECRET-e2e-header", "BSECRET-e2e-body", "SSECRET-e2e-signing-secret-0123456789"}
	ev := srv.api(t, srv.master, "POST", "/events", map[string]any{"name": "charge", "start_time": "in 2 hours",
		"hmac_secret": secrets[3], "action": map[string]any{"type": "apicall", "params": map[string]any{
			"method": "POST", "url": recv.URL + "/charge?token=" + secrets[0] + "&region=eu",
			"headers": map[string]string{"X-Api-Key": secrets[1], "X-Tenant": "acme"},
			"body":    map[string]any{"amount": 42, "password": secrets[2], "note": "<b>été</b>"}, "sign": true}}})
	occ := srv.api(t, srv.master, "POST", "/events/"+ev["id"].(string)+"/trigger", nil)
	occID := occ["id"].(string)
	var r capturedRequest
	select {
	case r = <-got:
	case <-time.After(fireTimeout):
		t.Fatal("the receiver got no request")
	}

	// The API answers the request the attempt sent.
	var raw []byte
	var sent *attemptRequest
	ok := qhronostest.Eventually(fireTimeout, nil, func() bool {
		raw = getRaw(t, srv, "/occurrences/"+occID+"/attempts")
		var atts []struct {
			Request *attemptRequest `json:"request"`
		}
		require.NoError(t, json.Unmarshal(raw, &atts))
		if len(atts) == 1 {
			sent = atts[0].Request
		}
		return sent != nil
	})
	require.True(t, ok, "the attempt is recorded with its request: %s", raw)
	require.Equal(t, r.method, sent.Method)
	require.True(t, strings.HasPrefix(sent.URL, recv.URL+"/charge?token=••••"), "url %s", sent.URL)
	require.Equal(t, len(r.header), len(sent.Headers), "every header received is recorded: %v", sent.Headers)
	for name, values := range r.header {
		v := sent.Headers[name]
		switch name {
		case "X-Api-Key", "X-Tenant":
			require.Regexp(t, fingerprint, v, "%s is shown as a fingerprint", name)
		case "Webhook-Signature", "X-Qhronos-Signature":
			require.Equal(t, "[redacted]", v, name)
		default:
			require.Equal(t, strings.Join(values, ", "), v, "header %s as received", name)
		}
	}
	var body map[string]any
	require.NoError(t, json.Unmarshal([]byte(sent.Body), &body))
	require.Regexp(t, fingerprint, body["password"])
	var want map[string]any
	require.NoError(t, json.Unmarshal(r.body, &want))
	want["password"] = body["password"]
	require.Equal(t, want, body, "the body as received but for its credential member")
	require.False(t, sent.BodyTruncated)

	// The occurrence page shows it: the request line, the headers, the
	// JSON body indented.
	p.signIn(srv.master)
	p.open("/ui/occurrences/" + occID)
	p.waitText("#request-1 .request-line", "POST "+recv.URL+"/charge?token=••••", pageTimeout)
	p.waitText("#request-1 .request-headers", "Webhook-Id\t"+occID, pageTimeout)
	p.waitText("#request-1 .request-headers", "Webhook-Signature\t[redacted]", pageTimeout)
	p.waitText("#request-1 .request-headers", "X-Tenant\t"+sent.Headers["X-Tenant"], pageTimeout)
	p.waitText("#request-1 .request-headers", "Idempotency-Key\t"+occID, pageTimeout)
	p.waitText("#request-1 .request-body", "{\n  \"amount\": 42,", pageTimeout)
	p.shot("console-occurrence-request", 1280, false)
	var html string
	p.run(pageTimeout, "read the page", chromedp.OuterHTML("html", &html, chromedp.ByQuery))

	// No secret anywhere: API, page, logs.
	for _, s := range append(secrets, r.header.Get("Webhook-Signature"), r.header.Get("X-Qhronos-Signature")) {
		require.NotContains(t, string(raw), s, "the API answer")
		require.NotContains(t, html, s, "the page")
		require.NotContains(t, srv.logs(), s, "the logs")
	}
	require.Contains(t, srv.logs(), occID, "the delivery was logged (the check above looked at something)")
}

// getRaw is a GET of the API with the master token, its body as sent.
func getRaw(t *testing.T, srv consoleServer, path string) []byte {
	t.Helper()
	req, err := http.NewRequest("GET", srv.url+path, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+srv.master)
	res, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode, fmt.Sprintf("GET %s: %s", path, b))
	return b
}
