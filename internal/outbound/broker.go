package outbound

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// BrokerScheme describes the URL schemes of one message broker: Plain and
// TLS name the schemes (TLS is the one that encrypts), DefaultPort the port
// a URL without one means.
type BrokerScheme struct {
	Plain, TLS  string
	DefaultPort int
}

// Broker URL schemes, by the action type that publishes to them. Each is
// the scheme its own client understands (nats://, amqp://, redis://), and
// kafka:// (kafka+tls://) for Kafka, whose clients take bare host:port lists.
var BrokerSchemes = map[string]BrokerScheme{
	"nats":         {Plain: "nats", TLS: "tls", DefaultPort: 4222},
	"amqp":         {Plain: "amqp", TLS: "amqps", DefaultPort: 5672},
	"kafka":        {Plain: "kafka", TLS: "kafka+tls", DefaultPort: 9092},
	"redis_stream": {Plain: "redis", TLS: "rediss", DefaultPort: 6379},
}

// BrokerKind returns the action type whose broker rawURL's scheme names, or
// "" when it names none (an http(s) URL, or garbage).
func BrokerKind(rawURL string) string {
	i := strings.Index(rawURL, "://")
	if i <= 0 {
		return ""
	}
	scheme := strings.ToLower(rawURL[:i])
	for kind, s := range BrokerSchemes {
		if scheme == s.Plain || scheme == s.TLS {
			return kind
		}
	}
	return ""
}

// BrokerAddress is a checked broker URL: the address to dial, whether to
// speak TLS, and the URL's credentials and path, which the caller hands its
// client (never logs).
type BrokerAddress struct {
	Kind     string
	Host     string // host:port
	TLS      bool
	Username string
	Password string
	HasUser  bool
	URL      *url.URL
}

// CheckBrokerURL validates the URL of a kind's broker at create time as
// CheckURL does an HTTP one: one of the kind's schemes, a host, an allowed
// port and, for a literal IP, an allowed address. Names are judged when
// dialed (NewDialer).
func CheckBrokerURL(kind, raw string, opts Options) (BrokerAddress, error) {
	s, ok := BrokerSchemes[kind]
	if !ok {
		return BrokerAddress{}, fmt.Errorf("unknown broker kind %q", kind)
	}
	if raw == "" {
		return BrokerAddress{}, errors.New("is required")
	}
	if len(raw) > MaxURLLength {
		return BrokerAddress{}, fmt.Errorf("longer than %d characters", MaxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return BrokerAddress{}, errors.New("not a valid URL")
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != s.Plain && scheme != s.TLS {
		return BrokerAddress{}, fmt.Errorf("scheme %q not allowed (only %s:// and %s://)", u.Scheme, s.Plain, s.TLS)
	}
	if u.Opaque != "" || u.Host == "" || u.Hostname() == "" {
		return BrokerAddress{}, errors.New("must be an absolute URL with a host")
	}
	port := s.DefaultPort
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return BrokerAddress{}, fmt.Errorf("invalid port %q", p)
		}
		port = n
	}
	if !allowedPort(port) {
		return BrokerAddress{}, &BlockedError{Port: port, Reason: "port not allowed"}
	}
	host := u.Hostname()
	if err := opts.Reserved.checkHost(host, port); err != nil {
		return BrokerAddress{}, err
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if err := checkIP(ip, opts); err != nil {
			return BrokerAddress{}, err
		}
	} else {
		if strings.Contains(host, ":") || strings.Contains(host, "%") {
			return BrokerAddress{}, errors.New("invalid IP literal in host")
		}
		if looksNumeric(host) {
			return BrokerAddress{}, fmt.Errorf("host %q is a non-canonical IP literal", host)
		}
		lower := strings.ToLower(strings.TrimSuffix(host, "."))
		if !opts.AllowLoopback && (lower == "localhost" || strings.HasSuffix(lower, ".localhost")) {
			return BrokerAddress{}, &BlockedError{Addr: netip.MustParseAddr("127.0.0.1"), Reason: "loopback address (" + lower + ")"}
		}
	}
	a := BrokerAddress{Kind: kind, Host: net.JoinHostPort(host, strconv.Itoa(port)), TLS: scheme == s.TLS, URL: u}
	if u.User != nil {
		a.HasUser = true
		a.Username = u.User.Username()
		a.Password, _ = u.User.Password()
	}
	return a, nil
}

// DialFunc dials like net.Dialer.DialContext.
type DialFunc func(ctx context.Context, network, address string) (net.Conn, error)

// NewDialer returns the guarded dialer behind NewClient for clients that
// open their own connections (message brokers): it resolves, refuses
// blocked addresses and ports, and dials only the addresses it checked.
func NewDialer(opts Options) DialFunc {
	d := &dialer{opts: opts.withDefaults()}
	return d.DialContext
}

// BrokerTLS is the TLS configuration of a broker connection to host
// (host:port): opts' base (tests trust a local CA), TLS 1.2 at least, and an
// endpoint's mTLS material when a carries it (a client certificate, a CA to
// trust besides the system roots).
func BrokerTLS(opts Options, a Auth, hostport string) (*tls.Config, error) {
	cfg := &tls.Config{}
	if opts.TLSClientConfig != nil {
		cfg = opts.TLSClientConfig.Clone()
	}
	if cfg.MinVersion < tls.VersionTLS12 {
		cfg.MinVersion = tls.VersionTLS12
	}
	if host, _, err := net.SplitHostPort(hostport); err == nil && cfg.ServerName == "" {
		cfg.ServerName = host
	}
	if len(a.CertificatePEM) > 0 || len(a.PrivateKeyPEM) > 0 {
		cert, err := clientCertificate(a)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	if len(a.CACertificatePEM) > 0 {
		var pool *x509.CertPool
		var err error
		if cfg.RootCAs != nil {
			pool = cfg.RootCAs.Clone()
		} else if pool, err = x509.SystemCertPool(); err != nil {
			return nil, fmt.Errorf("load system roots: %w", err)
		}
		if err := appendCA(pool, a.CACertificatePEM); err != nil {
			return nil, err
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}
