package outbound

import (
	"fmt"
	"net/netip"

	"code.dny.dev/ssrf"
)

// BlockedError is a refusal by the outbound policy. Actions classify it as a
// permanent failure: retrying cannot help until an operator changes config.
// Its message names the category of the address, never the address: it
// reaches the tenant (an attempt's error), and the address a name resolved
// to would tell them what an internal name points at.
type BlockedError struct {
	Addr   netip.Addr // zero when the port alone was refused; never in Error()
	Port   int
	Reason string // e.g. "private address", "port not allowed"
	// Setting is the configuration key that re-opens the destination when
	// it is not outbound.allow_cidrs (the coordination Redis's).
	Setting string
}

func (e *BlockedError) Error() string {
	if e.Setting != "" {
		return fmt.Sprintf("outbound request blocked: the destination is %s (an operator may allow it with %s)",
			e.Reason, e.Setting)
	}
	if !e.Addr.IsValid() {
		return fmt.Sprintf("outbound request blocked: port %d not allowed (only 80, 443 and 1024-65535)", e.Port)
	}
	return fmt.Sprintf("outbound request blocked: the destination is a %s (an operator may allow it with "+
		"outbound.allow_cidrs)", e.Reason)
}

// guard is the address policy: code.dny.dev/ssrf generates its deny lists
// from the IANA IPv4 and IPv6 special-purpose registries and refuses every
// IPv6 address outside global unicast (2000::/3), which covers IPv4-mapped,
// IPv4-translated (::ffff:0:0:0/96), NAT64, link-local, unique-local and
// multicast forms. Ports are checked by allowedPort, networks by the dialer.
var guard = ssrf.New(ssrf.WithAnyPort(), ssrf.WithAnyNetwork())

// rangeName names a refused range in the refusal message; it decides
// nothing (guard does).
type rangeName struct {
	prefix netip.Prefix
	reason string
}

// rangeNames are checked in order, so narrower, more telling names
// (metadata, broadcast) come before the ranges that contain them. An address
// refused by guard outside all of them is a "special-purpose address".
var rangeNames = []rangeName{
	{netip.MustParsePrefix("169.254.169.254/32"), "cloud metadata address"},
	{netip.MustParsePrefix("fd00:ec2::254/128"), "cloud metadata address"},
	{netip.MustParsePrefix("255.255.255.255/32"), "broadcast address"},
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified (this-network) address"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private address"},
	{netip.MustParsePrefix("100.64.0.0/10"), "carrier-grade NAT (shared) address"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback address"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local address"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private address"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignment address"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation (TEST-NET-1) address"},
	{netip.MustParsePrefix("192.88.99.0/24"), "6to4 relay anycast address"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private address"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking address"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation (TEST-NET-2) address"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation (TEST-NET-3) address"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved address"},

	{netip.MustParsePrefix("::/128"), "unspecified address"},
	{netip.MustParsePrefix("::1/128"), "loopback address"},
	{netip.MustParsePrefix("::ffff:0:0:0/96"), "IPv4-translated address"},
	{netip.MustParsePrefix("::/96"), "IPv4-compatible (deprecated) address"},
	{netip.MustParsePrefix("64:ff9b::/96"), "NAT64 address"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "NAT64 (local-use) address"},
	{netip.MustParsePrefix("100::/64"), "discard-only address"},
	{netip.MustParsePrefix("2001::/32"), "Teredo address"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation address"},
	{netip.MustParsePrefix("2002::/16"), "6to4 address"},
	{netip.MustParsePrefix("fc00::/7"), "private (unique local) address"},
	{netip.MustParsePrefix("fe80::/10"), "link-local address"},
	{netip.MustParsePrefix("fec0::/10"), "site-local (deprecated) address"},
	{netip.MustParsePrefix("ff00::/8"), "multicast address"},
}

var (
	loopbackV4  = netip.MustParsePrefix("127.0.0.0/8")
	loopbackV6  = netip.MustParsePrefix("::1/128")
	v4InV6      = netip.MustParsePrefix("::ffff:0:0/96")
	allowedPort = func(p int) bool { return p == 80 || p == 443 || (p >= 1024 && p <= 65535) }
)

// CheckAddr reports whether the policy in opts lets a request reach ip:port.
// It returns a *BlockedError when it does not.
func CheckAddr(ip netip.Addr, port int, opts Options) error {
	if !allowedPort(port) {
		return &BlockedError{Port: port, Reason: "port not allowed"}
	}
	return checkIP(ip, opts)
}

// checkIP applies the address part of the policy: an address is allowed
// when the operator re-opened it or guard finds it in no special-purpose
// range. An IPv4-mapped address is judged as the IPv4 address the kernel
// dials, so re-opening 10.0.0.0/8 re-opens ::ffff:10.0.0.0/104 too.
func checkIP(ip netip.Addr, opts Options) error {
	ip = ip.WithZone("")
	if !ip.IsValid() {
		return &BlockedError{Addr: ip, Reason: "invalid address"}
	}
	if allowed(ip, opts) {
		return nil
	}
	if v4InV6.Contains(ip) {
		return checkIP(ip.Unmap(), opts)
	}
	if guard.SafeAddr(ip) == nil {
		return nil
	}
	return &BlockedError{Addr: ip, Reason: nameOf(ip)}
}

func nameOf(ip netip.Addr) string {
	for _, r := range rangeNames {
		if r.prefix.Contains(ip) {
			return r.reason
		}
	}
	if ip.Is6() && !ssrf.IPv6GlobalUnicast.Contains(ip) {
		return "non-global IPv6 address"
	}
	return "special-purpose address (IANA registry)"
}

// allowed reports whether the operator re-opened ip.
func allowed(ip netip.Addr, opts Options) bool {
	if opts.AllowLoopback && (loopbackV4.Contains(ip.Unmap()) || loopbackV6.Contains(ip)) {
		return true
	}
	for _, p := range opts.AllowCIDRs {
		if p.Contains(ip) || (ip.Is4In6() && p.Contains(ip.Unmap())) {
			return true
		}
	}
	return false
}

// LoopbackAllowed reports whether the policy in opts lets a request reach
// a loopback address at all: re-opened for the embedded server, or by an
// outbound.allow_cidrs range that overlaps 127.0.0.0/8 or ::1.
func LoopbackAllowed(opts Options) bool {
	if opts.AllowLoopback {
		return true
	}
	for _, p := range opts.AllowCIDRs {
		if p.Overlaps(loopbackV4) || p.Overlaps(loopbackV6) {
			return true
		}
	}
	return false
}
