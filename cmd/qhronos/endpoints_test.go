package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/client"
	"github.com/qhronos/qhronos/internal/qhronostest"
	"github.com/qhronos/qhronos/internal/redact"
)

// The endpoints commands against the real server: create, list, get,
// update, disable, enable, rotate-secret and delete, in JSON and as a table.
func TestEndpointCommands(t *testing.T) {
	t.Parallel()
	onBackends(t, func(t *testing.T, srv *qhronostest.Server) {
		e := serverEnv(t, srv)
		rc := qhronostest.NewReceiver(t)
		tag := "cli-" + qhronostest.RandomHex(t, 4)

		var ep client.Endpoint
		ok(t, e, &ep, "endpoints", "create", "--name", "billing", "--url", rc.URL, "--tag", tag, "--rate", "2.5",
			"--max-concurrency", "2", "--header", "X-Team=billing", "--auth", "basic", "--username", "q",
			"--password", "cli-password")
		require.Equal(t, "billing", ep.Name)
		require.NotNil(t, ep.Secret)
		require.True(t, strings.HasPrefix(*ep.Secret, "whsec_"))
		require.Equal(t, 2.5, ep.RateLimit.PerSecond)
		require.Equal(t, 3, *ep.RateLimit.Burst)
		require.Len(t, ep.Headers, 1)
		require.True(t, redact.IsFingerprint(ep.Headers["X-Team"]), "header values are write-only: %v", ep.Headers)
		require.Equal(t, client.EndpointAuthTypeBasic, ep.Auth.Type)

		var eps []client.Endpoint
		ok(t, e, &eps, "endpoints", "list", "--tag", tag)
		require.Len(t, eps, 1)
		require.Nil(t, eps[0].Secret, "only create shows the secret")
		ok(t, e, &eps, "endpoints", "list", "--tag", tag, "--state", "disabled")
		require.Empty(t, eps)

		ok(t, e, &ep, "endpoints", "update", ep.ID, "--no-rate-limit", "--timeout", "5s", "--name", "billing-eu")
		require.Nil(t, ep.RateLimit)
		require.Equal(t, "5s", *ep.Timeout)
		require.Equal(t, "billing-eu", ep.Name)
		require.Equal(t, 2, ep.MaxConcurrency, "what update does not name stays")

		file := filepath.Join(t.TempDir(), "endpoint.json")
		require.NoError(t, os.WriteFile(file, []byte(`{"circuit": {"failures": 3, "cool_down": "1m"}}`), 0o600))
		ok(t, e, &ep, "endpoints", "update", ep.ID, "-f", file)
		require.Equal(t, 3, *ep.Circuit.Failures)

		ok(t, e, &ep, "endpoints", "disable", ep.ID)
		require.Equal(t, client.EndpointStateDisabled, ep.State)
		ok(t, e, &ep, "endpoints", "enable", ep.ID)
		require.Equal(t, client.EndpointStateHealthy, ep.State)
		require.Equal(t, 0, *ep.Resumed)
		var tr client.EndpointTestResult
		ok(t, e, &tr, "endpoints", "test", ep.ID)
		require.True(t, tr.Delivered, "test delivery: %+v", tr)
		require.Equal(t, 200, *tr.StatusCode)
		require.Len(t, rc.Requests(), 1, "one signed test webhook reached the receiver")
		r := cli(t, e, "", "endpoints", "test", ep.ID)
		require.Equal(t, 0, r.code, r.stderr)
		require.Contains(t, r.stdout, "true")
		require.Contains(t, r.stdout, "200")
		ok(t, e, &ep, "endpoints", "rotate-secret", ep.ID, "--grace", "1h")
		require.NotNil(t, ep.Secret)
		require.NotNil(t, ep.PreviousSecretExpiresAt)

		r = cli(t, e, "", "endpoints", "get", ep.ID)
		require.Equal(t, 0, r.code, r.stderr)
		require.Contains(t, r.stdout, "billing-eu")
		require.Contains(t, r.stdout, "healthy")
		require.NotContains(t, r.stdout, "cli-password")

		r = cli(t, e, "", "endpoints", "create", "--name", "no-url")
		require.Equal(t, exitUsage, r.code, r.stderr)
		r = cli(t, e, "", "endpoints", "create", "--name", "bad", "--url", "ftp://example.com")
		require.NotEqual(t, 0, r.code)
		require.Contains(t, r.stderr, "url")
		r = cli(t, e, "", "endpoints", "update", ep.ID, "--password", "x")
		require.Equal(t, exitUsage, r.code, "--password needs --auth")

		ok(t, e, nil, "endpoints", "delete", ep.ID)
		r = cli(t, e, "", "endpoints", "get", ep.ID)
		require.NotEqual(t, 0, r.code)
	})
}
