package repository

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/migrations"
)

// The sweep's query names the partial index events_series_ended's
// predicate word for word (a planner uses the index only then): the
// migration of each backend and seriesEndedSQL must agree.
func TestSweepNamesTheSeriesEndedIndexPredicate(t *testing.T) {
	squash := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	for dir, b := range map[string]Backend{"postgres": Postgres, "sqlite": SQLite} {
		body, err := fs.ReadFile(migrations.FS, dir+"/0038_series_ended_index.sql")
		require.NoError(t, err)
		require.Contains(t, squash(string(body)), "WHERE "+squash(seriesEndedSQL(b))+";", dir)
	}
}
