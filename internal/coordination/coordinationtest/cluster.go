package coordinationtest

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// clusterSlots is the number of hash slots of a Redis Cluster.
const clusterSlots = 16384

// StartRedisCluster starts a private Redis Cluster of n masters (no
// replicas): n redis-server processes with cluster mode on, on ephemeral
// loopback ports (each with its own cluster-bus port), the hash slots split
// evenly between them, joined with CLUSTER MEET. It returns the nodes'
// addresses once every node reports cluster_state:ok and knows all the
// others; the servers are killed at cleanup. Without redis-server on PATH the
// test is skipped (failed when CI is set).
func StartRedisCluster(t testing.TB, n int) []string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		Unavailable(t, "redis-server not on PATH: %v", err)
	}
	addrs := make([]string, n)
	buses := make([]int, n)
	for i := range n {
		s := &server{t: t, bin: bin, dir: t.TempDir()}
		var lastErr error
		for range portAttempts {
			port, err := freePort()
			if err != nil {
				t.Fatalf("pick a free port: %v", err)
			}
			bus, err := freePort()
			if err != nil {
				t.Fatalf("pick a free port: %v", err)
			}
			s.port, buses[i] = port, bus
			// The default bus port (port+10000) may not exist for an
			// ephemeral port; name one explicitly.
			s.extra = []string{"--cluster-enabled", "yes", "--cluster-port", strconv.Itoa(bus),
				"--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "5000"}
			if lastErr = s.start(); lastErr == nil {
				break
			}
		}
		if lastErr != nil {
			t.Fatalf("start cluster node %d: %v", i, lastErr)
		}
		t.Cleanup(s.stop)
		addrs[i] = s.addr()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := formCluster(ctx, addrs, buses); err != nil {
		t.Fatalf("form redis cluster of %v: %v", addrs, err)
	}
	return addrs
}

// formCluster gives each node an even share of the slots, introduces the
// first node to the others (at their cluster-bus ports) and waits until
// every node sees a healthy cluster of all of them.
func formCluster(ctx context.Context, addrs []string, buses []int) error {
	nodes := make([]*redis.Client, len(addrs))
	for i, a := range addrs {
		nodes[i] = redis.NewClient(&redis.Options{Addr: a})
		defer nodes[i].Close()
	}
	per := clusterSlots / len(addrs)
	for i, c := range nodes {
		first, last := i*per, (i+1)*per-1
		if i == len(nodes)-1 {
			last = clusterSlots - 1
		}
		if err := c.ClusterAddSlotsRange(ctx, first, last).Err(); err != nil {
			return fmt.Errorf("add slots %d-%d to %s: %w", first, last, addrs[i], err)
		}
	}
	for i, a := range addrs[1:] {
		host, port, _ := strings.Cut(a, ":")
		if err := nodes[0].Do(ctx, "CLUSTER", "MEET", host, port, buses[i+1]).Err(); err != nil {
			return fmt.Errorf("meet %s: %w", a, err)
		}
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		healthy := true
		for _, c := range nodes {
			info, err := c.ClusterInfo(ctx).Result()
			if err != nil || !strings.Contains(info, "cluster_state:ok") ||
				!strings.Contains(info, "cluster_known_nodes:"+strconv.Itoa(len(addrs))+"\r\n") {
				healthy = false
				break
			}
		}
		if healthy {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster not healthy: %w", ctx.Err())
		case <-tick.C:
		}
	}
}
