package main

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/client"
	"github.com/qhronos/qhronos/internal/qhronostest"
)

// events create|upsert|update --concurrency-key --concurrency-limit give
// events a shared key, events get shows it and --no-concurrency removes it;
// concurrency-keys list|get show the key's limit (the smallest its events
// name), its runs in flight and its waiters, pause and resume flip it. A
// flag without its pair is a usage error, a limit out of range the server's
// refusal naming concurrency.limit, an unknown key exit 3 saying what that
// means.
func TestConcurrencyKeysCommands(t *testing.T) {
	t.Parallel()
	onBackends(t, func(t *testing.T, srv *qhronostest.Server) {
		e := serverEnv(t, srv)
		rc := qhronostest.NewReceiver(t)
		rc.Answer(func(qhronostest.Request) int { return http.StatusAccepted }) // each run stays running
		event := []string{"--start", "in 1 hour", "--webhook", rc.URL, "--completion", "callback"}

		var a, b client.Event
		ok(t, e, &a, append([]string{"events", "create", "--name", "sync a", "--concurrency-key", "customer-42",
			"--concurrency-limit", "2"}, event...)...)
		require.Equal(t, &client.Concurrency{Key: "customer-42", Limit: 2}, a.Concurrency)
		ok(t, e, &b, append([]string{"events", "upsert", "sync-b", "--name", "sync b", "--concurrency-key", "customer-42",
			"--concurrency-limit", "1"}, event...)...)
		require.Equal(t, &client.Concurrency{Key: "customer-42", Limit: 1}, b.Concurrency)
		r := cli(t, e, "", "events", "get", a.ID)
		require.Equal(t, 0, r.code, r.stderr)
		require.Equal(t, "customer-42 (limit 2)", field(t, r.stdout, "CONCURRENCY"))

		r = cli(t, e, "", "concurrency-keys", "list")
		require.Equal(t, 0, r.code, r.stderr)
		require.Equal(t, []string{"KEY", "LIMIT", "IN", "FLIGHT", "WAITING", "PAUSED"}, strings.Fields(strings.Split(r.stdout, "\n")[0]))
		require.Equal(t, []string{"customer-42", "1", "0", "0", "no"}, row(t, r.stdout, "customer-42"), "the smaller limit")
		var keys []client.ConcurrencyKey
		ok(t, e, &keys, "concurrency-keys", "list", "--all")
		require.Equal(t, []client.ConcurrencyKey{{Key: "customer-42", Limit: 1}}, keys)

		// a's run holds the key's one slot, b's occurrence waits for it.
		var occ client.Occurrence
		ok(t, e, &occ, "events", "trigger", a.ID)
		waitOccurrence(t, e, occ.ID, func(o client.Occurrence) bool { return o.Status == client.OccurrenceStatusRunning },
			"a's run starts")
		ok(t, e, &occ, "events", "trigger", b.ID)
		qhronostest.Wait(t, 60*time.Second, "b's occurrence waits", func() bool {
			var k client.ConcurrencyKey
			ok(t, e, &k, "concurrency-keys", "get", "customer-42")
			return k.Waiting == 1
		})
		r = cli(t, e, "", "concurrency-keys", "get", "customer-42")
		require.Equal(t, 0, r.code, r.stderr)
		require.Equal(t, "1", field(t, r.stdout, "IN FLIGHT"))
		require.Equal(t, "1", field(t, r.stdout, "WAITING"))
		require.Equal(t, "no", field(t, r.stdout, "PAUSED"))
		require.Equal(t, "-", field(t, r.stdout, "PAUSED AT"))

		r = cli(t, e, "", "concurrency-keys", "pause", "customer-42")
		require.Equal(t, 0, r.code, r.stderr)
		require.Equal(t, "yes", field(t, r.stdout, "PAUSED"))
		require.NotEqual(t, "-", field(t, r.stdout, "PAUSED AT"))
		require.NotEqual(t, "-", field(t, r.stdout, "PAUSED BY"))
		r = cli(t, e, "", "concurrency-keys", "list")
		require.Equal(t, []string{"customer-42", "1", "1", "1", "yes"}, row(t, r.stdout, "customer-42"))
		var k client.ConcurrencyKey
		ok(t, e, &k, "concurrency-keys", "resume", "customer-42")
		require.False(t, k.Paused)
		require.Nil(t, k.PausedAt)

		// --no-concurrency clears the field (null), alone or with others; the
		// key stays while b names it, with b's limit.
		// (A fresh variable each time: the API leaves out a null concurrency.)
		var cleared, limited, both client.Event
		ok(t, e, &cleared, "events", "update", a.ID, "--no-concurrency")
		require.Nil(t, cleared.Concurrency)
		r = cli(t, e, "", "events", "get", a.ID)
		require.Equal(t, "none", field(t, r.stdout, "CONCURRENCY"))
		ok(t, e, &limited, "events", "update", b.ID, "--concurrency-key", "customer-42", "--concurrency-limit", "3")
		require.Equal(t, &client.Concurrency{Key: "customer-42", Limit: 3}, limited.Concurrency)
		ok(t, e, &k, "concurrency-keys", "get", "customer-42")
		require.Equal(t, 3, k.Limit)
		ok(t, e, &both, "events", "update", b.ID, "--no-concurrency", "--description", "no key")
		require.Nil(t, both.Concurrency)
		require.Equal(t, "no key", *both.Description)

		// Clipped: each case's append copies it instead of sharing its tail.
		create := slices.Clip(append([]string{"events", "create", "--name", "x"}, event...))
		for _, tc := range []errCase{
			{"limit 0", e, append(create, "--concurrency-key", "customer-42", "--concurrency-limit", "0"), exitError, "concurrency.limit"},
			{"limit 1001", e, []string{"events", "update", a.ID, "--concurrency-key", "customer-42", "--concurrency-limit", "1001"},
				exitError, "concurrency.limit"},
			{"bad key", e, append(create, "--concurrency-key", "customer 42", "--concurrency-limit", "1"), exitError, "concurrency.key"},
			{"not a number", e, append(create, "--concurrency-key", "customer-42", "--concurrency-limit", "two"), exitUsage, "--concurrency-limit"},
			{"key alone", e, append(create, "--concurrency-key", "customer-42"), exitUsage, "--concurrency-limit"},
			{"limit alone", e, []string{"events", "update", a.ID, "--concurrency-limit", "2"}, exitUsage, "--concurrency-key"},
			{"both ways", e, []string{"events", "update", a.ID, "--no-concurrency", "--concurrency-key", "k", "--concurrency-limit", "2"},
				exitUsage, "--no-concurrency"},
			{"no key", e, []string{"concurrency-keys", "get"}, exitUsage, "KEY"},
			{"unknown get", e, []string{"concurrency-keys", "get", "customer-7"}, exitNotFound, `concurrency key "customer-7": no event`},
			{"unknown", e, []string{"concurrency-keys", "pause", "no-such-key"}, exitNotFound, "not found"},
		} {
			r := cli(t, tc.env, "", tc.args...)
			require.Equal(t, tc.code, r.code, "%s: %s", tc.name, r.stderr)
			require.Contains(t, r.stderr, tc.stderr, tc.name)
		}
	})
}

// row is the cells of the table row of out whose first cell is first.
func row(t *testing.T, out, first string) []string {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if cells := strings.Fields(line); len(cells) > 0 && cells[0] == first {
			return cells
		}
	}
	t.Fatalf("no row %s in:\n%s", first, out)
	return nil
}
