package console

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/qhronos/qhronos/internal/secrets"
)

const (
	sessionCookie = "qhronos_session"
	// portalCookie is a portal session's (portal.go), on /portal only.
	portalCookie = "qhronos_portal"
	// preCookie carries the sign-in form's CSRF token before a session
	// exists (double submit).
	preCookie = "qhronos_signin"
	// maxFormBytes bounds every form the console accepts.
	maxFormBytes = 256 << 10
)

// session is what the sealed cookie holds: the bearer token, the CSRF token
// of the forms, and when the sign-in ends.
type session struct {
	ID      string    `json:"i"` // what sign-out revokes
	Token   string    `json:"t"`
	CSRF    string    `json:"c"`
	Expires time.Time `json:"e"`
	// Portal is set on a portal session (a redeemed portal link), which
	// is good under /portal only, as a console session is under /ui only.
	Portal *portalScope `json:"p,omitempty"`
}

// portalScope is what the portal shows of its link: the tags it is
// limited to and the Back link.
type portalScope struct {
	Tags []string `json:"t"`
	Back string   `json:"b,omitempty"`
}

// Revocations remember signed-out sessions where every instance reads them
// (the store: repository.Store), so a captured cookie stops working
// everywhere once its user signs out.
type Revocations interface {
	RevokeConsoleSession(ctx context.Context, id string, expires, now time.Time) error
	ConsoleSessionRevoked(ctx context.Context, id string) (bool, error)
}

// sessionBox seals sessions with AES-GCM under a key derived from
// secrets.encryption_key for this purpose only.
type sessionBox struct {
	box *secrets.Box
	ttl time.Duration
	now func() time.Time
	// secureAlways marks every cookie Secure (console.secure_cookie: always);
	// otherwise a cookie is Secure when the request came over TLS, seen
	// directly or as X-Forwarded-Proto from one of trusted.
	secureAlways bool
	trusted      []netip.Prefix
	revoked      Revocations
	// framed is set when console.portal.frame_ancestors lets other sites
	// frame the portal: its cookie must then be sent inside their frames.
	framed bool
}

func newSessionBox(encryptionKey string, ttl time.Duration, now func() time.Time) (*sessionBox, error) {
	if len(encryptionKey) < secrets.MinKeyBytes {
		return nil, errors.New("console: secrets.encryption_key is required to seal sessions")
	}
	box, err := secrets.NewBox(encryptionKey + "\x00qhronos console session v1")
	if err != nil {
		return nil, err
	}
	return &sessionBox{box: box, ttl: ttl, now: now}, nil
}

func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func (sb *sessionBox) seal(v any) (string, error) {
	plain, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	sealed, err := sb.box.Seal(plain)
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(sealed), nil
}

func (sb *sessionBox) open(text string, v any) error {
	raw, err := base64.RawURLEncoding.DecodeString(text)
	if err != nil {
		return err
	}
	plain, err := sb.box.Open(raw)
	if err != nil {
		return err
	}
	return json.Unmarshal(plain, v)
}

// read returns the request's session (the portal's under /portal, the
// console's elsewhere), or false when there is none, it was tampered with,
// it expired, or it is the other kind: a portal session copied into the
// console's cookie signs nobody in there.
func (sb *sessionBox) read(r *http.Request) (*session, bool) {
	portal := isPortal(r)
	ck, err := r.Cookie(sessionCookieOf(portal))
	if err != nil {
		return nil, false
	}
	var s session
	if sb.open(ck.Value, &s) != nil || s.ID == "" || s.Token == "" || s.CSRF == "" || !sb.now().Before(s.Expires) ||
		(s.Portal != nil) != portal {
		return nil, false
	}
	if sb.revoked != nil {
		// A store that cannot answer signs nobody in: fail closed.
		if revoked, err := sb.revoked.ConsoleSessionRevoked(r.Context(), s.ID); err != nil || revoked {
			return nil, false
		}
	}
	return &s, true
}

func (sb *sessionBox) cookie(r *http.Request, name, value string, maxAge int) *http.Cookie {
	if name == portalCookie {
		return sb.portalCookie(r, value, maxAge)
	}
	return &http.Cookie{Name: name, Value: value, Path: Prefix, MaxAge: maxAge, HttpOnly: true,
		Secure: sb.secure(r), SameSite: http.SameSiteStrictMode}
}

// portalCookie is the portal session's cookie, on /portal only. Not
// SameSite=Strict like the console's: a portal link is opened from the
// customer's application, another site, and Chromium withholds a Strict
// cookie from a navigation that began on another site, redirects included,
// so the page the link redirects to would find no session. Lax is sent on
// that navigation and still withheld from other sites' forms and frames;
// the forms' CSRF token and Origin check stay as in the console. When
// console.portal.frame_ancestors lets other sites frame the portal, a
// frame is a cross-site request where only SameSite=None is sent, and
// browsers take None only with Secure: so over HTTPS it is None, Secure and
// Partitioned (CHIPS), kept apart per embedding site, which is what a
// session begun inside one site's frame needs and browsers that block
// third-party cookies still keep. Over plain HTTP it stays Lax: the portal
// then works framed by the same site only.
func (sb *sessionBox) portalCookie(r *http.Request, value string, maxAge int) *http.Cookie {
	ck := &http.Cookie{Name: portalCookie, Value: value, Path: PortalPrefix, MaxAge: maxAge, HttpOnly: true,
		Secure: sb.secure(r), SameSite: http.SameSiteLaxMode}
	if sb.framed && ck.Secure {
		ck.SameSite, ck.Partitioned = http.SameSiteNoneMode, true
	}
	return ck
}

// sessionCookieOf is the session cookie's name under /portal or /ui.
func sessionCookieOf(portal bool) string {
	if portal {
		return portalCookie
	}
	return sessionCookie
}

// secure reports whether the request reached us over TLS: directly, or
// through a TLS-terminating proxy listed in server.trusted_proxies that
// says so with X-Forwarded-Proto (anyone else could send that header).
func (sb *sessionBox) secure(r *http.Request) bool {
	if sb.secureAlways || r.TLS != nil {
		return true
	}
	if !strings.EqualFold(strings.TrimSpace(strings.Split(r.Header.Get("X-Forwarded-Proto"), ",")[0]), "https") {
		return false
	}
	peer, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	for _, p := range sb.trusted {
		if p.Contains(peer.Addr().Unmap()) {
			return true
		}
	}
	return false
}

// start sets a new session cookie for token.
func (sb *sessionBox) start(w http.ResponseWriter, r *http.Request, token string) error {
	s := session{ID: randomToken(), Token: token, CSRF: randomToken(), Expires: sb.now().Add(sb.ttl)}
	v, err := sb.seal(s)
	if err != nil {
		return err
	}
	http.SetCookie(w, sb.cookie(r, sessionCookie, v, int(sb.ttl/time.Second)))
	http.SetCookie(w, sb.cookie(r, preCookie, "", -1))
	return nil
}

// startPortal sets a new portal session cookie for a redeemed portal
// link: its token, ending when the link does.
func (sb *sessionBox) startPortal(w http.ResponseWriter, r *http.Request, token string, expires time.Time,
	scope portalScope) error {
	s := session{ID: randomToken(), Token: token, CSRF: randomToken(), Expires: expires, Portal: &scope}
	v, err := sb.seal(s)
	if err != nil {
		return err
	}
	http.SetCookie(w, sb.cookie(r, portalCookie, v, max(1, int(expires.Sub(sb.now())/time.Second))))
	return nil
}

// end clears the session cookie of the request's kind (portal or console).
func (sb *sessionBox) end(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, sb.cookie(r, sessionCookieOf(isPortal(r)), "", -1))
}

// signOut ends s everywhere: its id is revoked in the store every
// instance reads, so the cookie, even captured, signs nobody in again.
func (sb *sessionBox) signOut(w http.ResponseWriter, r *http.Request, s *session) error {
	sb.end(w, r)
	if sb.revoked == nil {
		return nil
	}
	return sb.revoked.RevokeConsoleSession(r.Context(), s.ID, s.Expires, sb.now())
}

// preSignIn returns the sign-in form's CSRF token, setting its cookie.
func (sb *sessionBox) preSignIn(w http.ResponseWriter, r *http.Request) string {
	if ck, err := r.Cookie(preCookie); err == nil {
		var tok string
		if sb.open(ck.Value, &tok) == nil && tok != "" {
			return tok
		}
	}
	tok := randomToken()
	if v, err := sb.seal(tok); err == nil {
		http.SetCookie(w, sb.cookie(r, preCookie, v, 3600))
	}
	return tok
}

// checkPreSignIn verifies the sign-in form's CSRF token.
func (sb *sessionBox) checkPreSignIn(r *http.Request, got string) bool {
	ck, err := r.Cookie(preCookie)
	if err != nil {
		return false
	}
	var tok string
	return sb.open(ck.Value, &tok) == nil && tok != "" && equal(tok, got)
}

func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// sameOrigin rejects cross-site state changes in browsers that send Origin
// (all current ones do on POST). An opaque origin ("null") is refused: it
// is what a sandboxed frame, a data: or file: page and a cross-origin
// redirect send, and the console's own pages (Referrer-Policy same-origin)
// never do. A request without Origin (a non-browser client) is left to
// the CSRF token.
func sameOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	if origin == "null" {
		return false
	}
	u, err := url.Parse(origin)
	return err == nil && u.Host == r.Host
}

// checkCSRF verifies a state-changing request of a session: same origin and
// the session's token in the form (or the X-CSRF-Token header for fetches).
func checkCSRF(r *http.Request, s *session) bool {
	if !sameOrigin(r) {
		return false
	}
	got := r.Header.Get("X-CSRF-Token")
	if got == "" {
		got = r.PostFormValue("csrf")
	}
	return got != "" && equal(got, s.CSRF)
}
