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

// OutboundLoopbackAllowed reports whether actions may target loopback
// receivers: only in the embedded default (no database.url) listening on
// loopback. Production never opens loopback, whatever it listens on: other
// services on the machine (the database, Redis, sidecars) answer there, and
// a tenant's URL must not reach them; an operator re-opens ranges with
// outbound.allow_cidrs.
func (c *Config) OutboundLoopbackAllowed() bool {
	return !c.Production() && c.LoopbackOnly()
}
