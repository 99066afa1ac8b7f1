package outbound

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// MaxURLLength bounds URLs accepted by CheckURL.
const MaxURLLength = 2048

// CheckURL validates a destination at create time: an absolute http or https
// URL with a host, at most MaxURLLength long, on an allowed port, and — when
// the host is a literal IP — an allowed address. Host names are not resolved
// here (DNS can change); the dial-time guard judges what they resolve to.
// Blocked addresses and ports are reported as *BlockedError.
func CheckURL(raw string, opts Options) error {
	if raw == "" {
		return errors.New("is required")
	}
	if len(raw) > MaxURLLength {
		return fmt.Errorf("longer than %d characters", MaxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return errors.New("not a valid URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("scheme %q not allowed (only http and https)", u.Scheme)
	}
	if u.Opaque != "" || u.Host == "" || u.Hostname() == "" {
		return errors.New("must be an absolute URL with a host")
	}
	port := 80
	if u.Scheme == "https" {
		port = 443
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("invalid port %q", p)
		}
		port = n
	}
	if !allowedPort(port) {
		return &BlockedError{Port: port, Reason: "port not allowed"}
	}
	host := u.Hostname()
	if err := opts.Reserved.checkHost(host, port); err != nil {
		return err
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return checkIP(ip, opts)
	}
	if strings.Contains(host, ":") || strings.Contains(host, "%") {
		return errors.New("invalid IP literal in host")
	}
	if looksNumeric(host) {
		// 127.1, 0x7f.0.0.1, 2130706433: other software reads these as IPs.
		return fmt.Errorf("host %q is a non-canonical IP literal", host)
	}
	lower := strings.ToLower(strings.TrimSuffix(host, "."))
	if !opts.AllowLoopback && (lower == "localhost" || strings.HasSuffix(lower, ".localhost")) {
		return &BlockedError{Addr: netip.MustParseAddr("127.0.0.1"), Reason: "loopback address (" + lower + ")"}
	}
	return nil
}

// looksNumeric reports whether every dot-separated label of host is a
// decimal, octal or hex number, the shapes inet_aton accepts as an address.
func looksNumeric(host string) bool {
	host = strings.TrimSuffix(host, ".")
	if host == "" {
		return false
	}
	for _, label := range strings.Split(host, ".") {
		l := strings.ToLower(label)
		if strings.HasPrefix(l, "0x") {
			l = l[2:]
			if l == "" {
				continue
			}
			if strings.Trim(l, "0123456789abcdef") != "" {
				return false
			}
			continue
		}
		if l == "" || strings.Trim(l, "0123456789") != "" {
			return false
		}
	}
	return true
}
