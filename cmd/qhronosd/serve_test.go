package main

import (
	"encoding/json"
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
