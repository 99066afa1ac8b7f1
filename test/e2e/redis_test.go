package e2e

import (
	"net/http"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/coordination/coordinationtest"
	"github.com/qhronos/qhronos/internal/qhronostest"
)

// Redis flushed mid-run and then stopped mid-run (a private redis-server):
// every occurrence is still delivered once, and both instances keep serving,
// /ready answering 200 with Redis shown unreachable while it is down.
func TestRedisFlushedAndStoppedLosesNothing(t *testing.T) {
	t.Parallel()
	addr, stop, restart := coordinationtest.StartRedisServer(t)
	d := newDeployment(t)
	d.withRedis("redis://"+addr+"/0", "qe2e:")
	rc := newReceiver(t)
	c := d.client()
	procs := []*proc{d.start("a"), d.start("b")}

	// Phase 1: deliveries under way when Redis is flushed.
	const first = 40
	c.createEvents(procs, first, time.Now().Add(2*time.Second), 2*time.Second, rc.URL())
	rc.waitReceived(t, 10, 15*time.Second)
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	ctx := qhronostest.Context(t, 5*time.Second)
	require.NoError(t, rdb.FlushAll(ctx).Err(), "FLUSHALL on the private redis-server")
	_ = rdb.Close()

	// Phase 2: Redis gone; the instances keep answering and dispatching.
	stop()
	for _, p := range procs {
		eventually(t, 10*time.Second, p.name+" /ready shows redis unreachable", func() bool {
			code, body, err := readyBody(p)
			return err == nil && code == http.StatusOK && body["redis"] == "unreachable" &&
				body["status"] == "degraded" && body["database"] == "ok"
		})
	}
	const second = 40
	c.createEvents(procs, second, time.Now().Add(1500*time.Millisecond), 2*time.Second, rc.URL())
	d.waitAllCompleted(first+second, 40*time.Second)
	assertDeliveredOnce(t, d, rc)

	// Phase 3: Redis back, empty; coordination recovers.
	restart()
	for _, p := range procs {
		eventually(t, 15*time.Second, p.name+" /ready shows redis ok again", func() bool {
			code, body, err := readyBody(p)
			return err == nil && code == http.StatusOK && body["redis"] == "ok"
		})
		require.True(t, p.running(), "%s exited", p.name)
	}
}
