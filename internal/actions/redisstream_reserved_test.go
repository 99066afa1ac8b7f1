package actions_test

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/actions"
	"github.com/qhronos/qhronos/internal/coordination/coordinationtest"
	"github.com/qhronos/qhronos/internal/outbound"
)

// coordResolver makes a tenant's name resolve to the coordination Redis
// only when dialed, as a DNS change after create would.
type coordResolver struct{}

func (coordResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if host == "coord.tenant.example" {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	return nil, errors.New("no such host")
}

// coordinationConfig is a redis_stream config whose coordination Redis is
// the shared test Redis under a unique prefix, with loopback allow-listed.
func coordinationConfig(t *testing.T, allowed bool) (actions.BrokerConfig, redis.UniversalClient, string) {
	t.Helper()
	client, prefix := coordinationtest.RedisClient(t)
	u := os.Getenv("QHRONOS_TEST_REDIS_URL")
	if u == "" {
		u = coordinationtest.DefaultRedisURL
	}
	opts, err := redis.ParseURL(u)
	require.NoError(t, err)
	cfg := brokerConfig(t)
	cfg.Outbound = outbound.Options{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		Resolver: coordResolver{},
		Reserved: &outbound.Reserved{Addrs: []string{opts.Addr}, KeyPrefix: prefix, Allowed: allowed}}
	return cfg, client, prefix
}

// A tenant's redis_stream cannot append to the coordination Redis: refused
// at create by its address, and at delivery when a name leads there, as a
// failed attempt that is not retried; nothing is written to Redis
// (issue #34).
func TestRedisStreamNeverReachesTheCoordinationRedis(t *testing.T) {
	t.Parallel()
	cfg, client, prefix := coordinationConfig(t, false)
	a := actions.NewRedisStream(cfg)
	stream := prefix + "lock:expander"
	for _, u := range []string{"redis://127.0.0.1:6379", "redis://localhost:6379/1", "redis://127.0.0.1"} {
		_, err := a.Prepare([]byte(`{"url":"` + u + `","stream":"` + stream + `"}`))
		var pe *actions.ParamError
		require.ErrorAs(t, err, &pe, u)
		require.Equal(t, "url", pe.Param)
		require.Contains(t, pe.Reason, "coordination Redis", u)
	}

	d := prepareJSON(t, a, `{"url":"redis://coord.tenant.example:6379","stream":"`+stream+`"}`)
	out := d.Execute(context.Background(), brokerRequest())
	require.Error(t, out.Err)
	require.Contains(t, out.Err.Error(), "the coordination Redis of this server")
	require.Contains(t, out.Err.Error(), "outbound.allow_coordination_redis")
	require.False(t, out.Retryable, "no retry can help until an operator changes config")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n, err := client.Exists(ctx, stream).Result()
	require.NoError(t, err)
	require.Zero(t, n, "nothing was written to the coordination Redis")
}

// With outbound.allow_coordination_redis the coordination Redis takes
// streams, never under its key prefix.
func TestRedisStreamIntoAnAllowedCoordinationRedisKeepsOutOfItsKeys(t *testing.T) {
	t.Parallel()
	cfg, client, prefix := coordinationConfig(t, true)
	a := actions.NewRedisStream(cfg)
	for _, u := range []string{"redis://127.0.0.1:6379", "redis://coord.tenant.example:6379"} {
		_, err := a.Prepare([]byte(`{"url":"` + u + `","stream":"` + prefix + `lock:expander"}`))
		var pe *actions.ParamError
		require.ErrorAs(t, err, &pe, u)
		require.Equal(t, "stream", pe.Param)
	}
	// A stream outside the prefix, cleaned up with it: the prefix is
	// "qhronos-test:<hex>:", so the stream is named after it, not under it.
	stream := "tenant-" + prefix
	t.Cleanup(func() { _ = client.Del(context.Background(), stream).Err() })
	d := prepareJSON(t, a, `{"url":"redis://127.0.0.1:6379","stream":"`+stream+`"}`)
	out := d.Execute(context.Background(), brokerRequest())
	require.NoError(t, out.Err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n, err := client.XLen(ctx, stream).Result()
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
}
