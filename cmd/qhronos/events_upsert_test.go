package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/client"
	"github.com/qhronos/qhronos/internal/qhronostest"
)

// events upsert KEY creates then replaces one event, with the create
// flags; list --key finds it; delete --key removes it.
func TestEventsUpsertByKey(t *testing.T) {
	t.Parallel()
	onBackends(t, func(t *testing.T, srv *qhronostest.Server) {
		e := serverEnv(t, srv)
		key := "cart:" + qhronostest.RandomHex(t, 4)
		var first, second client.Event
		ok(t, e, &first, "events", "upsert", key, "--name", "reminder", "--start", "in 1 hour",
			"--webhook", "http://127.0.0.1:9999/hook")
		require.Equal(t, key, *first.Key)
		ok(t, e, &second, "events", "upsert", key, "--name", "reminder again", "--webhook", "http://127.0.0.1:9999/hook",
			"--debounce", "10m", "--max-wait", "1h")
		require.Equal(t, first.ID, second.ID, "the same event, replaced")
		require.Equal(t, "reminder again", second.Name)
		require.Equal(t, "10m0s", *second.Debounce)

		var evs []client.Event
		ok(t, e, &evs, "events", "list", "--key", key)
		require.Len(t, evs, 1)
		require.Equal(t, first.ID, evs[0].ID)

		ok(t, e, nil, "events", "delete", "--key", key)
		ok(t, e, &evs, "events", "list", "--key", key)
		require.Empty(t, evs)
		r := cli(t, e, "", "events", "delete", "--key", key)
		require.NotEqual(t, 0, r.code, "deleting a key twice fails")
	})
}
