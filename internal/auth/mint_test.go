package auth

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/stretchr/testify/require"
)

func TestMintClaims(t *testing.T) {
	t.Parallel()
	r := row("tok-1")
	r.ExpiresAt = t0.Add(time.Hour + 300*time.Millisecond)
	a, _, _ := newTestAuth(t, Config{})
	tok, err := a.Mint(r)
	require.NoError(t, err)
	parts := strings.Split(tok, ".")
	require.Len(t, parts, 3)

	var header map[string]any
	decodeSegment(t, parts[0], &header)
	if header["alg"] != "HS256" || header["kid"] != KeyID(keyNew) {
		t.Errorf("header = %v, want alg HS256 and kid %q (the current key)", header, KeyID(keyNew))
	}
	var c map[string]any
	decodeSegment(t, parts[1], &c)
	want := map[string]any{
		"sub": "alice", "access": "write", "jti": "tok-1", "iss": DefaultIssuer,
		"exp": float64(t0.Add(time.Hour).Unix()), "iat": float64(t0.Unix()), "nbf": float64(t0.Unix()),
	}
	for k, v := range want {
		if c[k] != v {
			t.Errorf("claim %s = %v, want %v", k, c[k], v)
		}
	}
	if got, _ := json.Marshal(c["scope"]); string(got) != `["a","b"]` {
		t.Errorf("claim scope = %s, want [\"a\",\"b\"]", got)
	}
	if got, _ := json.Marshal(c["aud"]); string(got) != `["`+DefaultAudience+`"]` {
		t.Errorf("claim aud = %s, want [%q]", got, DefaultAudience)
	}
}

func TestMintNormalizes(t *testing.T) {
	t.Parallel()
	r := row("tok-alias")
	r.Access = "read_write"
	r.Scope = nil
	a, _, _ := newTestAuth(t, Config{})
	tok, err := a.Mint(r)
	require.NoError(t, err)
	var c map[string]any
	decodeSegment(t, strings.Split(tok, ".")[1], &c)
	if c["access"] != "write" {
		t.Errorf("access claim = %v, want %q (alias normalized)", c["access"], "write")
	}
	if got, _ := json.Marshal(c["scope"]); string(got) != `[]` {
		t.Errorf("scope claim = %s, want [] (never null)", got)
	}
}

func TestMintRejectsBadInput(t *testing.T) {
	t.Parallel()
	a, _, _ := newTestAuth(t, Config{MaxTTL: 30 * 24 * time.Hour})
	revokedAt := t0
	tests := []struct {
		name      string
		change    func(*model.Token)
		wantField string
	}{
		{"no id", func(r *model.Token) { r.ID = "" }, "id"},
		{"no subject", func(r *model.Token) { r.Subject = "" }, "sub"},
		{"unknown access", func(r *model.Token) { r.Access = "root" }, "access"},
		{"empty access", func(r *model.Token) { r.Access = "" }, "access"},
		{"past expiry", func(r *model.Token) { r.ExpiresAt = t0.Add(-time.Second) }, "expires_at"},
		{"expiry now", func(r *model.Token) { r.ExpiresAt = t0 }, "expires_at"},
		{"expiry within the second", func(r *model.Token) { r.ExpiresAt = t0.Add(500 * time.Millisecond) }, "expires_at"},
		{"beyond max ttl", func(r *model.Token) { r.ExpiresAt = t0.Add(31 * 24 * time.Hour) }, "expires_at"},
		{"revoked", func(r *model.Token) { r.RevokedAt = &revokedAt }, "revoked_at"},
	}
	for _, tt := range tests {
		r := row("tok-1")
		tt.change(&r)
		tok, err := a.Mint(r)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != tt.wantField {
			t.Errorf("%s: Mint = %q, %v; want a FieldError on %q", tt.name, tok, err, tt.wantField)
		}
	}
	r := row("tok-1")
	r.ExpiresAt = t0.Add(30 * 24 * time.Hour)
	_, err := a.Mint(r)
	require.NoError(t, err, "expiry exactly at MaxTTL must be accepted")
}

func decodeSegment(t *testing.T, seg string, v any) {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(seg)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, v))
}
