package auth

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/stretchr/testify/require"
)

func TestAuthenticateRejectsAttacks(t *testing.T) {
	t.Parallel()
	revoked := row("tok-revoked")
	revokedAt := t0.Add(-time.Minute)
	revoked.RevokedAt = &revokedAt
	expiredRow := row("tok-row-expired")
	expiredRow.ExpiresAt = t0.Add(-time.Second)
	unknownAccess := row("tok-bad-access")
	unknownAccess.Access = "superuser"
	a, store, _ := newTestAuth(t, Config{}, row("tok-1"), revoked, expiredRow, unknownAccess)

	kidNew, kidOld := KeyID(keyNew), KeyID(keyOld)
	good := validClaims(row("tok-1"))
	huge := with(good, map[string]any{"pad": strings.Repeat("x", MaxBearerBytes)})
	tests := []struct {
		name       string
		bearer     string
		wantReason string
	}{
		{"empty", "", "missing bearer token"},
		{"alg none", sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, kidNew, good), "invalid token"},
		{"alg none unsigned forged", forge(t, map[string]any{"alg": "none", "typ": "JWT", "kid": kidNew}, good, keyNew), "invalid token"},
		{"HS384", sign(t, jwt.SigningMethodHS384, keyNew, kidNew, good), "invalid token"},
		{"HS512", sign(t, jwt.SigningMethodHS512, keyNew, kidNew, good), "invalid token"},
		{"RS256 header HMAC signature", forge(t, map[string]any{"alg": "RS256", "typ": "JWT", "kid": kidNew}, good, keyNew), "invalid token"},
		{"wrong key", sign(t, jwt.SigningMethodHS256, []byte("attacker-key-0123456789abcdef0123456789"), kidNew, good), "invalid token"},
		{"old key under new kid", sign(t, jwt.SigningMethodHS256, keyOld, kidNew, good), "invalid token"},
		{"unknown kid", sign(t, jwt.SigningMethodHS256, keyNew, "no-such-kid", good), "invalid token"},
		{"missing kid", sign(t, jwt.SigningMethodHS256, keyNew, "", good), "invalid token"},
		{"master token as key", sign(t, jwt.SigningMethodHS256, []byte(testMaster), kidNew, good), "invalid token"},
		{"expired", sign(t, jwt.SigningMethodHS256, keyNew, kidNew, with(good, map[string]any{"exp": t0.Add(-time.Minute).Unix()})), "token expired"},
		{"missing exp", sign(t, jwt.SigningMethodHS256, keyNew, kidNew, with(good, map[string]any{"exp": nil})), "invalid token"},
		{"exp not a number", sign(t, jwt.SigningMethodHS256, keyNew, kidNew, with(good, map[string]any{"exp": "tomorrow"})), "invalid token"},
		{"nbf beyond leeway", sign(t, jwt.SigningMethodHS256, keyNew, kidNew, with(good, map[string]any{"nbf": t0.Add(2 * time.Minute).Unix()})), "token not valid yet"},
		{"iat beyond leeway", sign(t, jwt.SigningMethodHS256, keyNew, kidNew, with(good, map[string]any{"iat": t0.Add(2 * time.Minute).Unix()})), "token not valid yet"},
		{"wrong iss", sign(t, jwt.SigningMethodHS256, keyNew, kidNew, with(good, map[string]any{"iss": "someone-else"})), "invalid token"},
		{"missing iss", sign(t, jwt.SigningMethodHS256, keyNew, kidNew, with(good, map[string]any{"iss": nil})), "invalid token"},
		{"wrong aud", sign(t, jwt.SigningMethodHS256, keyNew, kidNew, with(good, map[string]any{"aud": []string{"other-api"}})), "invalid token"},
		{"missing aud", sign(t, jwt.SigningMethodHS256, keyNew, kidNew, with(good, map[string]any{"aud": nil})), "invalid token"},
		{"garbage", "not a token", "invalid token"},
		{"three garbage segments", "a.b.c", "invalid token"},
		{"dots only", "..", "invalid token"},
		{"truncated signature", sign(t, jwt.SigningMethodHS256, keyNew, kidNew, good)[:100], "invalid token"},
		{"master with suffix", testMaster + "x", "invalid token"},
		{"master prefix", testMaster[:len(testMaster)-1], "invalid token"},
		{"huge validly signed", sign(t, jwt.SigningMethodHS256, keyNew, kidNew, huge), "invalid token"},
		{"huge garbage", strings.Repeat("A", MaxBearerBytes+1), "invalid token"},
		{"revoked jti", sign(t, jwt.SigningMethodHS256, keyNew, kidNew, validClaims(revoked)), "token revoked"},
		{"unknown jti", sign(t, jwt.SigningMethodHS256, keyNew, kidNew, with(good, map[string]any{"jti": "tok-unknown"})), "invalid token"},
		{"missing jti", sign(t, jwt.SigningMethodHS256, keyNew, kidNew, with(good, map[string]any{"jti": nil})), "invalid token"},
		{"row expired", sign(t, jwt.SigningMethodHS256, keyNew, kidNew, with(validClaims(expiredRow), map[string]any{"exp": t0.Add(time.Hour).Unix()})), "token expired"},
		{"claims access wider than row", sign(t, jwt.SigningMethodHS256, keyNew, kidNew, with(good, map[string]any{"access": "admin"})), "invalid token"},
		{"claims access narrower than row", sign(t, jwt.SigningMethodHS256, keyNew, kidNew, with(good, map[string]any{"access": "read"})), "invalid token"},
		{"claims access unknown", sign(t, jwt.SigningMethodHS256, keyNew, kidNew, with(good, map[string]any{"access": "root"})), "invalid token"},
		{"claims scope wider than row", sign(t, jwt.SigningMethodHS256, keyNew, kidNew, with(good, map[string]any{"scope": []string{"a", "b", "c"}})), "invalid token"},
		{"claims scope narrower than row", sign(t, jwt.SigningMethodHS256, keyNew, kidNew, with(good, map[string]any{"scope": []string{"a"}})), "invalid token"},
		{"claims scope not a list", sign(t, jwt.SigningMethodHS256, keyNew, kidNew, with(good, map[string]any{"scope": "a,b"})), "invalid token"},
		{"claims subject differs", sign(t, jwt.SigningMethodHS256, keyNew, kidNew, with(good, map[string]any{"sub": "mallory"})), "invalid token"},
		{"claims exp beyond row", sign(t, jwt.SigningMethodHS256, keyNew, kidNew, with(good, map[string]any{"exp": t0.Add(48 * time.Hour).Unix()})), "invalid token"},
		{"row access unknown", sign(t, jwt.SigningMethodHS256, keyNew, kidNew, validClaims(unknownAccess)), "invalid token"},
		{"old kid with new key", sign(t, jwt.SigningMethodHS256, keyNew, kidOld, good), "invalid token"},
	}
	for _, tt := range tests {
		p, err := a.Authenticate(context.Background(), tt.bearer)
		if !errors.Is(err, ErrUnauthenticated) {
			t.Errorf("%s: Authenticate = %+v, %v; want ErrUnauthenticated", tt.name, p, err)
			continue
		}
		if got, want := err.Error(), "unauthenticated: "+tt.wantReason; got != want {
			t.Errorf("%s: error = %q, want %q", tt.name, got, want)
		}
		if p.Master || p.Access != "" || p.TokenID != "" {
			t.Errorf("%s: rejected bearer still produced principal %+v", tt.name, p)
		}
	}
	// Only validly signed, time-valid tokens may reach the store: one lookup
	// each for the revoked, unknown, expired-row and bad-access rows, and one
	// for tok-1, cached for every disagreeing-claims case after it.
	if got, max := store.count(), 5; got > max {
		t.Errorf("store lookups = %d, want at most %d (garbage must not reach the database)", got, max)
	}
}

func TestAuthenticateErrorNeverEchoesToken(t *testing.T) {
	t.Parallel()
	a, _, _ := newTestAuth(t, Config{})
	bearer := sign(t, jwt.SigningMethodHS256, keyNew, KeyID(keyNew), validClaims(row("secret-jti")))
	for _, b := range []string{bearer, "sk_live_do_not_echo", testMaster + "-nope"} {
		_, err := a.Authenticate(context.Background(), b)
		require.Error(t, err)
		if strings.Contains(err.Error(), b) || strings.Contains(err.Error(), "secret-jti") {
			t.Errorf("error %q echoes the bearer", err)
		}
	}
}

func TestAuthenticateValidTokens(t *testing.T) {
	t.Parallel()
	r := row("tok-1")
	// Instance A signed with the old key before rotation.
	before, _, _ := newTestAuth(t, Config{Keys: NewKeyring(keyOld)}, r)
	oldToken, err := before.Mint(r)
	require.NoError(t, err)
	// Instance B after rotation: new key signs, old key still verifies.
	after, _, clk := newTestAuth(t, Config{Keys: NewKeyring(keyNew, keyOld)}, r)
	newToken, err := after.Mint(r)
	require.NoError(t, err)
	// Within leeway: a token whose nbf/iat are 10 s ahead of this clock.
	skewed := sign(t, jwt.SigningMethodHS256, keyNew, KeyID(keyNew),
		with(validClaims(r), map[string]any{"nbf": t0.Add(10 * time.Second).Unix(), "iat": t0.Add(10 * time.Second).Unix()}))
	// A client-written alias and a reordered scope still match the row.
	alias := sign(t, jwt.SigningMethodHS256, keyNew, KeyID(keyNew),
		with(validClaims(r), map[string]any{"access": "read_write", "scope": []string{"b", "a"}, "aud": DefaultAudience}))
	clk.Advance(time.Hour)

	want := Principal{Subject: "alice", Access: model.AccessWrite, Scope: []string{"a", "b"}, TokenID: "tok-1"}
	for name, bearer := range map[string]string{"current key": newToken, "rotated-out key": oldToken,
		"within leeway": skewed, "alias and reordered scope": alias} {
		p, err := after.Authenticate(context.Background(), bearer)
		if err != nil {
			t.Errorf("%s: Authenticate error = %v, want a principal", name, err)
			continue
		}
		if p.Subject != want.Subject || p.Access != want.Access || !slices.Equal(p.Scope, want.Scope) ||
			p.TokenID != want.TokenID || p.Master {
			t.Errorf("%s: principal = %+v, want %+v", name, p, want)
		}
		if got, want := p.Key(), "jwt:tok-1"; got != want {
			t.Errorf("%s: Key() = %q, want %q", name, got, want)
		}
	}

	// Once the old key is removed from the keyring, its tokens stop working.
	removed, _, _ := newTestAuth(t, Config{Keys: NewKeyring(keyNew)}, r)
	if _, err := removed.Authenticate(context.Background(), oldToken); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("token under a removed key: err = %v, want ErrUnauthenticated", err)
	}
}

func TestAuthenticateUsesStoredRow(t *testing.T) {
	t.Parallel()
	r := row("tok-1")
	a, store, clk := newTestAuth(t, Config{}, r)
	bearer, err := a.Mint(r)
	require.NoError(t, err)
	p, err := a.Authenticate(context.Background(), bearer)
	require.NoError(t, err)
	p.Scope[0] = "mutated"
	// The row narrows (an operator edited it): the token now disagrees and
	// stops working once the cache expires, instead of keeping old rights.
	narrowed := r
	narrowed.Scope = []string{"a"}
	store.put(narrowed)
	clk.Advance(MaxRevocationCacheTTL)
	if _, err := a.Authenticate(context.Background(), bearer); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("token whose row changed: err = %v, want ErrUnauthenticated", err)
	}
}

func TestAuthenticateMaster(t *testing.T) {
	t.Parallel()
	a, store, _ := newTestAuth(t, Config{})
	p, err := a.Authenticate(context.Background(), testMaster)
	require.NoError(t, err)
	if !p.Master || p.Key() != "master" || !p.Allows(model.AccessAdmin) {
		t.Errorf("master principal = %+v (key %q), want Master with admin rights and key %q", p, p.Key(), "master")
	}
	if got := store.count(); got != 0 {
		t.Errorf("master token caused %d store lookups, want 0", got)
	}
	// Without a configured master token, nothing is master — not even "".
	none := NewAuthenticator(Config{Keys: NewKeyring(keyNew)}, newFakeTokens(), func() time.Time { return t0 })
	for _, b := range []string{"", testMaster, " "} {
		if p, err := none.Authenticate(context.Background(), b); err == nil || p.Master {
			t.Errorf("no master configured: Authenticate(%q) = %+v, %v; want ErrUnauthenticated", b, p, err)
		}
	}
}

func TestAuthenticateSeesRevocationAfterCacheTTL(t *testing.T) {
	t.Parallel()
	for _, configured := range []time.Duration{0, 500 * time.Millisecond, time.Hour} {
		r := row("tok-1")
		a, store, clk := newTestAuth(t, Config{RevocationCacheTTL: configured}, r)
		bearer, err := a.Mint(r)
		require.NoError(t, err)
		_, err = a.Authenticate(context.Background(), bearer)
		require.NoError(t, err)
		_, err = a.Authenticate(context.Background(), bearer)
		require.NoError(t, err)
		if got, want := store.count(), 1; got != want {
			t.Errorf("ttl %v: lookups after two requests = %d, want %d (cached)", configured, got, want)
		}

		revokedAt := clk.Now()
		r.RevokedAt = &revokedAt
		store.put(r)
		clk.Advance(time.Second)
		_, err = a.Authenticate(context.Background(), bearer)
		if !errors.Is(err, ErrUnauthenticated) || !strings.HasSuffix(err.Error(), "token revoked") {
			t.Errorf("ttl %v: 1 s after revocation err = %v, want token revoked", configured, err)
		}
	}
}

func TestAuthenticateStoreDown(t *testing.T) {
	t.Parallel()
	r := row("tok-1")
	a, store, _ := newTestAuth(t, Config{RevocationCacheTTL: -1}, r)
	bearer, err := a.Mint(r)
	require.NoError(t, err)
	down := errors.New("dial tcp 127.0.0.1:5432: connection refused")
	store.setErr(down)
	_, err = a.Authenticate(context.Background(), bearer)
	if err == nil || errors.Is(err, ErrUnauthenticated) || !errors.Is(err, down) {
		t.Errorf("store down: err = %v, want the store error (not ErrUnauthenticated) so the API answers 503", err)
	}
	// Failures are not cached: the next request after recovery succeeds.
	store.setErr(nil)
	if _, err := a.Authenticate(context.Background(), bearer); err != nil {
		t.Errorf("after recovery: err = %v, want success", err)
	}
	// Garbage is still 401 while the store is down: it never reaches it.
	store.setErr(down)
	if _, err := a.Authenticate(context.Background(), "garbage"); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("garbage while store down: err = %v, want ErrUnauthenticated", err)
	}
}

func TestAuthenticateRefusesShortKeys(t *testing.T) {
	t.Parallel()
	short := []byte("short")
	r := row("tok-1")
	a, _, _ := newTestAuth(t, Config{Keys: Keyring{Current: "k", Keys: map[string][]byte{"k": short}}}, r)
	if _, err := a.Mint(r); err == nil {
		t.Errorf("Mint with a %d-byte key succeeded, want an error", len(short))
	}
	bearer := sign(t, jwt.SigningMethodHS256, short, "k", validClaims(r))
	if _, err := a.Authenticate(context.Background(), bearer); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("token under a short key: err = %v, want ErrUnauthenticated", err)
	}
	empty := sign(t, jwt.SigningMethodHS256, []byte{}, "k", validClaims(r))
	b, _, _ := newTestAuth(t, Config{Keys: Keyring{Current: "k", Keys: map[string][]byte{"k": {}}}}, r)
	if _, err := b.Authenticate(context.Background(), empty); !errors.Is(err, ErrUnauthenticated) {
		t.Errorf("token under an empty key: err = %v, want ErrUnauthenticated", err)
	}
}

func TestKeyringValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		k       Keyring
		wantErr bool
	}{
		{"single", NewKeyring(keyNew), false},
		{"rotated", NewKeyring(keyNew, keyOld), false},
		{"current missing", Keyring{Current: "x", Keys: map[string][]byte{"y": keyNew}}, true},
		{"short current", Keyring{Current: "x", Keys: map[string][]byte{"x": []byte("short")}}, true},
		{"short previous", NewKeyring(keyNew, []byte("short")), true},
		{"zero", Keyring{}, true},
	}
	for _, tt := range tests {
		if err := tt.k.Validate(); (err != nil) != tt.wantErr {
			t.Errorf("%s: Validate() = %v, want error %v", tt.name, err, tt.wantErr)
		}
	}
	if KeyID(keyNew) == KeyID(keyOld) || KeyID(keyNew) != KeyID(append([]byte{}, keyNew...)) {
		t.Errorf("KeyID must be stable per key and differ between keys")
	}
}

func TestAuthenticateConcurrent(t *testing.T) {
	t.Parallel()
	r := row("tok-1")
	a, _, clk := newTestAuth(t, Config{}, r)
	bearer, err := a.Mint(r)
	require.NoError(t, err)
	errs := make(chan error, 64)
	for i := range cap(errs) {
		go func() {
			if i%8 == 0 {
				clk.Advance(100 * time.Millisecond)
			}
			_, err := a.Authenticate(context.Background(), bearer)
			errs <- err
		}()
	}
	for range cap(errs) {
		if err := <-errs; err != nil {
			t.Errorf("concurrent Authenticate: %v", err)
		}
	}
}
