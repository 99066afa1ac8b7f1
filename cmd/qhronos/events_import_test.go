package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/client"
	"github.com/qhronos/qhronos/internal/qhronostest"
)

// countTagged counts the live events carrying tag.
func countTagged(t *testing.T, srv *qhronostest.Server, tag string) int {
	t.Helper()
	c, err := client.New(srv.URL, client.WithToken(srv.Token))
	require.NoError(t, err)
	n := 0
	for _, err := range c.Events.All(qhronostest.Context(t, time.Minute), client.ListEventsParams{Tags: []string{tag},
		Limit: client.Ptr(100)}) {
		require.NoError(t, err)
		n++
	}
	return n
}

// An import interrupted after a few batches, run again, creates every event
// exactly once: the batches done answer from their idempotency keys. Refused
// lines are reported with their line number and field, and in --rejects.
func TestEventsImportResumesWithoutDuplicates(t *testing.T) {
	t.Parallel()
	onBackends(t, func(t *testing.T, srv *qhronostest.Server) {
		tag := "import-" + qhronostest.RandomHex(t, 4)
		start := time.Now().Add(2 * time.Hour).UTC().Format(time.RFC3339)
		var lines []string
		valid := 0
		for i := 1; i <= 40; i++ {
			switch i {
			case 7:
				lines = append(lines, "")
			case 12:
				lines = append(lines, `{"name": "broken",`)
			case 23:
				lines = append(lines, fmt.Sprintf(`{"name": "late", "start_time": "2001-01-01T00:00:00Z", "webhook": "http://127.0.0.1:9999/h", "tags": [%q]}`, tag))
			default:
				lines = append(lines, fmt.Sprintf(`{"name": "event %d", "start_time": %q, "webhook": "http://127.0.0.1:9999/h", "tags": [%q]}`, i, start, tag))
				valid++
			}
		}
		dir := t.TempDir()
		file, rejects := filepath.Join(dir, "events.jsonl"), filepath.Join(dir, "rejects.jsonl")
		require.NoError(t, os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600))

		// The first run goes through a proxy that lets three batches through,
		// then fails like a server going away.
		target, err := url.Parse(srv.URL)
		require.NoError(t, err)
		proxy := httputil.NewSingleHostReverseProxy(target)
		var passed atomic.Int32
		cut := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/events/batch" && passed.Add(1) > 3 {
				http.Error(w, `{"error":"interrupted"}`, http.StatusInternalServerError)
				return
			}
			proxy.ServeHTTP(w, r)
		}))
		t.Cleanup(cut.Close)
		args := []string{"events", "import", file, "--batch-size", "4", "--concurrency", "2", "--rejects", rejects}
		e := serverEnv(t, srv)
		e["QHRONOS_SERVER"] = cut.URL
		r := cli(t, e, "", args...)
		require.Equal(t, exitError, r.code, "stdout %s stderr %s", r.stdout, r.stderr)
		require.Contains(t, r.stderr, "run the same command again to resume")
		first := countTagged(t, srv, tag)
		require.Greater(t, first, 0, "some batches went through")
		require.Less(t, first, valid, "the import was cut short")

		// Run again, as is: every event once, refusals reported.
		r = cli(t, serverEnv(t, srv), "", args...)
		require.Equal(t, exitError, r.code, "refused lines make the exit code non-zero: %s", r.stderr)
		require.Contains(t, r.stderr, "line 12: body: must be a JSON object (HTTP 400)")
		require.Contains(t, r.stderr, "line 23: start_time:")
		require.Contains(t, r.stdout, fmt.Sprintf("imported %d events", valid))
		require.Equal(t, valid, countTagged(t, srv, tag), "no event was created twice")

		raw, err := os.ReadFile(rejects)
		require.NoError(t, err)
		var got []rejected
		for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
			var rj rejected
			require.NoError(t, json.Unmarshal([]byte(l), &rj), l)
			got = append(got, rj)
		}
		require.Len(t, got, 2)
		if got[0].Line > got[1].Line {
			got[0], got[1] = got[1], got[0]
		}
		require.Equal(t, 12, got[0].Line)
		require.Equal(t, "body", got[0].Field)
		require.Equal(t, 23, got[1].Line)
		require.Equal(t, "start_time", got[1].Field)
		require.Equal(t, http.StatusBadRequest, got[1].Status)
		require.Contains(t, string(got[1].Event), `"late"`, "the refused event is kept to fix and import again")

		// Once more from stdin, all in one batch: JSON summary, new events
		// (stdin has an identity of its own).
		var sum importSummary
		stdin := strings.Join(lines[:6], "\n") + "\n"
		r = cli(t, serverEnv(t, srv), stdin, "events", "import", "-", "--output", "json")
		require.Equal(t, 0, r.code, r.stderr)
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &sum), r.stdout)
		require.Equal(t, 6, sum.Created)
		require.Equal(t, valid+6, countTagged(t, srv, tag))
	})
}
