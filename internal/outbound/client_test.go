package outbound_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/outbound"
)

// fakeResolver answers every name with fixed addresses, as a hostile DNS
// server would.
type fakeResolver struct{ addrs []netip.Addr }

func (f fakeResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return f.addrs, nil
}

// silentListener listens on loopback and reports how many connections ever
// reached it. Connections land in the kernel backlog even before Accept, so
// counting drains the backlog with a short deadline after the request ended.
func silentListener(t *testing.T) (port uint16, connections func() int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	return ln.Addr().(*net.TCPAddr).AddrPort().Port(), func() int {
		n := 0
		for range 10 {
			require.NoError(t, ln.(*net.TCPListener).SetDeadline(time.Now().Add(200*time.Millisecond)))
			c, err := ln.Accept()
			if err != nil {
				return n
			}
			c.Close()
			n++
		}
		return n
	}
}

func TestDialRefusesNameResolvingToPrivateAddress(t *testing.T) {
	t.Parallel()
	port, connections := silentListener(t)
	client := outbound.NewClient(outbound.Options{
		Resolver: fakeResolver{addrs: []netip.Addr{netip.MustParseAddr("127.0.0.1")}},
	})
	t.Cleanup(client.CloseIdleConnections)

	url := fmt.Sprintf("http://public.example.com:%d/hook", port)
	require.NoError(t, outbound.CheckURL(url, outbound.Options{}), "a public-looking name passes the create-time check")
	resp, err := client.Get(url)
	if resp != nil {
		resp.Body.Close()
	}
	var blocked *outbound.BlockedError
	require.ErrorAs(t, err, &blocked)
	if got, want := blocked.Addr, netip.MustParseAddr("127.0.0.1"); got != want {
		t.Errorf("blocked addr = %s, want %s", got, want)
	}
	if n := connections(); n != 0 {
		t.Errorf("listener saw %d connections, want 0", n)
	}
}

// TestRefusalNamesTheCategoryNotTheAddress: the refusal of a name reaches
// the tenant (an attempt's error), so it says what kind of address the name
// resolved to but never the address: no DNS oracle for internal names.
func TestRefusalNamesTheCategoryNotTheAddress(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ ip, category string }{
		{"127.0.0.1", "loopback address"}, {"10.1.2.3", "private address"},
		{"169.254.169.254", "cloud metadata address"}, {"fe80::1", "link-local address"},
	} {
		client := outbound.NewClient(outbound.Options{
			Resolver: fakeResolver{addrs: []netip.Addr{netip.MustParseAddr(tc.ip)}}})
		t.Cleanup(client.CloseIdleConnections)
		resp, err := client.Get("http://internal.example.com:8080/hook")
		if resp != nil {
			resp.Body.Close()
		}
		var blocked *outbound.BlockedError
		require.ErrorAs(t, err, &blocked)
		require.Contains(t, blocked.Error(), tc.category)
		require.NotContains(t, err.Error(), tc.ip, "the refusal tells what %s resolves to", tc.ip)
	}
}

func TestDialSkipsBlockedAddressesOfAMixedAnswer(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	t.Cleanup(srv.Close)
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	// 10.0.0.1 is blocked and must never be tried; 127.0.0.1 is re-opened.
	client := outbound.NewClient(outbound.Options{
		AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		Resolver:   fakeResolver{addrs: []netip.Addr{netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("127.0.0.1")}},
	})
	t.Cleanup(client.CloseIdleConnections)
	resp, err := client.Get(fmt.Sprintf("http://receiver.example.com:%d/", port))
	require.NoError(t, err)
	resp.Body.Close()
	if got, want := hits.Load(), int32(1); got != want {
		t.Errorf("receiver hits = %d, want %d", got, want)
	}
}

func TestRedirectIsNotFollowed(t *testing.T) {
	t.Parallel()
	var targetHits atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { targetHits.Add(1) }))
	t.Cleanup(target.Close)
	redirector := httptest.NewServer(http.RedirectHandler(target.URL+"/internal", http.StatusFound))
	t.Cleanup(redirector.Close)

	client := outbound.NewClient(outbound.Options{AllowLoopback: true})
	t.Cleanup(client.CloseIdleConnections)
	resp, err := client.Get(redirector.URL)
	require.NoError(t, err)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if got, want := resp.StatusCode, http.StatusFound; got != want {
		t.Errorf("status = %d, want %d", got, want)
	}
	if got := targetHits.Load(); got != 0 {
		t.Errorf("redirect target hits = %d, want 0", got)
	}
}

func TestLoopbackReceiverReachableWhenAllowed(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "pong")
	}))
	t.Cleanup(srv.Close)

	allowed := outbound.NewClient(outbound.Options{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	t.Cleanup(allowed.CloseIdleConnections)
	resp, err := allowed.Get(srv.URL)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if got, want := string(body), "pong"; got != want {
		t.Errorf("body = %q, want %q", got, want)
	}

	strict := outbound.NewClient(outbound.Options{})
	t.Cleanup(strict.CloseIdleConnections)
	resp, err = strict.Get(srv.URL)
	if resp != nil {
		resp.Body.Close()
	}
	var blocked *outbound.BlockedError
	if !errors.As(err, &blocked) {
		t.Errorf("strict client err = %v, want *BlockedError", err)
	}
}

func TestConnectTimeoutBoundsDial(t *testing.T) {
	t.Parallel()
	// A resolver that never answers stands in for an unreachable network:
	// the request must end at its context deadline.
	client := outbound.NewClient(outbound.Options{Resolver: blockingResolver{}})
	t.Cleanup(client.CloseIdleConnections)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://slow.example.com/", nil)
	require.NoError(t, err)
	start := time.Now()
	resp, err := client.Do(req)
	if resp != nil {
		resp.Body.Close()
	}
	require.Error(t, err)
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("request took %s, want it to end near its 200ms deadline", elapsed)
	}
}

type blockingResolver struct{}

func (blockingResolver) LookupNetIP(ctx context.Context, _, _ string) ([]netip.Addr, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}
