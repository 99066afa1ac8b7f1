package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/client"
	"github.com/qhronos/qhronos/internal/qhronostest"
)

// events create --completion callback --max-runtime makes an event whose
// deliveries start runs (--overlap says what an instant does meanwhile);
// runs heartbeat and runs complete report them with
// the delivery's run token alone (--run-token or QHRONOS_RUN_TOKEN) or with
// the configured token, and occurrences get shows the run. Refusals set the
// exit code and name the flag or the conflict; no output shows the token.
func TestRunsCommands(t *testing.T) {
	t.Parallel()
	onBackends(t, func(t *testing.T, srv *qhronostest.Server) {
		e := serverEnv(t, srv)
		rc := qhronostest.NewReceiver(t)
		rc.Answer(func(qhronostest.Request) int { return http.StatusAccepted })

		var ev client.Event
		ok(t, e, &ev, "events", "create", "--name", "export", "--start", "in 1 hour", "--webhook", rc.URL,
			"--completion", "callback", "--max-runtime", "30m")
		require.Equal(t, client.EventCompletionCallback, *ev.Completion)
		require.Equal(t, "30m0s", *ev.MaxRuntime)
		r := cli(t, e, "", "events", "get", ev.ID)
		require.Equal(t, 0, r.code, r.stderr)
		require.Equal(t, "callback, max runtime 30m0s", field(t, r.stdout, "COMPLETION"))
		ok(t, e, &ev, "events", "update", ev.ID, "--max-runtime", "2h")
		require.Equal(t, "2h0m0s", *ev.MaxRuntime, "update sends max_runtime alone")
		require.Equal(t, client.EventCompletionCallback, *ev.Completion)
		require.Equal(t, "allow", field(t, r.stdout, "OVERLAP"), "the default overlap policy")
		ok(t, e, &ev, "events", "update", ev.ID, "--overlap", "buffer_one")
		require.Equal(t, client.EventOverlapBufferOne, *ev.Overlap)
		r = cli(t, e, "", "events", "get", ev.ID)
		require.Equal(t, "buffer_one", field(t, r.stdout, "OVERLAP"))
		r = cli(t, e, "", "events", "update", ev.ID, "--overlap", "queue")
		require.NotEqual(t, 0, r.code)
		require.Contains(t, r.stderr, "overlap")
		ok(t, e, &ev, "events", "update", ev.ID, "--overlap", "allow")

		// started fires the event and returns the occurrence, once its
		// delivery is accepted and the run under way, and the delivery's
		// run token.
		started := func() (string, string) {
			t.Helper()
			var occ client.Occurrence
			ok(t, e, &occ, "events", "trigger", ev.ID)
			token := ""
			qhronostest.Wait(t, 60*time.Second, "the delivery arrives", func() bool {
				for _, req := range rc.Requests() {
					if strings.Contains(string(req.Body), occ.ID) {
						token = req.Header.Get("Qhronos-Run-Token")
						return true
					}
				}
				return false
			})
			require.NotEmpty(t, token)
			waitOccurrence(t, e, occ.ID, func(o client.Occurrence) bool { return o.Status == client.OccurrenceStatusRunning },
				"the accepted delivery starts the run")
			return occ.ID, token
		}
		// A receiver's environment: the server, and no API token.
		receiverEnv := func(extra ...string) env {
			re := env{"QHRONOS_SERVER": srv.URL, "QHRONOS_CREDENTIALS": filepath.Join(t.TempDir(), "none.json")}
			for i := 0; i+1 < len(extra); i += 2 {
				re[extra[i]] = extra[i+1]
			}
			return re
		}
		bare := receiverEnv()

		id, token := started()
		var occ client.Occurrence
		ok(t, bare, &occ, "runs", "heartbeat", id, "--run-token", token)
		require.Equal(t, client.OccurrenceStatusRunning, occ.Status)
		require.NotNil(t, occ.Run.HeartbeatAt)
		ok(t, bare, &occ, "runs", "complete", id, "--status", "succeeded", "--run-output", `{"rows": 42}`, "--run-token", token)
		require.Equal(t, client.OccurrenceStatusCompleted, occ.Status)
		require.JSONEq(t, `{"rows":42}`, string(*occ.Run.Output))
		ok(t, bare, &occ, "runs", "complete", id, "--status", "succeeded", "--run-output", `{"rows": 42}`, "--run-token", token)
		require.Equal(t, client.OccurrenceStatusCompleted, occ.Status, "the same report again is accepted")

		r = cli(t, e, "", "occurrences", "get", id)
		require.Equal(t, 0, r.code, r.stderr)
		require.Equal(t, "completed", field(t, r.stdout, "STATUS"))
		require.True(t, strings.HasPrefix(field(t, r.stdout, "RUN REPORT"), "succeeded at "), r.stdout)
		require.Equal(t, `{"rows":42}`, field(t, r.stdout, "RUN OUTPUT"))
		require.NotEqual(t, "-", field(t, r.stdout, "RUN DURATION"))

		// QHRONOS_RUN_TOKEN, the output from a file, as a table.
		id2, token2 := started()
		path := filepath.Join(t.TempDir(), "error.json")
		require.NoError(t, os.WriteFile(path, []byte(`{"error": "disk full"}`), 0o600))
		r = cli(t, receiverEnv("QHRONOS_RUN_TOKEN", token2), "", "runs", "complete", id2, "--status", "failed", "--run-output", "@"+path)
		require.Equal(t, 0, r.code, r.stderr)
		require.Equal(t, "failed", field(t, r.stdout, "STATUS"))
		require.Equal(t, `{"error":"disk full"}`, field(t, r.stdout, "RUN OUTPUT"))
		require.NotContains(t, r.stdout+r.stderr, token2)

		// The configured (master) token, the output from stdin.
		id3, _ := started()
		r = cli(t, e, `"done"`, "runs", "complete", id3, "--status", "succeeded", "--run-output", "@-")
		require.Equal(t, 0, r.code, r.stderr)
		require.Equal(t, "completed", field(t, r.stdout, "STATUS"))
		require.Equal(t, `"done"`, field(t, r.stdout, "RUN OUTPUT"))

		for _, tc := range []errCase{
			{"no --status", bare, []string{"runs", "complete", id, "--run-token", token}, exitUsage, "--status"},
			{"bad --status", bare, []string{"runs", "complete", id, "--status", "done", "--run-token", token}, exitUsage, "--status"},
			{"bad --run-output", bare, []string{"runs", "complete", id, "--status", "succeeded", "--run-output", "{"}, exitUsage, "--run-output"},
			{"no such file", bare, []string{"runs", "complete", id, "--status", "succeeded", "--run-output", "@" + path + ".missing"},
				exitUsage, "--run-output"},
			{"another report", bare, []string{"runs", "complete", id, "--status", "failed", "--run-token", token}, exitError, "HTTP 409"},
			{"heartbeat after the end", bare, []string{"runs", "heartbeat", id, "--run-token", token}, exitError, "HTTP 409"},
			{"another occurrence's token", bare, []string{"runs", "heartbeat", id2, "--run-token", token}, exitError,
				"a run token reports only the occurrence"},
			{"no token", bare, []string{"runs", "heartbeat", id2}, exitError, "HTTP 401"},
		} {
			r := cli(t, tc.env, "", tc.args...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.stderr) {
				t.Errorf("%s: qhronos %v: exit %d, stderr %q; want exit %d naming %q", tc.name, tc.args, r.code,
					r.stderr, tc.code, tc.stderr)
			}
			if strings.Contains(r.stdout+r.stderr, token) {
				t.Errorf("%s: output shows the run token", tc.name)
			}
		}

		// Back to completion by response: the run settings go.
		var back client.Event
		ok(t, e, &back, "events", "update", ev.ID, "--completion", "response")
		require.Equal(t, client.EventCompletionResponse, *back.Completion)
		require.Nil(t, back.MaxRuntime)
		r = cli(t, e, "", "events", "get", ev.ID)
		require.Equal(t, "response", field(t, r.stdout, "COMPLETION"))
	})
}
