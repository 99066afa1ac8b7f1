package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/qhronostest"
)

// terminateBackends kills every PostgreSQL connection of the deployment's
// servers (their application_name, on this database) and returns how many.
func (d *deployment) terminateBackends(ctx context.Context) (int, error) {
	var killed []bool
	err := d.db.SelectContext(ctx, &killed, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE application_name = $1 AND datname = current_database()`, d.appName)
	return len(killed), err
}

// PostgreSQL killing the server's connections mid-run: no panic, the API
// answers 200 or 503 meanwhile (never hangs or drops), deliveries resume and
// every outcome is persisted.
func TestPostgresConnectionsKilledMidRun(t *testing.T) {
	t.Parallel()
	const n = 60
	d := newDeployment(t)
	rc := newReceiver(t)
	c := d.client()
	a := d.start("a")
	c.createEvents([]*proc{a}, n, time.Now().Add(2*time.Second), 4*time.Second, rc.URL())
	rc.waitReceived(t, 5, 15*time.Second)

	total := 0
	readyCodes := map[int]int{}
	for round := 0; round < 6; round++ {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		k, err := d.terminateBackends(ctx)
		cancel()
		require.NoError(t, err, "pg_terminate_backend")
		total += k
		// Between cuts, the API answers: 200 once reconnected, 503 meanwhile.
		qhronostest.Eventually(700*time.Millisecond, nil, func() bool {
			code, _, err := readyBody(a)
			require.NoError(t, err, "/ready while connections are cut")
			readyCodes[code]++
			return false // sample until the window closes
		})
	}
	require.NotZero(t, total, "no connection named %s was terminated: the test cut nothing", d.appName)
	for code := range readyCodes {
		if code != http.StatusOK && code != http.StatusServiceUnavailable {
			t.Errorf("/ready answered %d while connections were cut, want 200 or 503 (%v)", code, readyCodes)
		}
	}
	t.Logf("terminated %d connections; /ready answers %v", total, readyCodes)

	d.waitAllCompleted(n, 40*time.Second)
	assertDeliveredOnce(t, d, rc)
	eventually(t, 10*time.Second, "/ready is 200 again", func() bool {
		code, _, err := readyBody(a)
		return err == nil && code == http.StatusOK
	})
	require.True(t, a.running(), "server exited")
	if s := a.stderr.String(); strings.Contains(s, "panic") {
		t.Errorf("server log mentions a panic:\n%s", qhronostest.Tail(s, 4<<10))
	}
}
