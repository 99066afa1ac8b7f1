package coordination_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/qhronos/qhronos/internal/coordination"
	"github.com/qhronos/qhronos/internal/coordination/coordinationtest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
)

func TestNewRedisClientTopologies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		cfg      coordination.RedisConfig
		wantType string
		check    func(t *testing.T, c redis.UniversalClient)
	}{
		{
			name:     "single server from url",
			cfg:      coordination.RedisConfig{URL: "redis://user:pw@cache.internal:6380/3"},
			wantType: "*redis.Client",
			check: func(t *testing.T, c redis.UniversalClient) {
				o := c.(*redis.Client).Options()
				if o.Addr != "cache.internal:6380" || o.DB != 3 || o.Username != "user" || o.Password != "pw" || o.TLSConfig != nil {
					t.Errorf("got addr=%s db=%d user=%s tls=%v, want cache.internal:6380 3 user no TLS", o.Addr, o.DB, o.Username, o.TLSConfig != nil)
				}
				if o.DialTimeout != 2*time.Second || o.ReadTimeout != time.Second || o.WriteTimeout != time.Second {
					t.Errorf("timeouts got dial=%s read=%s write=%s, want 2s 1s 1s", o.DialTimeout, o.ReadTimeout, o.WriteTimeout)
				}
			},
		},
		{
			name:     "tls from rediss",
			cfg:      coordination.RedisConfig{URL: "rediss://cache.internal"},
			wantType: "*redis.Client",
			check: func(t *testing.T, c redis.UniversalClient) {
				o := c.(*redis.Client).Options()
				if o.TLSConfig == nil || o.TLSConfig.ServerName != "cache.internal" {
					t.Errorf("rediss:// got TLS config %+v, want one for cache.internal", o.TLSConfig)
				}
			},
		},
		{
			name: "sentinel",
			cfg: coordination.RedisConfig{
				URL:      "redis://:pw@ignored/1",
				Sentinel: coordination.SentinelConfig{MasterName: "mymaster", Addrs: []string{"s1:26379", "s2:26379"}},
			},
			wantType: "*redis.Client", // go-redis' failover client is a *redis.Client
		},
		{
			name:     "cluster",
			cfg:      coordination.RedisConfig{Cluster: coordination.ClusterConfig{Addrs: []string{"n1:7000", "n2:7000"}, Password: "pw"}},
			wantType: "*redis.ClusterClient",
			check: func(t *testing.T, c redis.UniversalClient) {
				o := c.(*redis.ClusterClient).Options()
				if len(o.Addrs) != 2 || o.Password != "pw" || o.ReadTimeout != time.Second {
					t.Errorf("got addrs=%v password set=%v read=%s, want 2 seeds, the password, 1s", o.Addrs, o.Password != "", o.ReadTimeout)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := coordination.NewRedisClient(tt.cfg)
			require.NoError(t, err)
			t.Cleanup(func() { _ = c.Close() })
			if got := fmt.Sprintf("%T", c); got != tt.wantType {
				t.Errorf("client type got %s, want %s", got, tt.wantType)
			}
			if tt.check != nil {
				tt.check(t, c)
			}
		})
	}
}

func TestNewRedisClientErrorsNameTheKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cfg     coordination.RedisConfig
		wantKey string
	}{
		{"bad port", coordination.RedisConfig{URL: "redis://user:s3cret@host:notaport"}, "redis.url"},
		{"bad scheme", coordination.RedisConfig{URL: "http://host:6379"}, "redis.url"},
		{"bad database", coordination.RedisConfig{URL: "redis://host/abc"}, "redis.url"},
		{"nothing configured", coordination.RedisConfig{}, "redis.url"},
		{"sentinel without master", coordination.RedisConfig{Sentinel: coordination.SentinelConfig{Addrs: []string{"s1:26379"}}}, "redis.sentinel.master_name"},
		{"cluster with a database", coordination.RedisConfig{URL: "redis://h/2", Cluster: coordination.ClusterConfig{Addrs: []string{"n1:7000"}}}, "redis.url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := coordination.NewRedisClient(tt.cfg)
			require.Error(t, err)
			if !strings.HasPrefix(err.Error(), tt.wantKey+":") {
				t.Errorf("error %q does not name %s", err, tt.wantKey)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("error %q leaks the password", err)
			}
		})
	}
}

func TestRedisConfigEnabled(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cfg  coordination.RedisConfig
		want bool
	}{
		{coordination.RedisConfig{}, false},
		{coordination.RedisConfig{URL: "redis://h"}, true},
		{coordination.RedisConfig{Sentinel: coordination.SentinelConfig{Addrs: []string{"s:1"}}}, true},
		{coordination.RedisConfig{Cluster: coordination.ClusterConfig{Addrs: []string{"n:1"}}}, true},
	}
	for _, tt := range tests {
		if got := tt.cfg.Enabled(); got != tt.want {
			t.Errorf("%+v Enabled() got %v, want %v", tt.cfg, got, tt.want)
		}
	}
}

func TestOpenOwnsItsClient(t *testing.T) {
	t.Parallel()
	client, prefix := coordinationtest.RedisClient(t) // skips without Redis
	addr := client.(*redis.Client).Options().Addr
	r, err := coordination.Open(t.Context(), coordination.RedisConfig{URL: "redis://" + addr}, prefix, zaptest.NewLogger(t))
	require.NoError(t, err)
	require.NoError(t, r.Ping(t.Context()))
	require.NoError(t, r.Close())
	require.Error(t, r.Ping(t.Context()), "Close closes the client Open made")
}

func TestOpenStartsDegradedWhenRedisIsAway(t *testing.T) {
	t.Parallel()
	addr, stop, _ := coordinationtest.StartRedisServer(t)
	stop() // a port where nothing listens
	r, err := coordination.Open(t.Context(), coordination.RedisConfig{URL: "redis://" + addr}, "q:", zaptest.NewLogger(t))
	require.NoError(t, err, "an unreachable Redis must not stop the server from starting")
	t.Cleanup(func() { _ = r.Close() })
	require.Error(t, r.Ping(t.Context()))
	res, err := r.Allow(t.Context(), "k", coordination.Limit{Rate: 1, Burst: 1})
	require.NoError(t, err)
	require.True(t, res.Allowed, "the in-process fallback answers")
	require.Error(t, r.Degraded())
}
