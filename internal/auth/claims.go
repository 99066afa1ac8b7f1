package auth

import "github.com/golang-jwt/jwt/v5"

// claims is the JWT payload: the registered claims (sub, exp, iat, nbf, jti,
// iss, aud) plus the original Qhronos access and scope. Access and scope are
// informative for clients; the stored token row is the truth and the two must
// agree.
type claims struct {
	jwt.RegisteredClaims
	Access string   `json:"access"`
	Scope  []string `json:"scope"`
}
