package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/client"
	"github.com/qhronos/qhronos/internal/qhronostest"
)

// Every command's happy path against the real server, in JSON and as a
// table.
func TestCommands(t *testing.T) {
	t.Parallel()
	onBackends(t, func(t *testing.T, srv *qhronostest.Server) {
		e := serverEnv(t, srv)
		rc := qhronostest.NewReceiver(t)
		tag := "cli-" + qhronostest.RandomHex(t, 4)

		var ev client.Event
		ok(t, e, &ev, "events", "create", "--name", "ping", "--start", "in 1 hour", "--webhook", rc.URL,
			"--tag", tag, "--metadata", `{"n":1}`, "--rrule", "FREQ=DAILY")
		require.Equal(t, "ping", ev.Name)
		require.Equal(t, "cli", *ev.CreatedVia)
		require.JSONEq(t, `{"n":1}`, string(ev.Metadata))

		var evs []client.Event
		ok(t, e, &evs, "events", "list", "--tag", tag)
		require.Len(t, evs, 1)
		ok(t, e, &evs, "events", "list", "--tag", tag, "--name", "pin")
		require.Len(t, evs, 1, "--name finds it by part of its name")
		ok(t, e, &evs, "events", "list", "--tag", tag, "--name", "nothing-like-it")
		require.Empty(t, evs)
		r := cli(t, e, "", "events", "list", "--tag", tag)
		require.Equal(t, 0, r.code, r.stderr)
		require.Contains(t, r.stdout, "NAME")
		require.Contains(t, r.stdout, ev.ID)

		var got client.Event
		ok(t, e, &got, "events", "get", ev.ID)
		require.Equal(t, ev.ID, got.ID)
		ok(t, e, &got, "events", "update", ev.ID, "--description", "changed")
		require.Equal(t, "changed", *got.Description)
		require.True(t, *got.TracePropagation, "traceparent is sent unless opted out")
		ok(t, e, &got, "events", "update", ev.ID, "--trace-propagation=false")
		require.False(t, *got.TracePropagation)
		// What get prints, edited, is what update -f takes back.
		r = cli(t, e, "", "events", "get", ev.ID, "-o", "json")
		require.Equal(t, 0, r.code, r.stderr)
		edited := strings.Replace(r.stdout, `"name": "ping"`, `"name": "pong"`, 1)
		r = cli(t, e, edited, "events", "update", ev.ID, "-f", "-", "-o", "json")
		require.Equal(t, 0, r.code, r.stderr)
		require.NoError(t, jsonDecode(r.stdout, &got))
		require.Equal(t, "pong", got.Name)
		r = cli(t, e, `{"nmae":"typo"}`, "events", "update", ev.ID, "-f", "-")
		require.Equal(t, exitUsage, r.code)
		require.Contains(t, r.stderr, "nmae")

		ok(t, e, &got, "events", "pause", ev.ID)
		require.Equal(t, client.EventStatusPaused, got.Status)
		ok(t, e, &got, "events", "resume", ev.ID)
		require.Equal(t, client.EventStatusActive, got.Status)

		var pv client.Preview
		ok(t, e, &pv, "events", "preview", ev.ID, "--count", "3")
		require.Len(t, pv.Instants, 3)
		ok(t, e, &pv, "schedule", "preview", "--rrule", "FREQ=WEEKLY;BYDAY=MO", "--timezone", "Europe/Prague", "--count", "2")
		require.Len(t, pv.Instants, 2)
		require.Equal(t, "Europe/Prague", pv.Timezone)

		var rot client.SecretRotation
		ok(t, e, &rot, "events", "rotate-secret", ev.ID, "--grace", "1h")
		require.NotEmpty(t, rot.HmacSecret, "the new secret is shown once")
		require.NotNil(t, rot.PreviousSecretExpiresAt, "the default secret the event signed with keeps signing through the grace")

		var occ client.Occurrence
		ok(t, e, &occ, "events", "trigger", ev.ID)
		require.True(t, *occ.Manual)
		qhronostest.Wait(t, 60*time.Second, "the triggered occurrence completes", func() bool {
			ok(t, e, &occ, "occurrences", "get", occ.ID)
			return occ.Status == client.OccurrenceStatusCompleted
		})
		var occs []client.Occurrence
		ok(t, e, &occs, "occurrences", "list", "--event", ev.ID, "--status", "completed")
		require.Len(t, occs, 1)
		ok(t, e, &occs, "occurrences", "list", "--event", ev.ID, "--status-code", "200")
		require.Len(t, occs, 1, "--status-code 200 keeps the delivered one")
		ok(t, e, &occs, "occurrences", "list", "--event", ev.ID, "--status-code", "503")
		require.Empty(t, occs)
		ok(t, e, &occs, "occurrences", "list", "--tag", tag, "--status", "completed", "--search", "PON")
		require.Len(t, occs, 1, "--search finds the occurrences of events by part of their name")
		ok(t, e, &occs, "occurrences", "list", "--tag", tag, "--search", "nothing-like-it")
		require.Empty(t, occs)
		// History first: the completed trigger, then the daily series ahead.
		ok(t, e, &occs, "occurrences", "list", "--event", ev.ID)
		require.Greater(t, len(occs), 1)
		require.Equal(t, occ.ID, occs[0].ID, "the history comes first")
		ok(t, e, &occs, "occurrences", "list", "--event", ev.ID, "--order", "-scheduled_at")
		require.NotEqual(t, occ.ID, occs[0].ID, "newest first puts the furthest instant first")
		ok(t, e, &occs, "occurrences", "list", "--event", ev.ID, "--order=scheduled_at")
		require.Equal(t, occ.ID, occs[0].ID, "oldest first")
		var atts []client.Attempt
		ok(t, e, &atts, "occurrences", "attempts", occ.ID)
		require.Len(t, atts, 1)
		require.Equal(t, http.StatusOK, *atts[0].StatusCode)

		ok(t, e, &occ, "occurrences", "replay", occ.ID)
		qhronostest.Wait(t, 60*time.Second, "the replay reaches the receiver", func() bool { return len(rc.Requests()) >= 2 })
		// A delivery under way stays pending until its outcome is recorded:
		// wait for that, or the replayed row counts among the pending ones.
		qhronostest.Wait(t, 60*time.Second, "the replay's outcome is recorded", func() bool {
			ok(t, e, &occ, "occurrences", "get", occ.ID)
			return occ.Status == client.OccurrenceStatusCompleted
		})
		var res client.RetryResult
		ok(t, e, &res, "occurrences", "replay", "--event", ev.ID, "--status", "failed")
		require.Zero(t, res.Requeued, "nothing failed, nothing to replay")
		ok(t, e, &res, "occurrences", "replay", "--event", ev.ID, "--status", "failed", "--status-code", "503")
		require.Zero(t, res.Requeued)

		// Schedule control: skip, unskip and move one occurrence; an
		// exception on an instant; pause until.
		ok(t, e, &occs, "occurrences", "list", "--event", ev.ID, "--order=scheduled_at", "--status", "pending")
		require.Len(t, occs, 1, "a daily event has one row a day ahead")
		first := occs[0]
		ok(t, e, &pv, "events", "preview", ev.ID, "--count", "2")
		at := pv.Instants[1].Utc.UTC().Format(time.RFC3339Nano) // not materialized yet
		ok(t, e, &occ, "occurrences", "skip", first.ID, "--reason", "holiday")
		require.Equal(t, client.OccurrenceStatusSkipped, occ.Status)
		require.Equal(t, client.OccurrenceReasonManual, *occ.Reason)
		ok(t, e, &occ, "occurrences", "unskip", first.ID)
		require.Equal(t, client.OccurrenceStatusPending, occ.Status)
		to := first.ScheduledAt.Add(time.Hour).UTC().Format(time.RFC3339)
		ok(t, e, &occ, "occurrences", "move", first.ID, "--to", to)
		require.Equal(t, first.ID, occ.ID)
		require.Equal(t, first.ScheduledAt, *occ.OriginalScheduledAt)
		ok(t, e, nil, "events", "exceptions", "add", ev.ID, "--at", at, "--skip", "--reason", "audit")
		var exs []client.Exception
		ok(t, e, &exs, "events", "exceptions", "list", ev.ID)
		require.Len(t, exs, 2, "the move and the skip")
		ok(t, e, nil, "events", "exceptions", "delete", ev.ID, at)
		ok(t, e, &exs, "events", "exceptions", "list", ev.ID)
		require.Len(t, exs, 1)
		r = cli(t, e, "", "events", "exceptions", "add", ev.ID, "--at", at)
		require.Equal(t, exitUsage, r.code, "--skip or --move-to is required")
		ok(t, e, &got, "events", "pause", ev.ID, "--until", time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
			"--reason", "maintenance")
		require.Equal(t, "maintenance", *got.PauseReason)
		require.NotNil(t, got.PausedUntil)
		ok(t, e, &got, "events", "resume", ev.ID)
		require.Equal(t, client.EventStatusActive, got.Status)
		// --until takes what --start takes; a bad one is a usage error naming it.
		before := time.Now()
		ok(t, e, &got, "events", "pause", ev.ID, "--until", "in 2 hours")
		require.WithinRange(t, *got.PausedUntil, before.Add(2*time.Hour), time.Now().Add(2*time.Hour+time.Second))
		r = cli(t, e, "", "events", "pause", ev.ID, "--until", "whenever")
		require.Equal(t, exitUsage, r.code)
		require.Contains(t, r.stderr, "--until")
		ok(t, e, &got, "events", "resume", ev.ID)

		var cal client.Calendar
		ok(t, e, &cal, "calendars", "create", "--name", "weekends", "--rrule", "FREQ=WEEKLY;BYDAY=SA,SU",
			"--range", "2030-12-27..2030-12-31", "--date", "2030-12-24", "--tag", tag, "--timezone", "Europe/Prague")
		require.Equal(t, []client.DateRange{{From: "2030-12-27", To: "2030-12-31"}}, cal.Ranges)
		var cals []client.Calendar
		ok(t, e, &cals, "calendars", "list", "--tag", tag)
		require.Len(t, cals, 1)
		ok(t, e, &cal, "calendars", "update", cal.ID, "--name", "holidays", "--date", "2030-12-25", "--tag", tag)
		require.Equal(t, []string{"2030-12-25"}, cal.Dates)
		ok(t, e, &cal, "calendars", "get", cal.ID)
		require.Equal(t, "holidays", cal.Name)
		r = cli(t, e, "", "calendars", "create", "--name", "bad", "--range", "2030-12-27")
		require.Equal(t, exitUsage, r.code)
		ok(t, e, nil, "calendars", "delete", cal.ID)

		var tok client.Token
		r = cli(t, e, "", "tokens", "create", "--sub", "ci", "--access", "read", "--scope", tag, "--expires", "1h", "-o", "json")
		require.Equal(t, 0, r.code, r.stderr)
		require.NoError(t, jsonDecode(r.stdout, &tok))
		require.NotEmpty(t, tok.Token, "a minted token is shown once")
		var toks []client.Token
		ok(t, e, &toks, "tokens", "list")
		found := false
		for _, x := range toks {
			found = found || x.ID == tok.ID
			require.Nil(t, x.Token, "list never shows a JWT")
		}
		require.True(t, found)
		ok(t, e, nil, "tokens", "revoke", tok.ID)
		reader := env{"QHRONOS_SERVER": srv.URL, "QHRONOS_TOKEN": *tok.Token, "QHRONOS_CREDENTIALS": e["QHRONOS_CREDENTIALS"]}
		r = cli(t, reader, "", "events", "list")
		require.Equal(t, exitError, r.code, "a revoked token: %s", r.stdout)
		require.Contains(t, r.stderr, "401")

		var st client.Stats
		ok(t, e, &st, "stats")
		require.NotNil(t, st.Total.Occurrences)
		r = cli(t, e, "", "stats")
		require.Equal(t, 0, r.code, r.stderr)
		require.Contains(t, r.stdout, "all")
		var status client.Status
		ok(t, e, &status, "status")
		require.NotEmpty(t, status.Version)
		require.Equal(t, client.StatusStatus("ok"), status.Status)
		r = cli(t, e, "", "status")
		require.Equal(t, 0, r.code, r.stderr)
		require.Regexp(t, `(?m)^STATUS:\s+ok$`, r.stdout)
		require.Regexp(t, `(?m)^LOOP dispatcher:\s+ok \(runs \d+\)$`, r.stdout)

		ok(t, e, nil, "events", "delete", ev.ID)
		r = cli(t, e, "", "events", "get", ev.ID)
		require.Equal(t, exitNotFound, r.code, "a deleted event: %s %s", r.stdout, r.stderr)
		ok(t, e, &got, "events", "get", ev.ID, "--include-deleted")
		require.Equal(t, client.EventStatusDeleted, got.Status, "a deleted event, asked for")
		ok(t, e, &occs, "occurrences", "list", "--event", ev.ID, "--status", "completed")
		require.Len(t, occs, 1, "a deleted event's history stays listable")
	})
}

// errCase is a command line that must fail with code, its stderr naming what.
type errCase struct {
	name   string
	env    env
	args   []string
	code   int
	stderr string
}

// Errors name the field and set the exit code scripts rely on; nothing
// prints a secret.
func TestCommandErrors(t *testing.T) {
	t.Parallel()
	onBackends(t, func(t *testing.T, srv *qhronostest.Server) {
		e := serverEnv(t, srv)
		cases := []errCase{
			{"unknown flag", e, []string{"events", "list", "--bogus"}, exitUsage, "--bogus"},
			{"unknown command", e, []string{"evnts"}, exitUsage, "unknown command"},
			{"unknown subcommand", e, []string{"events", "frobnicate"}, exitUsage, "frobnicate"},
			{"missing name", e, []string{"events", "create", "--start", "in 1 hour", "--webhook", "http://127.0.0.1:9999/h"}, exitUsage, "--name"},
			{"bad output", e, []string{"events", "list", "--output", "yaml"}, exitUsage, "--output"},
			{"bad metadata", e, []string{"events", "create", "--name", "x", "--metadata", "{"}, exitUsage, "--metadata"},
			{"missing id", e, []string{"events", "get"}, exitUsage, "EVENT_ID"},
			{"bad time flag", e, []string{"occurrences", "list", "--from", "yesterday"}, exitUsage, "--from"},
			{"bad order", e, []string{"occurrences", "list", "--order", "name"}, exitUsage, "--order"},
			{"replay needs id or filters", e, []string{"occurrences", "replay"}, exitUsage, "filters"},
			{"400 names the field", e, []string{"events", "create", "--name", "x", "--start", "2001-01-01T00:00:00Z",
				"--webhook", "http://127.0.0.1:9999/h"}, exitError, "start_time"},
			{"404", e, []string{"occurrences", "get", "6f1c1d4e-9a0b-4c1e-8f00-000000000000"}, exitNotFound, "not found"},
			{"401", env{"QHRONOS_SERVER": srv.URL, "QHRONOS_TOKEN": "wrong-token", "QHRONOS_CREDENTIALS": e["QHRONOS_CREDENTIALS"]},
				[]string{"events", "list"}, exitError, "401"},
			{"bad server", env{"QHRONOS_SERVER": "localhost:8080", "QHRONOS_TOKEN": "x", "QHRONOS_CREDENTIALS": e["QHRONOS_CREDENTIALS"]},
				[]string{"status"}, exitUsage, "--server"},
		}
		// Every command: an unknown flag is a usage error; every command
		// taking an id answers 3 for an unknown one; every command of the
		// authenticated API answers 1 naming 401 for a wrong token.
		unknown := "6f1c1d4e-9a0b-4c1e-8f00-000000000000"
		wrong := env{"QHRONOS_SERVER": srv.URL, "QHRONOS_TOKEN": "wrong-token", "QHRONOS_CREDENTIALS": e["QHRONOS_CREDENTIALS"]}
		for _, args := range [][]string{
			{"events", "get", unknown}, {"events", "update", unknown, "--description", "x"}, {"events", "delete", unknown},
			{"events", "pause", unknown}, {"events", "resume", unknown}, {"events", "trigger", unknown},
			{"events", "preview", unknown}, {"events", "rotate-secret", unknown}, {"occurrences", "get", unknown}, {"occurrences", "attempts", unknown},
			{"occurrences", "replay", unknown}, {"tokens", "revoke", unknown},
			{"events", "backfill", unknown, "--from", "7 days ago", "--to", "now"},
			{"runs", "complete", unknown, "--status", "succeeded"}, {"runs", "heartbeat", unknown},
		} {
			cases = append(cases, errCase{"404 " + args[0] + " " + args[1], e, args, exitNotFound, "not found"},
				errCase{"401 " + args[0] + " " + args[1], wrong, args, exitError, "401"})
		}
		for _, args := range [][]string{
			{"events", "create", "--name", "x", "--start", "in 1 hour", "--webhook", "http://127.0.0.1:9999/h"},
			{"events", "list"}, {"occurrences", "list"}, {"occurrences", "replay", "--status", "failed"},
			{"tokens", "create", "--sub", "x"}, {"tokens", "list"}, {"stats"}, {"schedule", "preview", "--cron", "@every 1h"},
		} {
			cases = append(cases, errCase{"401 " + strings.Join(args[:min(2, len(args))], " "), wrong, args, exitError, "401"})
		}
		root := newRootCmd(&app{getenv: env{}.get})
		var leaves func(c *cobra.Command)
		leaves = func(c *cobra.Command) {
			if c.Name() == "help" || c.Name() == "completion" {
				return
			}
			if !c.HasSubCommands() && c.Parent() != nil {
				args := append(strings.Fields(strings.TrimPrefix(c.CommandPath(), "qhronos ")), "--no-such-flag")
				cases = append(cases, errCase{"bad flag " + c.CommandPath(), e, args, exitUsage, "--no-such-flag"})
			}
			for _, sub := range c.Commands() {
				leaves(sub)
			}
		}
		leaves(root)
		for _, tc := range cases {
			r := cli(t, tc.env, "", tc.args...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.stderr) {
				t.Errorf("%s: qhronos %s: exit %d, stderr %q; want exit %d naming %q", tc.name,
					strings.Join(tc.args, " "), r.code, r.stderr, tc.code, tc.stderr)
			}
			if strings.Contains(r.stdout+r.stderr, srv.Token) {
				t.Errorf("%s: output shows the token", tc.name)
			}
		}
	})
}

// login checks the token, stores it 0600 and later commands use it; a
// refused token stores nothing.
func TestLogin(t *testing.T) {
	t.Parallel()
	srv := qhronostest.Start(t, qhronostest.SQLite)
	path := t.TempDir() + "/qhronos/credentials.json"
	e := env{"QHRONOS_CREDENTIALS": path}

	r := cli(t, e, "wrong-token\n", "login", "--server", srv.URL)
	require.Equal(t, exitError, r.code, r.stderr)
	_, err := os.Stat(path)
	require.True(t, os.IsNotExist(err), "a refused login stores nothing")

	r = cli(t, e, srv.Token+"\n", "login", "--server", srv.URL)
	require.Equal(t, 0, r.code, r.stderr)
	require.NotContains(t, r.stdout+r.stderr, srv.Token, "login never prints the token")
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())

	r = cli(t, e, "", "events", "list")
	require.Equal(t, 0, r.code, "a command after login: %s", r.stderr)
	r = cli(t, env{"QHRONOS_CREDENTIALS": path, "QHRONOS_SERVER": srv.URL + "/"}, "", "events", "list")
	require.Equal(t, 0, r.code, "the stored token goes with its server, however written: %s", r.stderr)
	var sent atomic.Value
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent.Store(r.Header.Get("Authorization"))
		http.Error(w, `{"error":"unauthorized"}`, http.StatusUnauthorized)
	}))
	defer other.Close()
	r = cli(t, env{"QHRONOS_CREDENTIALS": path, "QHRONOS_SERVER": other.URL}, "", "events", "list")
	require.Equal(t, exitError, r.code)
	require.Equal(t, "", sent.Load(), "the stored token is never sent to another server")
	r = cli(t, e, "", "login")
	require.Equal(t, exitUsage, r.code)
	require.Contains(t, r.stderr, "--server")
}

func TestCompletionAndHelp(t *testing.T) {
	t.Parallel()
	r := cli(t, env{}, "", "completion", "bash")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "qhronos")
	for _, args := range [][]string{{"--help"}, {"events", "create", "--help"}, {"listen", "--help"}, {"verify", "--help"}} {
		r = cli(t, env{}, "", args...)
		require.Equal(t, 0, r.code, r.stderr)
		require.Contains(t, r.stdout, "Examples:", "qhronos %s", strings.Join(args, " "))
	}
}

// Every command of ours has examples in its --help and supports --output.
func TestEveryCommandHasExamples(t *testing.T) {
	t.Parallel()
	root := newRootCmd(&app{getenv: env{}.get})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Name() == "help" || c.Name() == "completion" || c.Parent() != nil && c.Parent().Name() == "completion" {
			return
		}
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%s has no examples in --help", c.CommandPath())
		}
		if c.Flags().Lookup("output") == nil && c.PersistentFlags().Lookup("output") == nil && c.InheritedFlags().Lookup("output") == nil {
			t.Errorf("%s has no --output", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
