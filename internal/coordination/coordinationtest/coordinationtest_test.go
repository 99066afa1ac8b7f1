package coordinationtest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/qhronos/qhronos/internal/coordination/coordinationtest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

func TestRedisClientCleansItsPrefixOnly(t *testing.T) {
	observer, other := coordinationtest.RedisClient(t)
	ctx := t.Context()
	require.NoError(t, observer.Set(ctx, other+"keep", "1", time.Minute).Err())

	var prefix string
	t.Run("user", func(t *testing.T) {
		client, p := coordinationtest.RedisClient(t)
		prefix = p
		for _, k := range []string{"a", "b", "lock:c"} {
			require.NoError(t, client.Set(t.Context(), p+k, "v", time.Minute).Err())
		}
	})

	left, err := observer.Keys(ctx, prefix+"*").Result()
	require.NoError(t, err)
	if len(left) != 0 {
		t.Errorf("keys left under the test's prefix after cleanup: %v", left)
	}
	n, err := observer.Exists(ctx, other+"keep").Result()
	require.NoError(t, err)
	if n != 1 {
		t.Error("cleanup deleted a key under another prefix")
	}
}

func TestStartRedisServerStopAndRestart(t *testing.T) {
	t.Parallel()
	addr, stop, restart := coordinationtest.StartRedisServer(t)
	client := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialerRetries: 1})
	t.Cleanup(func() { _ = client.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()

	require.NoError(t, client.Set(ctx, "k", "v", 0).Err())
	stop()
	require.Error(t, client.Ping(ctx).Err(), "the server answers after stop")
	restart()
	require.NoError(t, client.Ping(ctx).Err(), "the server is not back on %s after restart", addr)
	n, err := client.Exists(ctx, "k").Result()
	require.NoError(t, err)
	if n != 0 {
		t.Error("a restarted server kept data: persistence is not off")
	}
}

// The private cluster serves keys through a cluster client, on every node.
func TestStartRedisCluster(t *testing.T) {
	addrs := coordinationtest.StartRedisCluster(t, 3)
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	defer c.Close()
	ctx := t.Context()
	owners := map[string]bool{}
	for i := range 30 {
		key := fmt.Sprintf("k%d", i)
		require.NoError(t, c.Set(ctx, key, i, time.Minute).Err())
		node, err := c.MasterForKey(ctx, key)
		require.NoError(t, err)
		owners[node.Options().Addr] = true
	}
	require.Len(t, owners, 3, "30 keys spread over the three masters: %v", owners)
}
