package outbound_test

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"code.dny.dev/ssrf"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/outbound"
)

// blockedLiterals has at least one address of every blocked category.
var blockedLiterals = []struct{ ip, category string }{
	{"127.0.0.1", "loopback"},
	{"127.255.255.254", "loopback"},
	{"::1", "loopback"},
	{"10.1.2.3", "private"},
	{"172.16.0.1", "private"},
	{"172.31.255.255", "private"},
	{"192.168.1.1", "private"},
	{"fc00::1", "private"},
	{"fd12:3456::1", "private"},
	{"169.254.1.1", "link-local"},
	{"fe80::1", "link-local"},
	{"fe80::1%eth0", "link-local"},
	{"100.64.0.1", "carrier-grade"},
	{"100.127.255.255", "carrier-grade"},
	{"0.0.0.0", "unspecified"},
	{"0.1.2.3", "unspecified"},
	{"::", "unspecified"},
	{"224.0.0.1", "multicast"},
	{"239.255.255.250", "multicast"},
	{"ff02::1", "multicast"},
	{"255.255.255.255", "broadcast"},
	{"169.254.169.254", "metadata"},
	{"fd00:ec2::254", "metadata"},
	{"::ffff:127.0.0.1", "loopback"},
	{"::ffff:10.0.0.1", "private"},
	{"::ffff:169.254.169.254", "metadata"},
	{"64:ff9b::7f00:1", "NAT64"},
	{"64:ff9b::808:808", "NAT64"},
	{"64:ff9b:1::a00:1", "NAT64"},
	{"2002:7f00:1::1", "6to4"},
	{"2002:a9fe:a9fe::1", "6to4"},
	{"192.0.0.8", "IETF"},
	{"198.18.0.1", "benchmarking"},
	{"198.19.255.255", "benchmarking"},
	{"240.0.0.1", "reserved"},
	{"192.0.2.1", "TEST-NET-1"},
	{"198.51.100.7", "TEST-NET-2"},
	{"203.0.113.9", "TEST-NET-3"},
	{"2001:db8::1", "documentation"},
	{"::7f00:1", "IPv4-compatible"},
	{"2001::1", "Teredo"},
	{"::ffff:0:7f00:1", "IPv4-translated"},
	{"::ffff:0:a9fe:a9fe", "IPv4-translated"},
	{"2002:808:808::1", "6to4"},
	{"192.31.196.1", "special-purpose"},
	{"192.175.48.1", "special-purpose"},
	{"3fff::1", "special-purpose"},
	{"4000::1", "non-global"},
}

func urlFor(ip string, port string) string {
	if strings.Contains(ip, ":") {
		return "http://[" + strings.ReplaceAll(ip, "%", "%25") + "]:" + port + "/hook"
	}
	return "http://" + ip + ":" + port + "/hook"
}

func TestCheckURLRefusesBlockedLiterals(t *testing.T) {
	t.Parallel()
	for _, tc := range blockedLiterals {
		t.Run(tc.ip, func(t *testing.T) {
			t.Parallel()
			err := outbound.CheckURL(urlFor(tc.ip, "8080"), outbound.Options{})
			var blocked *outbound.BlockedError
			require.ErrorAs(t, err, &blocked, "CheckURL(%s)", tc.ip)
			if !strings.Contains(err.Error(), tc.category) {
				t.Errorf("error = %q, want it to name the category %q", err, tc.category)
			}
			if !strings.Contains(err.Error(), "outbound.allow_cidrs") {
				t.Errorf("error = %q, want it to name outbound.allow_cidrs", err)
			}
		})
	}
}

// TestDialRefusesBlockedLiterals goes through a real client: the guard must
// refuse before any connection, so no packet reaches these addresses.
func TestDialRefusesBlockedLiterals(t *testing.T) {
	t.Parallel()
	client := outbound.NewClient(outbound.Options{})
	t.Cleanup(client.CloseIdleConnections)
	for _, tc := range blockedLiterals {
		t.Run(tc.ip, func(t *testing.T) {
			t.Parallel()
			req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, urlFor(tc.ip, "8080"), nil)
			require.NoError(t, err)
			resp, err := client.Do(req)
			if resp != nil {
				resp.Body.Close()
			}
			var blocked *outbound.BlockedError
			if !errors.As(err, &blocked) {
				t.Fatalf("GET %s: err = %v, want *BlockedError", tc.ip, err)
			}
		})
	}
}

func TestCheckAddrAllowsPublicAndReopened(t *testing.T) {
	t.Parallel()
	reopen := outbound.Options{AllowCIDRs: []netip.Prefix{
		netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8"),
	}}
	tests := []struct {
		name string
		ip   string
		opts outbound.Options
		want bool // allowed
	}{
		{"public v4", "8.8.8.8", outbound.Options{}, true},
		{"public v6", "2606:4700:4700::1111", outbound.Options{}, true},
		{"mapped public v4", "::ffff:8.8.8.8", outbound.Options{}, true},
		{"next to CGNAT", "100.128.0.1", outbound.Options{}, true},
		{"next to private 172.16/12", "172.32.0.1", outbound.Options{}, true},
		{"reopened private", "10.9.8.7", reopen, true},
		{"reopened mapped private", "::ffff:10.9.8.7", reopen, true},
		{"reopened ULA", "fd00::5", reopen, true},
		{"reopen does not leak to 192.168", "192.168.0.1", reopen, false},
		{"reopen does not leak to metadata", "169.254.169.254", reopen, false},
		{"loopback allowed by flag", "127.0.0.1", outbound.Options{AllowLoopback: true}, true},
		{"v6 loopback allowed by flag", "::1", outbound.Options{AllowLoopback: true}, true},
		{"loopback flag keeps private blocked", "10.0.0.1", outbound.Options{AllowLoopback: true}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := outbound.CheckAddr(netip.MustParseAddr(tc.ip), 443, tc.opts)
			if got := err == nil; got != tc.want {
				t.Errorf("CheckAddr(%s) allowed = %v (err %v), want %v", tc.ip, got, err, tc.want)
			}
		})
	}
}

func TestCheckAddrPorts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		port int
		want bool
	}{
		{80, true}, {443, true}, {1024, true}, {8080, true}, {65535, true},
		{0, false}, {22, false}, {25, false}, {81, false}, {444, false}, {1023, false}, {65536, false},
	}
	public := netip.MustParseAddr("8.8.8.8")
	for _, tc := range tests {
		err := outbound.CheckAddr(public, tc.port, outbound.Options{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0")}})
		if got := err == nil; got != tc.want {
			t.Errorf("port %d allowed = %v (err %v), want %v", tc.port, got, err, tc.want)
		}
	}
}

func TestDialRefusesBlockedPortEvenOnAllowedAddress(t *testing.T) {
	t.Parallel()
	client := outbound.NewClient(outbound.Options{AllowLoopback: true})
	t.Cleanup(client.CloseIdleConnections)
	resp, err := client.Get("http://127.0.0.1:22/")
	if resp != nil {
		resp.Body.Close()
	}
	var blocked *outbound.BlockedError
	require.ErrorAs(t, err, &blocked)
	if blocked.Port != 22 {
		t.Errorf("blocked port = %d, want 22", blocked.Port)
	}
}

// TestEveryIANASpecialPurposeRangeIsRefused checks the policy against the
// IANA special-purpose registries as the guard library ships them: the first,
// a middle and the last address of every listed range are refused.
func TestEveryIANASpecialPurposeRangeIsRefused(t *testing.T) {
	t.Parallel()
	for _, p := range append(append([]netip.Prefix{}, ssrf.IPv4DeniedPrefixes...), ssrf.IPv6DeniedPrefixes...) {
		first := p.Masked().Addr()
		last := lastAddr(p)
		for _, ip := range []netip.Addr{first, first.Next(), last} {
			err := outbound.CheckAddr(ip, 443, outbound.Options{})
			var blocked *outbound.BlockedError
			if !errors.As(err, &blocked) {
				t.Errorf("CheckAddr(%s) in %s = %v, want *BlockedError", ip, p, err)
			}
		}
	}
}

func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 1 << (7 - i%8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}
