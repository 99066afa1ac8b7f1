package e2e

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/coordination/coordinationtest"
	"github.com/qhronos/qhronos/internal/qhronostest"
)

// withRedisCluster points every instance at a Redis Cluster under a prefix.
func (d *deployment) withRedisCluster(addrs []string, prefix string) {
	d.env["QHRONOS_REDIS_CLUSTER_ADDRS"] = strings.Join(addrs, ",")
	d.env["QHRONOS_REDIS_PREFIX"] = prefix
}

// The README claims Redis Cluster support: the multi-instance scenarios run
// against a private three-master cluster (keys spread over its slots,
// pub/sub across its nodes): each occurrence delivered once by three
// instances, and a WebSocket client on one process served by another.
func TestRedisCluster(t *testing.T) {
	t.Parallel()
	addrs := coordinationtest.StartRedisCluster(t, 3)
	cluster := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	t.Cleanup(func() { _ = cluster.Close() })

	t.Run("three instances deliver each occurrence once", func(t *testing.T) {
		d := newDeployment(t)
		d.withRedisCluster(addrs, "qe2e-multi:")
		threeInstancesDeliverOnce(t, d)
	})
	t.Run("websocket client on one process receives from another", func(t *testing.T) {
		d := newDeployment(t)
		d.withRedisCluster(addrs, "qe2e-ws:")
		webSocketAcrossProcesses(t, d)
	})
	t.Run("instances report the cluster healthy", func(t *testing.T) {
		d := newDeployment(t)
		d.withRedisCluster(addrs, "qe2e-ready:")
		p := d.start("a")
		eventually(t, 10*time.Second, "/ready shows redis ok", func() bool {
			code, body, err := readyBody(p)
			return err == nil && code == http.StatusOK && body["redis"] == "ok"
		})
	})

	// The instances wrote their coordination state into the cluster, under
	// their prefixes only.
	var mu sync.Mutex
	var keys []string
	require.NoError(t, cluster.ForEachMaster(qhronostest.Context(t, 5*time.Second), func(ctx context.Context, node *redis.Client) error {
		k, err := node.Keys(ctx, "*").Result()
		mu.Lock()
		keys = append(keys, k...)
		mu.Unlock()
		return err
	}))
	t.Logf("keys left in the cluster: %v", keys)
	for _, k := range keys {
		if !strings.HasPrefix(k, "qe2e-") {
			t.Errorf("key %q outside the instances' prefixes", k)
		}
	}
}
