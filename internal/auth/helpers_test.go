package auth

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/stretchr/testify/require"
)

var (
	keyOld = []byte("old-key-0123456789abcdef0123456789abcdef")
	keyNew = []byte("new-key-0123456789abcdef0123456789abcdef")
	t0     = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
)

const testMaster = "master-token-0123456789abcdef0123456789"

// fakeTokens is an in-memory TokenLookup that counts lookups and can be told
// to fail like a database that is down.
type fakeTokens struct {
	mu      sync.Mutex
	rows    map[string]model.Token
	err     error
	lookups int
}

func newFakeTokens(rows ...model.Token) *fakeTokens {
	f := &fakeTokens{rows: map[string]model.Token{}}
	for _, r := range rows {
		f.rows[r.ID] = r
	}
	return f
}

func (f *fakeTokens) TokenByID(_ context.Context, id string) (model.Token, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lookups++
	if f.err != nil {
		return model.Token{}, f.err
	}
	r, ok := f.rows[id]
	if !ok {
		return model.Token{}, model.ErrNotFound
	}
	r.Scope = append([]string(nil), r.Scope...)
	return r, nil
}

func (f *fakeTokens) put(r model.Token) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rows[r.ID] = r
}

func (f *fakeTokens) setErr(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err = err
}

func (f *fakeTokens) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lookups
}

// clock is a settable time source.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// row is a valid write token scoped to tags a and b, expiring in a day.
func row(id string) model.Token {
	return model.Token{
		ID: id, Subject: "alice", Access: model.AccessWrite, Scope: []string{"a", "b"},
		ExpiresAt: t0.Add(24 * time.Hour), CreatedBy: "master", CreatedAt: t0,
	}
}

func newTestAuth(t *testing.T, cfg Config, rows ...model.Token) (*Authenticator, *fakeTokens, *clock) {
	t.Helper()
	if cfg.Keys.Keys == nil {
		cfg.Keys = NewKeyring(keyNew, keyOld)
	}
	if cfg.MasterToken == "" {
		cfg.MasterToken = testMaster
	}
	store := newFakeTokens(rows...)
	clk := &clock{now: t0}
	return NewAuthenticator(cfg, store, clk.Now), store, clk
}

// validClaims mirrors what Mint writes for r at t0.
func validClaims(r model.Token) jwt.MapClaims {
	return jwt.MapClaims{
		"iss": DefaultIssuer, "aud": []string{DefaultAudience}, "sub": r.Subject, "jti": r.ID,
		"access": string(r.Access), "scope": r.Scope,
		"exp": r.ExpiresAt.Unix(), "iat": t0.Unix(), "nbf": t0.Unix(),
	}
}

// sign builds a token with any method and header, for attack cases.
func sign(t *testing.T, method jwt.SigningMethod, key any, kid string, c jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, c)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	require.NoError(t, err)
	return s
}

// forge builds a token from a raw header and claims, HMAC-SHA256-signed with
// key, to try algorithm confusion (a header claiming another algorithm).
func forge(t *testing.T, header map[string]any, c jwt.MapClaims, key []byte) string {
	t.Helper()
	h, err := json.Marshal(header)
	require.NoError(t, err)
	p, err := json.Marshal(c)
	require.NoError(t, err)
	enc := base64.RawURLEncoding
	signing := enc.EncodeToString(h) + "." + enc.EncodeToString(p)
	m := hmac.New(sha256.New, key)
	m.Write([]byte(signing))
	return signing + "." + enc.EncodeToString(m.Sum(nil))
}

// with returns a copy of c with changes applied; a nil value deletes the key.
func with(c jwt.MapClaims, changes map[string]any) jwt.MapClaims {
	out := jwt.MapClaims{}
	for k, v := range c {
		out[k] = v
	}
	for k, v := range changes {
		if v == nil {
			delete(out, k)
			continue
		}
		out[k] = v
	}
	return out
}
