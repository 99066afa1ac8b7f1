package outbound

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"syscall"
	"time"
)

// NewClient returns an *http.Client that enforces the outbound policy at dial
// time, ignores proxy settings from the environment (a proxy would dial on our
// behalf, past the guard) and never follows redirects (a redirect could point
// anywhere; the 3xx answer is returned to the caller instead). It leaves
// response decompression to the caller, who bounds it.
func NewClient(opts Options) *http.Client {
	return &http.Client{
		Transport: NewTransport(opts),
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// NewTransport returns the guarded transport behind NewClient.
func NewTransport(opts Options) *http.Transport {
	opts = opts.withDefaults()
	d := &dialer{opts: opts}
	t := &http.Transport{
		Proxy:                 nil,
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   opts.TLSHandshakeTimeout,
		ResponseHeaderTimeout: opts.ResponseHeaderTimeout,
		MaxIdleConnsPerHost:   opts.MaxIdleConnsPerHost,
		MaxIdleConns:          100,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
		DisableCompression:    true,
	}
	if opts.TLSClientConfig != nil {
		t.TLSClientConfig = opts.TLSClientConfig.Clone()
	}
	return t
}

// dialer resolves, checks every candidate address, then dials only allowed
// ones by IP so nothing is resolved again behind the check. The socket's
// Control hook checks the final address once more as a second line.
type dialer struct {
	opts Options
}

func (d *dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("split address: %w", err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return nil, fmt.Errorf("parse port %q: %w", portStr, err)
	}
	if !allowedPort(port) {
		return nil, &BlockedError{Port: port, Reason: "port not allowed"}
	}
	addrs, err := d.resolve(ctx, network, host)
	if err != nil {
		return nil, err
	}
	var firstBlocked error
	var candidates []netip.Addr
	for _, a := range addrs {
		err := checkIP(a, d.opts)
		if err == nil {
			err = d.opts.Reserved.checkAddr(ctx, d.opts.Resolver, a, port)
		}
		if err != nil {
			if firstBlocked == nil {
				firstBlocked = err
			}
			continue
		}
		candidates = append(candidates, a)
	}
	if len(candidates) == 0 {
		if firstBlocked != nil {
			return nil, firstBlocked
		}
		return nil, fmt.Errorf("resolve %s: no addresses", host)
	}
	nd := &net.Dialer{Timeout: d.opts.ConnectTimeout, Control: d.control}
	var lastErr error
	for _, a := range candidates {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		conn, err := nd.DialContext(ctx, network, netip.AddrPortFrom(a, uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

func (d *dialer) resolve(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{ip}, nil
	}
	ipNet := "ip"
	switch network {
	case "tcp4":
		ipNet = "ip4"
	case "tcp6":
		ipNet = "ip6"
	}
	addrs, err := d.opts.Resolver.LookupNetIP(ctx, ipNet, host)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", host, err)
	}
	return addrs, nil
}

// control runs on the raw socket just before connect, with the numeric
// address the kernel will use.
func (d *dialer) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("check dialed address: %w", err)
	}
	return CheckAddr(ap.Addr(), int(ap.Port()), d.opts)
}
