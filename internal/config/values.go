package config

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/qhronos/qhronos/internal/input"
)

// parseValue parses one scalar for a leaf of type t. Errors quote the input
// and the expected syntax; the caller prefixes the key.
func parseValue(t reflect.Type, raw string) (reflect.Value, error) {
	s := strings.TrimSpace(raw)
	switch {
	case t == durationType:
		d, err := ParseDuration(s)
		if err != nil {
			return reflect.Value{}, fmt.Errorf("invalid duration %q", raw)
		}
		return reflect.ValueOf(d), nil
	case t == prefixType:
		p, err := ParsePrefix(s)
		if err != nil {
			return reflect.Value{}, fmt.Errorf("invalid CIDR %q", raw)
		}
		return reflect.ValueOf(p), nil
	}
	v := reflect.New(t).Elem()
	switch t.Kind() {
	case reflect.String:
		// Strings are taken verbatim: secrets may legitimately end in spaces.
		v.SetString(raw)
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return reflect.Value{}, fmt.Errorf("invalid boolean %q (want true or false)", raw)
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(s, 10, t.Bits())
		if err != nil {
			return reflect.Value{}, fmt.Errorf("invalid integer %q", raw)
		}
		v.SetInt(n)
	case reflect.Float32, reflect.Float64:
		f, err := strconv.ParseFloat(s, t.Bits())
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return reflect.Value{}, fmt.Errorf("invalid number %q", raw)
		}
		v.SetFloat(f)
	default:
		return reflect.Value{}, fmt.Errorf("unsupported setting type %s", t)
	}
	return v, nil
}

var errDurationSyntax = errors.New("want a duration such as 250ms, 30s, 15m, 24h or 30d")

// ParseDuration accepts Go duration syntax plus a leading whole number of
// days: "30d", "1d12h", "-2d" (input.Duration, the API's parser too).
// Operators think of retention in days, which time.ParseDuration does not
// know.
func ParseDuration(s string) (time.Duration, error) {
	d, err := input.Duration(s)
	if err != nil {
		return 0, errDurationSyntax
	}
	return d, nil
}

// FormatDuration renders d the way config.yaml writes it: whole days as
// "30d", anything else in Go syntax ("1h0m0s" shortened to "1h").
func FormatDuration(d time.Duration) string {
	if d != 0 && d%Day == 0 {
		return strconv.FormatInt(int64(d/Day), 10) + "d"
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// ParsePrefix accepts a CIDR ("10.0.0.0/8") or a bare address, which means
// that single host (/32 or /128). The prefix is masked so "10.1.2.3/8"
// compares equal to "10.0.0.0/8".
func ParsePrefix(s string) (netip.Prefix, error) {
	s = strings.TrimSpace(s)
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("parse CIDR: %w", err)
		}
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("parse address: %w", err)
	}
	if a.Zone() != "" {
		return netip.Prefix{}, fmt.Errorf("parse address: zone not allowed in %q", s)
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}
