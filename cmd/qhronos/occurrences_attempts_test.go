package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/client"
	"github.com/qhronos/qhronos/internal/qhronostest"
)

// TestAttemptsShowRequest: `occurrences attempts` carries each attempt's
// request in JSON, and --show-request prints it: the request line, the
// headers the receiver got (signatures redacted) and the body it got.
func TestAttemptsShowRequest(t *testing.T) {
	t.Parallel()
	onBackends(t, func(t *testing.T, srv *qhronostest.Server) {
		e := serverEnv(t, srv)
		rc := qhronostest.NewReceiver(t)
		var ev client.Event
		ok(t, e, &ev, "events", "create", "--name", "ping", "--start", "in 1 hour", "--webhook", rc.URL)
		var occ client.Occurrence
		ok(t, e, &occ, "events", "trigger", ev.ID)
		qhronostest.Wait(t, 60*time.Second, "the attempt is recorded", func() bool {
			ok(t, e, &occ, "occurrences", "get", occ.ID)
			return occ.Status == client.OccurrenceStatusCompleted
		})
		got := rc.Requests()
		require.Len(t, got, 1)

		var atts []client.Attempt
		ok(t, e, &atts, "occurrences", "attempts", occ.ID)
		require.Len(t, atts, 1)
		req := atts[0].Request
		require.NotNil(t, req, "the request is in the JSON")
		require.Equal(t, http.MethodPost, req.Method)
		require.Equal(t, rc.URL, req.URL)
		require.Equal(t, string(got[0].Body), req.Body)
		require.Equal(t, got[0].Header.Get("Webhook-Id"), req.Headers["Webhook-Id"])
		require.Equal(t, "[redacted]", req.Headers["Webhook-Signature"])

		r := cli(t, e, "", "occurrences", "attempts", occ.ID, "--show-request")
		require.Equal(t, 0, r.code, r.stderr)
		require.Contains(t, r.stdout, "ATTEMPT 1 REQUEST:\nPOST "+rc.URL+"\n")
		require.Contains(t, r.stdout, "Webhook-Id: "+occ.ID+"\n")
		require.Contains(t, r.stdout, "Webhook-Signature: [redacted]\n")
		require.Contains(t, r.stdout, "\n\n"+string(got[0].Body)+"\n")
		require.NotContains(t, r.stdout, got[0].Header.Get("Webhook-Signature"))
		require.False(t, strings.Contains(r.stdout, "not recorded"))
	})
}
