package api

import (
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/qhronos/qhronos/internal/auth"
	"github.com/qhronos/qhronos/internal/events"
	"github.com/qhronos/qhronos/internal/input"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/recurrence"
)

var tokenFields = input.Set("type", "sub", "access", "scope", "expires_at")

// tokenJSON describes a token; the JWT itself appears only in the answer
// that mints it.
type tokenJSON struct {
	ID        string     `json:"id"`
	Token     string     `json:"token,omitempty"`
	Type      string     `json:"type"`
	Sub       string     `json:"sub"`
	Access    string     `json:"access"`
	Scope     []string   `json:"scope"`
	ExpiresAt time.Time  `json:"expires_at"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
	CreatedBy string     `json:"created_by,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
}

func toTokenJSON(t model.Token) tokenJSON {
	return tokenJSON{ID: t.ID, Type: "jwt", Sub: t.Subject, Access: string(t.Access), Scope: t.Scope,
		ExpiresAt: t.ExpiresAt, RevokedAt: t.RevokedAt, CreatedBy: t.CreatedBy, CreatedAt: t.CreatedAt}
}

// createToken mints a JWT. It answers 200 as the original did. A caller can
// never mint wider access or scope than its own.
func (s *Server) createToken(c *gin.Context) error {
	members, _, err := readObject(c)
	if err != nil {
		return err
	}
	if err := input.RejectUnknown(members, tokenFields, nil); err != nil {
		return err
	}
	var typ, sub, access, expires string
	var scope []string
	for name, dst := range map[string]any{"type": &typ, "sub": &sub, "access": &access, "expires_at": &expires,
		"scope": &scope} {
		if _, err := input.DecodeField(members, name, dst); err != nil {
			return err
		}
	}
	if typ != "" && typ != "jwt" {
		return input.BadRequest("type", `must be "jwt"`)
	}
	sub = strings.TrimSpace(sub)
	if sub == "" || len(sub) > 255 {
		return input.BadRequest("sub", "is required (at most 255 characters)")
	}
	level, err := auth.ParseAccess(access)
	if err != nil {
		return input.BadRequest("access", `must be one of "read", "write", "admin"`)
	}
	scope = splitList(scope)
	if len(scope) > events.MaxTags {
		return input.BadRequestf("scope", "at most %d tags", events.MaxTags)
	}
	now := s.Now().UTC()
	if expires == "" {
		return input.BadRequest("expires_at", `is required (RFC 3339, or a form like "in 30 days")`)
	}
	// The one instant parser, as every other instant field: RFC 3339, "in 2
	// hours", "tomorrow at 9am" (UTC).
	exp, err := recurrence.ParseInstant("expires_at", expires, time.UTC, now)
	if err != nil {
		return err
	}
	if !exp.After(now) {
		return input.BadRequest("expires_at", "must be in the future")
	}
	if exp.Sub(now) > s.opts.TokenMaxTTL {
		return input.BadRequestf("expires_at", "must be within %s from now", s.opts.TokenMaxTTL)
	}
	p := principal(c)
	if err := p.CanMint(level, scope); err != nil {
		return &input.Error{Status: http.StatusForbidden, Message: err.Error()}
	}
	if scope == nil {
		scope = []string{}
	}
	t := model.Token{ID: uuid.NewString(), Subject: sub, Access: level, Scope: scope,
		ExpiresAt: exp.UTC().Truncate(time.Second), CreatedBy: p.Subject, CreatedAt: now}
	jwt, err := s.Auth.Mint(t)
	if err != nil {
		return err
	}
	if err := s.Store.CreateToken(c.Request.Context(), t); err != nil {
		return err
	}
	out := toTokenJSON(t)
	out.Token = jwt
	c.JSON(http.StatusOK, out)
	return nil
}

func (s *Server) listTokens(c *gin.Context) error {
	q, err := parseListQuery(c, s.Now())
	if err != nil {
		return err
	}
	tokens, err := s.Store.ListTokens(c.Request.Context(), "", q.limit)
	if err != nil {
		return err
	}
	out := make([]tokenJSON, 0, len(tokens))
	for _, t := range tokens {
		out = append(out, toTokenJSON(t))
	}
	c.JSON(http.StatusOK, out)
	return nil
}

// revokeToken revokes a token; every instance refuses it within a second
// (the authenticator's revocation cache is at most that old).
func (s *Server) revokeToken(c *gin.Context) error {
	if err := s.Store.RevokeToken(c.Request.Context(), c.Param("id"), s.Now()); err != nil {
		return err
	}
	c.Status(http.StatusNoContent)
	return nil
}
