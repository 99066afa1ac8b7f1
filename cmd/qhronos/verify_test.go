package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/client"
	"github.com/qhronos/qhronos/internal/qhronostest"
	"github.com/qhronos/qhronos/receiver"
)

func saveRequest(t *testing.T, requestLine bool, h http.Header, body []byte) string {
	var b strings.Builder
	if requestLine {
		b.WriteString("POST /hooks HTTP/1.1\r\nHost: 127.0.0.1:3000\r\n")
	}
	for k, vs := range h {
		for _, v := range vs {
			fmt.Fprintf(&b, "%s: %s\r\n", k, v)
		}
	}
	b.WriteString("\r\n")
	b.Write(body)
	path := filepath.Join(t.TempDir(), "request.txt")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o600))
	return path
}

func TestVerify(t *testing.T) {
	t.Parallel()
	body := []byte(`{"event_id":"e","occurrence_id":"o"}` + "\r\n")
	signed := saveRequest(t, true, receiver.Sign([]string{"s3cret"}, "o", time.Now(), body), body)
	bare := saveRequest(t, false, receiver.Sign([]string{"s3cret"}, "o", time.Now(), body), body)
	old := saveRequest(t, true, receiver.Sign([]string{"s3cret"}, "o", time.Now().Add(-time.Hour), body), body)
	cases := []struct {
		args  []string
		stdin string
		code  int
		out   string
	}{
		{[]string{"verify", "--secret", "s3cret", signed}, "", exitOK, "VALID"},
		{[]string{"verify", "--secret", "s3cret", bare}, "", exitOK, "VALID"},
		{[]string{"verify", "--secret", "other", "--secret", "s3cret", signed}, "", exitOK, "VALID"},
		{[]string{"verify", "--secret", "wrong", signed}, "", exitError, "NOT VALID"},
		{[]string{"verify", "--secret", "s3cret", old}, "", exitError, "outside the 5m0s tolerance"},
		{[]string{"verify", "--secret", "s3cret", "--tolerance", "0", old}, "", exitOK, "VALID"},
		{[]string{"verify", "--secret", "s3cret", "-o", "json", old}, "", exitError, `"valid": false`},
	}
	for _, tc := range cases {
		r := cli(t, env{}, tc.stdin, tc.args...)
		if r.code != tc.code || !strings.Contains(r.stdout, tc.out) {
			t.Errorf("qhronos %s: exit %d, stdout %q; want exit %d with %q", strings.Join(tc.args, " "), r.code, r.stdout, tc.code, tc.out)
		}
		if strings.Contains(r.stdout+r.stderr, "s3cret") {
			t.Errorf("qhronos %s prints the secret", strings.Join(tc.args, " "))
		}
	}
	raw, err := os.ReadFile(signed)
	require.NoError(t, err)
	r := cli(t, env{"QHRONOS_WEBHOOK_SECRET": "s3cret"}, string(raw), "verify")
	require.Equal(t, exitOK, r.code, "stdin and the environment: %s", r.stderr)
	r = cli(t, env{}, string(raw), "verify")
	require.Equal(t, exitUsage, r.code)
	require.Contains(t, r.stderr, "--secret")
	r = cli(t, env{}, "", "verify", "--secret", "x", "/nonexistent/file")
	require.Equal(t, exitUsage, r.code)
}

// verify accepts a delivery the real server made, saved as received.
func TestVerifyRealDelivery(t *testing.T) {
	t.Parallel()
	srv := qhronostest.Start(t, qhronostest.SQLite)
	e := serverEnv(t, srv)
	rc := qhronostest.NewReceiver(t)
	var ev client.Event
	ok(t, e, &ev, "events", "create", "--name", "real", "--start", "in 1 hour", "--webhook", rc.URL)
	ok(t, e, nil, "events", "trigger", ev.ID)
	qhronostest.Wait(t, 60*time.Second, "the webhook arrives", func() bool { return len(rc.Requests()) == 1 })
	got := rc.Requests()[0]
	path := saveRequest(t, true, got.Header, got.Body)
	r := cli(t, env{"QHRONOS_WEBHOOK_SECRET": srv.DefaultSecret}, "", "verify", path)
	require.Equal(t, exitOK, r.code, "%s %s", r.stdout, r.stderr)
	r = cli(t, env{}, "", "verify", "--secret", "not-it", path)
	require.Equal(t, exitError, r.code)
}
