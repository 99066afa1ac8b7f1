package outbound_test

import (
	"context"
	"errors"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/outbound"
)

// namedResolver answers one name with its addresses.
type namedResolver map[string][]netip.Addr

func (n namedResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := n[host]; ok {
		return a, nil
	}
	return nil, errors.New("no such host")
}

// The coordination Redis stays refused where allow_cidrs re-opens its
// range: by name, IP or any address of the same machine at create time,
// by what a name resolves to at dial time (issue #34).
func TestCoordinationRedisIsRefused(t *testing.T) {
	t.Parallel()
	opts := outbound.Options{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"),
		netip.MustParsePrefix("::1/128"), netip.MustParsePrefix("10.0.0.0/8")},
		Reserved: &outbound.Reserved{Addrs: []string{"127.0.0.1:6379", "redis.internal:6380"}, KeyPrefix: "qhronos:"}}
	for _, u := range []string{"redis://127.0.0.1:6379", "redis://localhost:6379/3", "redis://[::1]:6379",
		"rediss://127.0.0.2", "redis://REDIS.internal.:6380", "redis://0.0.0.0:6379"} {
		_, err := outbound.CheckBrokerURL("redis_stream", u, opts)
		var be *outbound.BlockedError
		require.ErrorAs(t, err, &be, u)
		require.Contains(t, err.Error(), "coordination Redis", u)
		require.Contains(t, err.Error(), "outbound.allow_coordination_redis", u)
	}
	require.Error(t, outbound.CheckURL("http://localhost:6379/", opts), "a webhook to it too")
	for _, u := range []string{"redis://127.0.0.1:6380", "redis://redis.internal:6379", "redis://10.1.2.3:6379"} {
		_, err := outbound.CheckBrokerURL("redis_stream", u, opts)
		require.NoError(t, err, u)
	}

	allowed := opts
	allowed.Reserved = &outbound.Reserved{Addrs: opts.Reserved.Addrs, Allowed: true}
	_, err := outbound.CheckBrokerURL("redis_stream", "redis://127.0.0.1:6379", allowed)
	require.NoError(t, err, "the operator allowed it")

	// Names judged at create time may resolve to it when dialed.
	opts.Resolver = namedResolver{"tenant.example": {netip.MustParseAddr("10.9.9.9")},
		"redis.internal": {netip.MustParseAddr("10.9.9.9")}, "sneaky.example": {netip.MustParseAddr("127.0.0.1")},
		"other.example": {netip.MustParseAddr("127.0.0.1")}}
	dial := outbound.NewDialer(opts)
	for _, addr := range []string{"tenant.example:6380", "sneaky.example:6379"} {
		_, err := dial(context.Background(), "tcp", addr)
		var be *outbound.BlockedError
		require.ErrorAs(t, err, &be, addr)
		require.Contains(t, err.Error(), "coordination Redis", addr)
	}
	_, err = dial(context.Background(), "tcp", "other.example:6381") // loopback, another port
	var be *outbound.BlockedError
	require.False(t, errors.As(err, &be), "another address is not refused: %v", err)
}
