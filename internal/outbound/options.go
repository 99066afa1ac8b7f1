// Package outbound builds the HTTP client every action uses to reach the
// outside world. It refuses, at dial time, addresses an attacker could use to
// reach the server's own network (loopback, private, link-local, metadata …)
// unless an operator re-opens them with outbound.allow_cidrs. Checking the
// address actually dialed, not the URL's host name, is what defeats DNS
// tricks; CheckURL adds an early, literal-only check for create time.
package outbound

import (
	"context"
	"crypto/tls"
	"net"
	"net/netip"
	"time"
)

// Resolver turns a host name into addresses. *net.Resolver satisfies it;
// tests inject one that answers with chosen addresses.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Options configure the outbound policy and client. The zero value is the
// strict default: only public addresses on ports 80, 443 and 1024–65535.
type Options struct {
	// AllowCIDRs re-open blocked ranges (config outbound.allow_cidrs).
	AllowCIDRs []netip.Prefix
	// AllowLoopback re-opens 127.0.0.0/8 and ::1, for the embedded server
	// that itself listens only on loopback.
	AllowLoopback bool
	// Reserved is the coordination Redis, refused whatever the ranges
	// above re-open; nil refuses nothing more.
	Reserved *Reserved

	ConnectTimeout        time.Duration // default 10 s
	TLSHandshakeTimeout   time.Duration // default 10 s
	ResponseHeaderTimeout time.Duration // default 30 s
	MaxIdleConnsPerHost   int           // default 4
	// Resolver looks up host names; default net.DefaultResolver.
	Resolver Resolver
	// TLSClientConfig, when set, is used for HTTPS (tests trust a local CA).
	TLSClientConfig *tls.Config
}

// Defaults applied by NewClient for zero fields.
const (
	DefaultConnectTimeout        = 10 * time.Second
	DefaultTLSHandshakeTimeout   = 10 * time.Second
	DefaultResponseHeaderTimeout = 30 * time.Second
	DefaultMaxIdleConnsPerHost   = 4
)

func (o Options) withDefaults() Options {
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	if o.TLSHandshakeTimeout <= 0 {
		o.TLSHandshakeTimeout = DefaultTLSHandshakeTimeout
	}
	if o.ResponseHeaderTimeout <= 0 {
		o.ResponseHeaderTimeout = DefaultResponseHeaderTimeout
	}
	if o.MaxIdleConnsPerHost <= 0 {
		o.MaxIdleConnsPerHost = DefaultMaxIdleConnsPerHost
	}
	if o.Resolver == nil {
		o.Resolver = net.DefaultResolver
	}
	return o
}
