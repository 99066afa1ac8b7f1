package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/qhronos/qhronos/internal/model"
)

// Defaults applied by NewAuthenticator to zero Config fields.
const (
	DefaultIssuer             = "qhronos"
	DefaultAudience           = "qhronos-api"
	DefaultLeeway             = 30 * time.Second
	DefaultRevocationCacheTTL = time.Second
	// MaxRevocationCacheTTL caps the cache so a revocation is seen on every
	// instance within a second.
	MaxRevocationCacheTTL = time.Second
	// MaxBearerBytes rejects oversized bearers before any parsing or hashing.
	MaxBearerBytes = 8 << 10
)

// MasterSubject is the Subject of the master token's principal.
const MasterSubject = "master"

// TokenLookup finds a stored token row by its id (the JWT's jti). It returns
// model.ErrNotFound for an unknown id; any other error means the store
// is unavailable.
type TokenLookup interface {
	TokenByID(ctx context.Context, id string) (model.Token, error)
}

// Config configures an Authenticator. Zero values take the defaults above;
// an empty MasterToken disables the master token.
type Config struct {
	MasterToken string
	Keys        Keyring
	Issuer      string
	Audience    string
	// Leeway tolerates clock skew on nbf and iat (default 30 s; negative = none).
	Leeway time.Duration
	// MaxTTL bounds how far in the future Mint accepts an expiry (0 = no bound).
	MaxTTL time.Duration
	// RevocationCacheTTL is how long a token row is cached (default and
	// maximum 1 s; negative disables the cache).
	RevocationCacheTTL time.Duration
}

// Authenticator turns a bearer token into a Principal. It is safe for
// concurrent use.
type Authenticator struct {
	cfg          Config
	masterDigest [sha256.Size]byte
	hasMaster    bool
	tokens       TokenLookup
	now          func() time.Time
	cache        *tokenCache
	parser       *jwt.Parser
}

// NewAuthenticator applies defaults and prepares the JWT parser. A keyring
// that cannot sign is not an error here (Keyring.Validate is for startup);
// such an authenticator refuses every JWT instead.
func NewAuthenticator(cfg Config, tokens TokenLookup, now func() time.Time) *Authenticator {
	if now == nil {
		now = time.Now
	}
	if cfg.Issuer == "" {
		cfg.Issuer = DefaultIssuer
	}
	if cfg.Audience == "" {
		cfg.Audience = DefaultAudience
	}
	switch {
	case cfg.Leeway == 0:
		cfg.Leeway = DefaultLeeway
	case cfg.Leeway < 0:
		cfg.Leeway = 0
	}
	switch {
	case cfg.RevocationCacheTTL == 0:
		cfg.RevocationCacheTTL = DefaultRevocationCacheTTL
	case cfg.RevocationCacheTTL > MaxRevocationCacheTTL:
		cfg.RevocationCacheTTL = MaxRevocationCacheTTL
	}
	a := &Authenticator{
		cfg:    cfg,
		tokens: tokens,
		now:    now,
		cache:  newTokenCache(cfg.RevocationCacheTTL, maxCachedTokens),
		parser: jwt.NewParser(
			jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
			jwt.WithExpirationRequired(),
			jwt.WithIssuedAt(),
			jwt.WithIssuer(cfg.Issuer),
			jwt.WithAudience(cfg.Audience),
			jwt.WithLeeway(cfg.Leeway),
			jwt.WithTimeFunc(now),
			jwt.WithStrictDecoding(),
		),
	}
	if cfg.MasterToken != "" {
		a.masterDigest = sha256.Sum256([]byte(cfg.MasterToken))
		a.hasMaster = true
	}
	return a
}

// unauthenticated wraps ErrUnauthenticated with a reason safe to show.
func unauthenticated(reason string) error {
	return fmt.Errorf("%w: %s", ErrUnauthenticated, reason)
}

// Authenticate derives the principal for a bearer token: the master token, or
// an HS256 JWT from our keyring whose jti names a known, unrevoked, unexpired
// token row that agrees with its claims. Failures wrap ErrUnauthenticated; a
// store failure is returned wrapped as itself so the API can answer 503.
func (a *Authenticator) Authenticate(ctx context.Context, bearer string) (Principal, error) {
	if bearer == "" {
		return Principal{}, unauthenticated("missing bearer token")
	}
	if len(bearer) > MaxBearerBytes {
		return Principal{}, unauthenticated("invalid token")
	}
	if a.isMaster(bearer) {
		return Principal{Subject: MasterSubject, Master: true, Access: model.AccessAdmin}, nil
	}
	c, err := a.verify(bearer)
	if err != nil {
		return Principal{}, err
	}
	row, err := a.lookup(ctx, c.ID)
	if err != nil {
		return Principal{}, err
	}
	return a.principal(c, row)
}

// isMaster compares fixed-length digests in constant time, so neither the
// content nor the length of the master token leaks through timing.
func (a *Authenticator) isMaster(bearer string) bool {
	d := sha256.Sum256([]byte(bearer))
	return subtle.ConstantTimeCompare(d[:], a.masterDigest[:]) == 1 && a.hasMaster
}

// verify checks the JWT's algorithm, key, signature and time/issuer/audience
// claims. Only then is the store consulted, so garbage never costs a query.
func (a *Authenticator) verify(bearer string) (*claims, error) {
	var c claims
	_, err := a.parser.ParseWithClaims(bearer, &c, a.keyFunc)
	switch {
	case err == nil:
	case errors.Is(err, jwt.ErrTokenExpired):
		return nil, unauthenticated("token expired")
	case errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return nil, unauthenticated("token not valid yet")
	default:
		return nil, unauthenticated("invalid token")
	}
	if c.ID == "" {
		return nil, unauthenticated("invalid token")
	}
	return &c, nil
}

// keyFunc accepts HS256 only (the parser also restricts methods; this guards
// against a future option change) and a kid from the keyring.
func (a *Authenticator) keyFunc(t *jwt.Token) (any, error) {
	if t.Method != jwt.SigningMethodHS256 {
		return nil, errors.New("unexpected signing method")
	}
	kid, _ := t.Header["kid"].(string)
	key, ok := a.cfg.Keys.verifyingKey(kid)
	if !ok {
		return nil, errors.New("unknown key id")
	}
	return key, nil
}

// lookup returns the token row for id, through the short-lived cache.
func (a *Authenticator) lookup(ctx context.Context, id string) (model.Token, error) {
	now := a.now()
	if e, ok := a.cache.get(id, now); ok {
		if !e.found {
			return model.Token{}, unauthenticated("invalid token")
		}
		return e.token, nil
	}
	if a.tokens == nil {
		return model.Token{}, unauthenticated("invalid token")
	}
	row, err := a.tokens.TokenByID(ctx, id)
	if errors.Is(err, model.ErrNotFound) {
		a.cache.put(id, cacheEntry{fetchedAt: now})
		return model.Token{}, unauthenticated("invalid token")
	}
	if err != nil {
		return model.Token{}, fmt.Errorf("look up token: %w", err)
	}
	a.cache.put(id, cacheEntry{token: row, found: true, fetchedAt: now})
	return row, nil
}

// principal checks the stored row (the truth) against the claims and builds
// the principal from the row.
func (a *Authenticator) principal(c *claims, row model.Token) (Principal, error) {
	if row.ID != c.ID {
		return Principal{}, unauthenticated("invalid token")
	}
	if row.RevokedAt != nil {
		return Principal{}, unauthenticated("token revoked")
	}
	if !a.now().Before(row.ExpiresAt) {
		return Principal{}, unauthenticated("token expired")
	}
	stored, err := storedAccess(string(row.Access))
	if err != nil {
		return Principal{}, unauthenticated("invalid token")
	}
	claimed, err := storedAccess(c.Access)
	if err != nil || claimed != stored || c.Subject != row.Subject || !sameSet(c.Scope, row.Scope) ||
		c.ExpiresAt.After(row.ExpiresAt) {
		return Principal{}, unauthenticated("invalid token")
	}
	return Principal{
		Subject:   row.Subject,
		Access:    stored,
		Scope:     append([]string{}, row.Scope...),
		TokenID:   row.ID,
		ExpiresAt: row.ExpiresAt,
	}, nil
}

// sameSet reports whether a and b hold the same strings, ignoring order and
// repetition.
func sameSet(a, b []string) bool {
	for _, s := range a {
		if !slices.Contains(b, s) {
			return false
		}
	}
	for _, s := range b {
		if !slices.Contains(a, s) {
			return false
		}
	}
	return true
}
