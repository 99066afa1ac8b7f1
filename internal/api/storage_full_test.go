package api

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/repository/repositorytest"
)

// A full disk on SQLite answers 503 with Retry-After and an error that says
// storage is full, shows in /ready and /status, and clears by itself once
// space returns. The full disk is SQLite's own max_page_count: the database
// may not grow past its current pages, and a write that needs one more
// fails with SQLITE_FULL exactly as on a full filesystem.
func TestFullStorageIsA503ThatRecovers(t *testing.T) {
	t.Parallel()
	e := newEnv(t, repositorytest.SQLite)
	db := e.store.TxDB()
	ctx := context.Background()
	// max_page_count is per connection: hold one connection of the pool
	// writes run on, so that every write sees the limit.
	db.SetMaxOpenConns(1)
	var pages int
	require.NoError(t, db.GetContext(ctx, &pages, "PRAGMA page_count"))
	_, err := db.ExecContext(ctx, "PRAGMA max_page_count = "+strconv.Itoa(pages))
	require.NoError(t, err)

	body := eventBody()
	body["metadata"] = map[string]any{"pad": strings.Repeat("x", 32<<10)}
	var res response
	for range 50 { // until the next page is needed
		if res = e.do("POST", "/events", e.master, body); res.Status != http.StatusCreated {
			break
		}
	}
	require.Equal(t, http.StatusServiceUnavailable, res.Status, "%s", res.Body)
	require.NotEmpty(t, res.Header.Get("Retry-After"))
	require.Contains(t, res.object(t)["error"], "storage is full")

	ready := e.do("GET", "/ready", "", nil)
	require.Equal(t, http.StatusServiceUnavailable, ready.Status)
	require.Equal(t, "storage full", ready.object(t)["database"])
	status := e.do("GET", "/status", "", nil).object(t)
	require.Equal(t, "unavailable", status["status"])
	require.Equal(t, "storage full", status["backends"].(map[string]any)["database_status"])

	// Space returns: the next write succeeds and everything says ok again.
	_, err = db.ExecContext(ctx, "PRAGMA max_page_count = 1073741823")
	require.NoError(t, err)
	res = e.do("POST", "/events", e.master, body)
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	require.Equal(t, http.StatusOK, e.do("GET", "/ready", "", nil).Status)
	require.Equal(t, "ok", e.do("GET", "/status", "", nil).object(t)["status"])
}
