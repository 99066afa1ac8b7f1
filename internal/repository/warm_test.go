package repository_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/repository/repositorytest"
)

// After WarmHotPath every connection of the keyed pool holds the plans of
// the dispatcher's statements, so that the first burst does not make them,
// and nothing was written.
func TestWarmHotPathPlansEveryKeyedConnectionAndWritesNothing(t *testing.T) {
	t.Parallel()
	s := repositorytest.Postgres(t) // 8 connections: a keyed pool of 3
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	require.NoError(t, s.WarmHotPath(ctx))

	var keyed = s.DB()
	require.NoError(t, s.ByKey(ctx, func(tx *repository.Store) error { keyed = tx.DB(); return nil }))
	require.NotSame(t, s.DB(), keyed, "a pool of 8 has a keyed pool")
	n := keyed.Stats().MaxOpenConnections
	seen := map[int]bool{}
	for range n { // every connection held at once: each is another one
		conn, err := keyed.Connx(ctx)
		require.NoError(t, err)
		defer conn.Close()
		var pid int
		require.NoError(t, conn.GetContext(ctx, &pid, `SELECT pg_backend_pid()`))
		seen[pid] = true
		for what, like := range map[string]string{
			"the outcome statement":   `%UPDATE occurrences SET status = v.status%`,
			"the due read":            `%ORDER BY next_attempt_at, id LIMIT%`,
			"the next due instant":    `%ORDER BY next_attempt_at LIMIT 1%`,
			"the check before firing": `%JOIN events e ON e.id = o.event_id%`,
			"the events read":         `%FROM events WHERE id = ANY%`,
			"the bookkeeping":         `%UPDATE events SET%last_run_at%`,
		} {
			var plans int
			require.NoError(t, conn.GetContext(ctx, &plans,
				`SELECT count(*) FROM pg_prepared_statements WHERE generic_plans > 0 AND statement LIKE $1`, like))
			require.Positive(t, plans, "connection %d: %s is planned", pid, what)
		}
	}
	require.Len(t, seen, n)

	for _, table := range []string{"occurrences", "attempts", "events", "occurrence_rollups", "punctuality_fresh"} {
		var rows int
		require.NoError(t, s.DB().GetContext(ctx, &rows, `SELECT count(*) FROM `+table))
		require.Zero(t, rows, "%s: the warm-up wrote nothing", table)
	}
}
