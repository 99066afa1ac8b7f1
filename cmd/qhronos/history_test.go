package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/client"
	"github.com/qhronos/qhronos/internal/qhronostest"
)

// Changes made with the CLI show in the event's history on the cli
// channel; events history lists them oldest first.
func TestHistoryCommandShowsTheCLIChannel(t *testing.T) {
	t.Parallel()
	onBackends(t, func(t *testing.T, srv *qhronostest.Server) {
		e := serverEnv(t, srv)
		var ev client.Event
		ok(t, e, &ev, "events", "create", "--name", "ping", "--start", "in 1 hour", "--webhook",
			"http://127.0.0.1:9999/h", "--tag", "cli-history", "--rrule", "FREQ=DAILY")
		ok(t, e, nil, "events", "update", ev.ID, "--description", "changed")
		ok(t, e, nil, "events", "pause", ev.ID)

		var entries []client.HistoryEntry
		ok(t, e, &entries, "events", "history", ev.ID)
		got := [][3]string{}
		for _, h := range entries {
			got = append(got, [3]string{h.Action, h.Channel, h.Subject})
		}
		require.Equal(t, [][3]string{{"create", "cli", "master"}, {"update", "cli", "master"},
			{"pause", "cli", "master"}}, got)
		require.Equal(t, client.HistoryChange{From: "", To: "changed"}, entries[1].Changes["description"])

		r := cli(t, e, "", "events", "history", ev.ID)
		require.Equal(t, 0, r.code, r.stderr)
		require.Contains(t, r.stdout, "CHANNEL")
		require.Contains(t, r.stdout, "description")

		ok(t, e, nil, "events", "delete", ev.ID)
		r = cli(t, e, "", "events", "history", ev.ID)
		require.Equal(t, exitNotFound, r.code, "a deleted event's history needs --include-deleted")
		ok(t, e, &entries, "events", "history", ev.ID, "--include-deleted")
		require.Len(t, entries, 4)
		require.Equal(t, "delete", entries[3].Action)
	})
}
