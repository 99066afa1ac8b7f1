package main

import (
	"context"
	"errors"
	"net/netip"
	"testing"
)

func TestCheckLoopbackServer(t *testing.T) {
	t.Parallel()
	resolver := func(addrs ...string) func(context.Context, string) ([]netip.Addr, error) {
		return func(context.Context, string) ([]netip.Addr, error) {
			var out []netip.Addr
			for _, a := range addrs {
				out = append(out, netip.MustParseAddr(a))
			}
			return out, nil
		}
	}
	failing := func(context.Context, string) ([]netip.Addr, error) { return nil, errors.New("no such host") }
	tests := []struct {
		raw     string
		resolve func(context.Context, string) ([]netip.Addr, error)
		wantOK  bool
	}{
		{"http://127.0.0.1:8080", failing, true},
		{"http://127.9.8.7:8080/base", failing, true},
		{"https://[::1]:8443", failing, true},
		{"http://[::ffff:127.0.0.1]:8080", failing, true},
		{"http://localhost:8080", resolver("127.0.0.1", "::1"), true},
		{"http://localhost:8080", resolver("127.0.0.1", "10.0.0.5"), false},
		{"http://localhost:8080", failing, false},
		{"http://10.0.0.1:8080", failing, false},
		{"http://0.0.0.0:8080", failing, false},
		{"http://[::ffff:10.0.0.1]:8080", failing, false},
		{"http://example.com", resolver("127.0.0.1"), false},
		{"http://2130706433", resolver("127.0.0.1"), false},
		{"ftp://127.0.0.1", failing, false},
		{"http://user:pw@127.0.0.1", failing, false},
		{"127.0.0.1:8080", failing, false},
	}
	for _, tt := range tests {
		_, err := checkLoopbackServer(context.Background(), tt.raw, tt.resolve)
		if got := err == nil; got != tt.wantOK {
			t.Errorf("checkLoopbackServer(%q): got ok=%v (err %v), want ok=%v", tt.raw, got, err, tt.wantOK)
		}
	}
}

func TestCheckLoopbackHost(t *testing.T) {
	t.Parallel()
	tests := []struct {
		host   string
		wantOK bool
	}{
		{"127.0.0.1", true},
		{"127.0.0.2", true},
		{"::1", true},
		{"0.0.0.0", false},
		{"192.168.1.1", false},
		{"localhost", false},
		{"", false},
	}
	for _, tt := range tests {
		_, err := checkLoopbackHost(tt.host)
		if got := err == nil; got != tt.wantOK {
			t.Errorf("checkLoopbackHost(%q): got ok=%v (err %v), want ok=%v", tt.host, got, err, tt.wantOK)
		}
	}
}

func TestStartReceiversRefusesNonLoopback(t *testing.T) {
	t.Parallel()
	if _, err := startReceivers(netip.MustParseAddr("0.0.0.0"), 1, nil); err == nil {
		t.Fatal("startReceivers on 0.0.0.0: got nil error, want a refusal")
	}
}
