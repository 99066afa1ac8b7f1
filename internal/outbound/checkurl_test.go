package outbound_test

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/qhronos/qhronos/internal/outbound"
)

func TestCheckURL(t *testing.T) {
	t.Parallel()
	long := "https://example.com/" + strings.Repeat("a", 2100)
	tests := []struct {
		name    string
		url     string
		opts    outbound.Options
		wantErr string // substring; "" means accepted
		blocked bool
	}{
		{"https name", "https://hooks.example.com/qhronos", outbound.Options{}, "", false},
		{"http with port", "http://hooks.example.com:8080/x?y=1", outbound.Options{}, "", false},
		{"userinfo allowed", "https://user:secret@hooks.example.com/", outbound.Options{}, "", false},
		{"public literal", "https://8.8.8.8/", outbound.Options{}, "", false},
		{"uppercase scheme", "HTTPS://example.com/", outbound.Options{}, "", false},
		{"empty", "", outbound.Options{}, "is required", false},
		{"file scheme", "file:///etc/passwd", outbound.Options{}, "scheme", false},
		{"gopher scheme", "gopher://example.com:70/", outbound.Options{}, "scheme", false},
		{"ftp scheme", "ftp://example.com/", outbound.Options{}, "scheme", false},
		{"javascript", "javascript:alert(1)", outbound.Options{}, "scheme", false},
		{"relative", "/hook", outbound.Options{}, "scheme", false},
		{"no host", "http:///path", outbound.Options{}, "host", false},
		{"opaque", "http:example.com", outbound.Options{}, "absolute", false},
		{"too long", long, outbound.Options{}, "longer than 2048", false},
		{"blocked port", "http://example.com:22/", outbound.Options{}, "port 22", true},
		{"port zero", "http://example.com:0/", outbound.Options{}, "invalid port", false},
		{"port too big", "http://example.com:70000/", outbound.Options{}, "invalid port", false},
		{"short IPv4", "http://127.1/", outbound.Options{}, "non-canonical", false},
		{"decimal IPv4", "http://2130706433/", outbound.Options{}, "non-canonical", false},
		{"hex IPv4", "http://0x7f.0.0.1/", outbound.Options{}, "non-canonical", false},
		{"octal IPv4", "http://0177.0.0.1/", outbound.Options{}, "non-canonical", false},
		{"localhost", "http://localhost:8080/", outbound.Options{}, "outbound.allow_cidrs", true},
		{"sub.localhost", "http://a.LocalHost./", outbound.Options{}, "outbound.allow_cidrs", true},
		{"localhost allowed", "http://localhost:8080/", outbound.Options{AllowLoopback: true}, "", false},
		{"reopened private", "http://10.1.1.1:8080/", outbound.Options{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}, "", false},
		{"metadata", "http://169.254.169.254/latest/meta-data/", outbound.Options{}, "metadata", true},
		{"mapped loopback", "http://[::ffff:7f00:1]:8080/", outbound.Options{}, "loopback", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := outbound.CheckURL(tc.url, tc.opts)
			if tc.wantErr == "" {
				if err != nil {
					t.Errorf("CheckURL(%q) = %v, want nil", tc.url, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("CheckURL(%q) = %v, want error containing %q", tc.url, err, tc.wantErr)
			}
			var blocked *outbound.BlockedError
			if got := errors.As(err, &blocked); got != tc.blocked {
				t.Errorf("CheckURL(%q) is BlockedError = %v, want %v", tc.url, got, tc.blocked)
			}
		})
	}
}
