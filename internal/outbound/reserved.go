package outbound

import (
	"context"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// Reserved names the server's own coordination Redis, which no tenant's
// destination may reach even where outbound.allow_cidrs re-opens its
// range: a stream appended to one of its keys (a lock key turned into a
// stream blocks that lock for good) or a webhook to it would act on the
// server's own state. It is judged by address and port: a destination
// matches when it names or resolves to one of Addrs, or when both are on
// this machine (loopback, unspecified or a local interface address) on
// the same port.
type Reserved struct {
	// Addrs are the coordination Redis's host:port addresses as configured
	// (redis.url's host, redis.sentinel.addrs, redis.cluster.addrs).
	Addrs []string
	// KeyPrefix is redis.prefix: when Allowed, a redis_stream destination
	// may still never append to a key under it.
	KeyPrefix string
	// Allowed is outbound.allow_coordination_redis: the operator lets
	// destinations reach the coordination Redis (outside KeyPrefix).
	Allowed bool
}

// AllowSetting is the configuration key that lets destinations reach the
// coordination Redis.
const AllowSetting = "outbound.allow_coordination_redis"

func (r *Reserved) active() bool { return r != nil && !r.Allowed && len(r.Addrs) > 0 }

func (r *Reserved) blocked(ip netip.Addr, port int) error {
	return &BlockedError{Addr: ip, Port: port, Reason: "the coordination Redis of this server", Setting: AllowSetting}
}

// checkHost is the create-time check of a URL's host and port, without
// DNS: a name matches a configured name, an IP the configured IP, and
// any name or address of this machine another one on the same port.
func (r *Reserved) checkHost(host string, port int) error {
	if !r.active() {
		return nil
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, a := range r.Addrs {
		h, p, ok := splitAddr(a)
		if !ok || p != port {
			continue
		}
		if h == host || (localHost(h) && localHost(host)) {
			return r.blocked(netip.Addr{}, port)
		}
		if ip, err := netip.ParseAddr(host); err == nil {
			if cip, err := netip.ParseAddr(h); err == nil && cip.Unmap() == ip.Unmap() {
				return r.blocked(ip, port)
			}
		}
	}
	return nil
}

// checkAddr is the dial-time check of the address about to be dialed:
// the configured names are resolved now, as the destination's was.
func (r *Reserved) checkAddr(ctx context.Context, res Resolver, ip netip.Addr, port int) error {
	if !r.active() {
		return nil
	}
	ip = ip.WithZone("").Unmap()
	for _, a := range r.Addrs {
		h, p, ok := splitAddr(a)
		if !ok || p != port {
			continue
		}
		var addrs []netip.Addr
		if cip, err := netip.ParseAddr(h); err == nil {
			addrs = []netip.Addr{cip}
		} else if localHost(h) {
			addrs = []netip.Addr{netip.IPv6Loopback()}
		} else if found, err := res.LookupNetIP(ctx, "ip", h); err == nil {
			addrs = found
		}
		for _, cip := range addrs {
			cip = cip.WithZone("").Unmap()
			if cip == ip || (localAddr(cip) && localAddr(ip)) {
				return r.blocked(ip, port)
			}
		}
	}
	return nil
}

// splitAddr reads host:port (a bare host means Redis's 6379).
func splitAddr(a string) (string, int, bool) {
	h, ps, err := net.SplitHostPort(a)
	if err != nil {
		h, ps = a, "6379"
	}
	p, err := strconv.Atoi(ps)
	if err != nil || h == "" {
		return "", 0, false
	}
	return strings.ToLower(strings.TrimSuffix(h, ".")), p, true
}

// localHost reports a host naming this machine: localhost or a local
// address.
func localHost(h string) bool {
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(h)
	return err == nil && localAddr(ip.Unmap())
}

// localAddr reports an address of this machine: a service listening on
// one of them (or on all) answers on every one.
func localAddr(ip netip.Addr) bool {
	if ip.IsLoopback() || ip.IsUnspecified() {
		return true
	}
	ifaces, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range ifaces {
		if n, ok := a.(*net.IPNet); ok {
			if local, ok := netip.AddrFromSlice(n.IP); ok && local.Unmap() == ip {
				return true
			}
		}
	}
	return false
}
