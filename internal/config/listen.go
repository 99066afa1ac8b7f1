package config

import (
	"net"
	"net/netip"
	"strings"
)

// LoopbackOnly reports whether server.addr listens on loopback only (the
// embedded default). Outbound requests to loopback are then allowed, since
// the only possible clients are already on the machine; the startup banner
// says so.
func (c *Config) LoopbackOnly() bool {
	host, _, err := net.SplitHostPort(c.Server.Addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.IsLoopback()
}
