package main

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
)

// The bench generates load, so it must never be pointed at somebody else's
// machine by a typo: the server it drives and the receivers it runs are
// restricted to loopback addresses.

// checkLoopbackServer accepts an http(s) URL whose host is a loopback IP
// literal, or "localhost" when every address it resolves to is loopback.
func checkLoopbackServer(ctx context.Context, raw string, resolve func(ctx context.Context, host string) ([]netip.Addr, error)) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("--server: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("--server: scheme must be http or https, got %q", u.Scheme)
	}
	host := u.Hostname()
	if host == "" {
		return nil, fmt.Errorf("--server: missing host")
	}
	if u.User != nil {
		return nil, fmt.Errorf("--server: credentials in the URL are not allowed; use --token")
	}
	if addr, err := netip.ParseAddr(host); err == nil {
		if !isLoopback(addr) {
			return nil, fmt.Errorf("--server: %s is not a loopback address", host)
		}
		return u, nil
	}
	if host != "localhost" {
		return nil, fmt.Errorf("--server: host %q is not a loopback address (use 127.0.0.1, ::1 or localhost)", host)
	}
	addrs, err := resolve(ctx, host)
	if err != nil {
		return nil, fmt.Errorf("--server: resolve %s: %w", host, err)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("--server: %s resolves to no address", host)
	}
	for _, a := range addrs {
		if !isLoopback(a) {
			return nil, fmt.Errorf("--server: %s resolves to %s, which is not loopback", host, a)
		}
	}
	return u, nil
}

// checkLoopbackHost accepts only a loopback IP literal: receivers bind to it.
func checkLoopbackHost(host string) (netip.Addr, error) {
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("--receiver-host: %q is not an IP address", host)
	}
	if !isLoopback(addr) {
		return netip.Addr{}, fmt.Errorf("--receiver-host: %s is not a loopback address", host)
	}
	return addr, nil
}

// isLoopback reports whether a is 127.0.0.0/8 or ::1. IPv4-mapped IPv6
// forms are unmapped first, so ::ffff:127.0.0.1 is loopback and
// ::ffff:10.0.0.1 is not.
func isLoopback(a netip.Addr) bool {
	return a.Unmap().IsLoopback()
}

// resolveHost is the production resolver for checkLoopbackServer.
func resolveHost(ctx context.Context, host string) ([]netip.Addr, error) {
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	return ips, nil
}
