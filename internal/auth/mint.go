package auth

import (
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/qhronos/qhronos/internal/model"
)

// Mint signs a JWT for a token row with the current key. Call it before
// storing the row: an input it rejects (a *FieldError naming the field) should
// answer 400 and store nothing. The claims mirror the row; Authenticate trusts
// the row, not the claims.
func (a *Authenticator) Mint(t model.Token) (string, error) {
	now := a.now()
	if t.ID == "" {
		return "", &FieldError{Field: "id", Reason: "required"}
	}
	if t.Subject == "" {
		return "", &FieldError{Field: "sub", Reason: "required"}
	}
	// The portal's level passes here: the API mints it for a redeemed
	// portal link, and POST /tokens refuses it before (ParseAccess).
	access, err := storedAccess(string(t.Access))
	if err != nil {
		return "", &FieldError{Field: "access", Reason: "must be read, write or admin"}
	}
	if t.RevokedAt != nil {
		return "", &FieldError{Field: "revoked_at", Reason: "a revoked token cannot be minted"}
	}
	// Whole seconds: exp is a NumericDate, and rounding down keeps the JWT
	// from outliving its row.
	exp := t.ExpiresAt.Truncate(time.Second)
	if !exp.After(now) {
		return "", &FieldError{Field: "expires_at", Reason: "must be in the future"}
	}
	if a.cfg.MaxTTL > 0 && t.ExpiresAt.Sub(now) > a.cfg.MaxTTL {
		return "", &FieldError{Field: "expires_at", Reason: fmt.Sprintf("must be within %s", a.cfg.MaxTTL)}
	}
	key, err := a.cfg.Keys.signingKey()
	if err != nil {
		return "", fmt.Errorf("mint token: %w", err)
	}
	scope := t.Scope
	if scope == nil {
		scope = []string{}
	}
	issued := jwt.NewNumericDate(now)
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    a.cfg.Issuer,
			Subject:   t.Subject,
			Audience:  jwt.ClaimStrings{a.cfg.Audience},
			ExpiresAt: jwt.NewNumericDate(exp),
			NotBefore: issued,
			IssuedAt:  issued,
			ID:        t.ID,
		},
		Access: string(access),
		Scope:  scope,
	})
	tok.Header["kid"] = a.cfg.Keys.Current
	s, err := tok.SignedString(key)
	if err != nil {
		return "", fmt.Errorf("mint token: %w", err)
	}
	return s, nil
}
