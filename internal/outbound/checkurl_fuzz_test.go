package outbound_test

import (
	"net/netip"
	"net/url"
	"strconv"
	"testing"

	"github.com/qhronos/qhronos/internal/outbound"
)

// FuzzCheckURL: whatever CheckURL accepts is an http(s) URL whose literal IP
// host, if any, the dial-time policy also accepts.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{
		"https://example.com/", "http://127.0.0.1:8080/", "http://[::ffff:127.0.0.1]/",
		"http://[fe80::1%25eth0]:8080/", "http://0x7f.1/", "file:///etc/passwd", "http://u:p@8.8.8.8:443/",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if outbound.CheckURL(raw, outbound.Options{}) != nil {
			return
		}
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatalf("accepted %q but url.Parse fails: %v", raw, err)
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			t.Fatalf("accepted %q with scheme %q", raw, u.Scheme)
		}
		ip, err := netip.ParseAddr(u.Hostname())
		if err != nil {
			return
		}
		port := 80
		if u.Scheme == "https" {
			port = 443
		}
		if p := u.Port(); p != "" {
			port, _ = strconv.Atoi(p)
		}
		if err := outbound.CheckAddr(ip, port, outbound.Options{}); err != nil {
			t.Fatalf("accepted %q but the dial policy refuses it: %v", raw, err)
		}
	})
}
