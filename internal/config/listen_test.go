package config

import "testing"

func TestLoopbackOnly(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addr string
		want bool
	}{
		{"127.0.0.1:8080", true},
		{"localhost:8080", true},
		{"[::1]:8080", true},
		{"127.0.0.2:0", true},
		{"0.0.0.0:8080", false},
		{":8080", false},
		{"[::]:8080", false},
		{"10.0.0.5:8080", false},
		{"example.com:80", false},
		{"garbage", false},
	}
	for _, tt := range tests {
		c := Default()
		c.Server.Addr = tt.addr
		if got := c.LoopbackOnly(); got != tt.want {
			t.Errorf("LoopbackOnly(%q): got %v, want %v", tt.addr, got, tt.want)
		}
	}
}

// Loopback receivers are reachable only in the embedded default; production
// (database.url set) never opens them, whatever server.addr is.
func TestOutboundLoopbackAllowed(t *testing.T) {
	tests := []struct {
		addr, databaseURL string
		want              bool
	}{
		{"127.0.0.1:8080", "", true},
		{"localhost:8080", "", true},
		{"0.0.0.0:8080", "", false},
		{"127.0.0.1:8080", "postgres://db/qhronos", false},
		{"[::1]:8080", "postgres://db/qhronos", false},
	}
	for _, tt := range tests {
		c := Default()
		c.Server.Addr, c.Database.URL = tt.addr, tt.databaseURL
		if got := c.OutboundLoopbackAllowed(); got != tt.want {
			t.Errorf("OutboundLoopbackAllowed(addr %q, database.url %q) = %v, want %v", tt.addr, tt.databaseURL, got, tt.want)
		}
	}
}
