package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/qhronostest"
)

// startedLine waits for the "qhronosd started" line of s's JSON log and
// returns its fields.
func startedLine(t *testing.T, s *qhronostest.Server) map[string]any {
	t.Helper()
	var fields map[string]any
	qhronostest.Wait(t, 60*time.Second, "the start-up log line", func() bool {
		for _, line := range strings.Split(s.Logs(), "\n") {
			if strings.Contains(line, `"qhronosd started"`) {
				return json.Unmarshal([]byte(line), &fields) == nil
			}
		}
		return false
	})
	return fields
}

// The start-up log says whether outbound requests may reach loopback as
// the policy in force decides it: an operator's outbound.allow_cidrs
// re-opening loopback in production counts (issue #34).
func TestStartupLogSaysWhetherLoopbackIsReachable(t *testing.T) {
	cases := []struct {
		name    string
		backend qhronostest.Backend
		extra   []string
		want    bool
	}{
		{"embedded on loopback", qhronostest.SQLite, nil, true},
		{"production with loopback allow-listed", qhronostest.Postgres,
			[]string{"QHRONOS_OUTBOUND_ALLOW_CIDRS=10.0.0.0/8,127.0.0.0/8"}, true},
		{"production without", qhronostest.Postgres, []string{"QHRONOS_OUTBOUND_ALLOW_CIDRS=10.0.0.0/8"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := qhronostest.Start(t, tc.backend, append([]string{"QHRONOS_LOG_LEVEL=info", "QHRONOS_LOG_FORMAT=json"},
				tc.extra...)...)
			got := startedLine(t, s)
			require.Equal(t, tc.want, got["outbound_loopback_allowed"], "%v", got)
		})
	}
}

// post sends body to s's API with the master token and returns the status
// and the decoded answer.
func post(t *testing.T, s *qhronostest.Server, path string, body any) (int, map[string]any) {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	req, err := http.NewRequest("POST", s.URL+path, bytes.NewReader(b))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+s.Token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	var out map[string]any
	require.NoError(t, json.NewDecoder(res.Body).Decode(&out))
	return res.StatusCode, out
}

// With its address allow-listed, the coordination Redis is still no
// destination: an event or endpoint naming it is refused with 400 naming
// the url (issue #34).
func TestTheCoordinationRedisIsNoDestination(t *testing.T) {
	for _, backend := range qhronostest.Backends() {
		t.Run(string(backend), func(t *testing.T) {
			t.Parallel()
			redisEnv := qhronostest.WithRedis(t)
			s := qhronostest.Start(t, backend, append(redisEnv, "QHRONOS_OUTBOUND_ALLOW_CIDRS=127.0.0.0/8,::1/128")...)
			coord := strings.TrimPrefix(redisEnv[0], "QHRONOS_REDIS_URL=")
			u, err := url.Parse(coord)
			require.NoError(t, err)
			status, body := post(t, s, "/events", map[string]any{"name": "into qhronos", "tags": []string{"t"},
				"start_time": time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
				"action": map[string]any{"type": "redis_stream", "params": map[string]any{
					"url": "redis://" + u.Host, "stream": "qhronos:lock:x"}}})
			require.Equal(t, http.StatusBadRequest, status, "%v", body)
			require.Equal(t, "action.params.url", body["field"], "%v", body)
			require.Contains(t, body["error"], "coordination Redis")

			status, body = post(t, s, "/endpoints", map[string]any{"name": "coord", "url": "redis://[::1]:" + u.Port()})
			require.Equal(t, http.StatusBadRequest, status, "%v", body)
			require.Equal(t, "url", body["field"], "%v", body)
			require.Contains(t, body["error"], "coordination Redis", "another address of the same machine")
		})
	}
}
