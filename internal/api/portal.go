package api

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/qhronos/qhronos/internal/calendar"
	"github.com/qhronos/qhronos/internal/input"
	"github.com/qhronos/qhronos/internal/model"
)

// The portal (#39): POST /portal-links makes a one-time link that opens a
// reduced console (/portal/…) limited to some tags. Redeeming the link's code
// (POST /portal-links/redeem, which the console does) stores a token row of
// access level "portal" and answers its JWT. That level allows nothing by
// itself; the routes below registered through openToPortal lend it write
// access within its tags, so the scope rules are exactly a scoped token's.

const (
	// PortalLoginPath is where a portal link points, under the public URL.
	PortalLoginPath = "/portal/login"
	// portalCodePrefix starts every portal code, so a secret scanner or a
	// person reading a log tells it from a token.
	portalCodePrefix = "qpl_"
	// DefaultPortalLinkTTL and MaxPortalLinkTTL bound expires_in: a link
	// and the session it starts end at the same instant.
	DefaultPortalLinkTTL = time.Hour
	MaxPortalLinkTTL     = 24 * time.Hour
	// maxReturnURL bounds return_url.
	maxReturnURL = 2048
)

var (
	portalLinkFields   = input.Set("tags", "expires_in", "return_url")
	portalRedeemFields = input.Set("code")
	// errPortalLinkGone is every failed redeem: an unknown, used or expired
	// code alike, so an answer tells nothing about codes it was not given.
	errPortalLinkGone = &input.Error{Status: http.StatusNotFound, Field: "code",
		Message: "code: this portal link was already used or has expired; ask for a new one"}
)

// portalLinkJSON is the answer of POST /portal-links.
type portalLinkJSON struct {
	URL       string    `json:"url"`
	ExpiresAt time.Time `json:"expires_at"`
}

// portalSessionJSON is the answer of POST /portal-links/redeem: the portal
// session's token and what the portal shows of its link.
type portalSessionJSON struct {
	Token     string    `json:"token"`
	ExpiresAt time.Time `json:"expires_at"`
	Tags      []string  `json:"tags"`
	ReturnURL *string   `json:"return_url"`
}

// openToPortal opens the route to portal sessions: their principal acts
// with write access inside their tags (the require that follows still
// applies, and every check below it sees a scoped write token). On a route
// without it a portal session is refused by require, its level allowing
// nothing.
func (s *Server) openToPortal(c *gin.Context) {
	if p := principal(c); p.Portal() {
		c.Set(ctxPrincipal, p.WithinPortal())
	}
	c.Next()
}

// createPortalLink answers POST /portal-links ({tags, expires_in,
// return_url}) with a one-time link. The caller must be able to create
// resources carrying every one of the tags itself (write access, each tag
// in its scope; admin and master tokens any): the portal does that with
// them, so a link never reaches wider than its maker.
func (s *Server) createPortalLink(c *gin.Context) error {
	members, _, err := readObject(c)
	if err != nil {
		return err
	}
	if err := input.RejectUnknown(members, portalLinkFields, nil); err != nil {
		return err
	}
	var tags []string
	if _, err := input.DecodeField(members, "tags", &tags); err != nil {
		return err
	}
	if tags, err = calendar.CheckTags(tags); err != nil {
		return err
	}
	if len(tags) == 0 {
		return input.BadRequest("tags", "is required: at least one tag, the portal shows what carries one of them")
	}
	ttl, err := s.portalLinkTTL(members)
	if err != nil {
		return err
	}
	back, err := returnURL(members)
	if err != nil {
		return err
	}
	p := principal(c)
	if err := p.CanCreate(tags); err != nil {
		return err
	}
	code, err := portalCode()
	if err != nil {
		return err
	}
	now := s.Now().UTC()
	link := model.PortalLink{ID: uuid.NewString(), CodeHash: portalCodeHash(code), Tags: tags, ReturnURL: back,
		ExpiresAt: now.Add(ttl).Truncate(time.Second), CreatedBy: p.Subject, CreatedAt: now}
	if err := s.Store.CreatePortalLink(c.Request.Context(), link, now); err != nil {
		return err
	}
	c.JSON(http.StatusCreated, portalLinkJSON{
		URL:       strings.TrimRight(s.opts.PublicURL, "/") + PortalLoginPath + "?code=" + url.QueryEscape(code),
		ExpiresAt: link.ExpiresAt})
	return nil
}

// portalLinkTTL reads expires_in (default 1 h), at most 24 h and never
// past auth.token_max_ttl, since the session's token lives as long.
func (s *Server) portalLinkTTL(members map[string]json.RawMessage) (time.Duration, error) {
	var text string
	sent, err := input.DecodeField(members, "expires_in", &text)
	if err != nil || !sent {
		return DefaultPortalLinkTTL, err
	}
	hi := MaxPortalLinkTTL
	if s.opts.TokenMaxTTL > 0 && s.opts.TokenMaxTTL < hi {
		hi = s.opts.TokenMaxTTL
	}
	return input.ParseDuration("expires_in", text, time.Minute, hi)
}

// returnURL reads return_url: absent, or an absolute http(s) URL without
// credentials, which the portal shows as its Back link.
func returnURL(members map[string]json.RawMessage) (string, error) {
	var text string
	if _, err := input.DecodeField(members, "return_url", &text); err != nil || text == "" {
		return "", err
	}
	u, err := url.Parse(text)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		len(text) > maxReturnURL {
		return "", input.BadRequestf("return_url", "must be an absolute http or https URL without credentials, "+
			"at most %d characters", maxReturnURL)
	}
	return text, nil
}

// redeemPortalLink answers POST /portal-links/redeem ({code}): once per
// link, before it expires, a portal session's token (access "portal", the
// link's tags as its scope, expiring with the link). It takes no bearer:
// the code is the credential. Every call counts against the client
// address's rate limit, as a failed sign-in does.
func (s *Server) redeemPortalLink(c *gin.Context) error {
	if s.limited(c, "ip:"+s.clientIP(c).String()) {
		return nil
	}
	members, _, err := readObject(c)
	if err != nil {
		return err
	}
	if err := input.RejectUnknown(members, portalRedeemFields, nil); err != nil {
		return err
	}
	var code string
	if _, err := input.DecodeField(members, "code", &code); err != nil {
		return err
	}
	if !strings.HasPrefix(code, portalCodePrefix) {
		return errPortalLinkGone
	}
	now := s.Now().UTC()
	var jwt string
	link, err := s.Store.RedeemPortalLink(c.Request.Context(), portalCodeHash(code), now,
		func(l model.PortalLink) (model.Token, error) {
			t := model.Token{ID: uuid.NewString(), Subject: portalSubject(l.Tags), Access: model.AccessPortal,
				Scope: l.Tags, ExpiresAt: l.ExpiresAt, CreatedBy: l.CreatedBy, CreatedAt: now}
			var err error
			jwt, err = s.Auth.Mint(t)
			return t, err
		})
	if errors.Is(err, model.ErrNotFound) {
		return errPortalLinkGone
	}
	if err != nil {
		return err
	}
	out := portalSessionJSON{Token: jwt, ExpiresAt: link.ExpiresAt, Tags: link.Tags}
	if link.ReturnURL != "" {
		out.ReturnURL = &link.ReturnURL
	}
	c.JSON(http.StatusOK, out)
	return nil
}

// portalSubject names a portal session in token listings and as the
// created_by of what it makes: "portal:" and its tags.
func portalSubject(tags []string) string {
	sub := "portal:" + strings.Join(tags, ",")
	if len(sub) <= 255 {
		return sub
	}
	for len(sub) > 252 {
		_, size := utf8.DecodeLastRuneInString(sub)
		sub = sub[:len(sub)-size]
	}
	return sub + "..."
}

// portalCode is a fresh code: 256 random bits.
func portalCode() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return portalCodePrefix + base64.RawURLEncoding.EncodeToString(b), nil
}

// portalCodeHash is what the store keeps of a code. A plain SHA-256 is
// enough: the code is 256 random bits, nothing to guess from its hash.
func portalCodeHash(code string) string {
	sum := sha256.Sum256([]byte(code))
	return hex.EncodeToString(sum[:])
}
