package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Three instances share one PostgreSQL schema and one Redis prefix; events
// created through all of them are each delivered exactly once and completed.
func TestThreeInstancesDeliverEachOccurrenceOnce(t *testing.T) {
	t.Parallel()
	d := newDeployment(t)
	d.withSharedRedis()
	threeInstancesDeliverOnce(t, d)
}

// threeInstancesDeliverOnce is the three-instance scenario on the
// deployment's Redis.
func threeInstancesDeliverOnce(t *testing.T, d *deployment) {
	const n = 300
	rc := newReceiver(t)
	c := d.client()

	procs := []*proc{d.start("a"), d.start("b"), d.start("c")}
	c.createEvents(procs, n, time.Now().Add(5*time.Second), 3*time.Second, rc.URL())

	d.waitAllCompleted(n, 40*time.Second)
	assertDeliveredOnce(t, d, rc)
	for _, p := range procs {
		require.True(t, p.running(), "%s exited", p.name)
	}
}

// Two `qhronosd serve` processes started at the same moment against one
// empty schema both come up, and every migration is applied exactly once.
func TestConcurrentFirstStartsMigrateOnce(t *testing.T) {
	t.Parallel()
	d := newDeployment(t)
	a := startNoWait(t, "a", d.instanceEnv())
	b := startNoWait(t, "b", d.instanceEnv())
	a.waitReady(readyTimeout)
	b.waitReady(readyTimeout)

	files, err := os.ReadDir(filepath.Join("..", "..", "migrations", "postgres"))
	require.NoError(t, err)
	want := 0
	for _, f := range files {
		if strings.HasSuffix(f.Name(), ".sql") {
			want++
		}
	}
	require.NotZero(t, want, "no PostgreSQL migrations found")

	var rows []struct {
		Version int `db:"version"`
		N       int `db:"n"`
	}
	require.NoError(t, d.db.Select(&rows, `SELECT version, count(*) AS n FROM schema_migrations GROUP BY version ORDER BY version`))
	if got := len(rows); got != want {
		t.Errorf("schema_migrations has %d versions, want %d: %+v", got, want, rows)
	}
	for _, r := range rows {
		if r.N != 1 {
			t.Errorf("schema_migrations version %d recorded %d times, want once", r.Version, r.N)
		}
	}
}
