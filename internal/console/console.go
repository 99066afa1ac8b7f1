// Package console is the web console served at /ui: server-rendered pages
// over the public REST API and the /ws endpoint. It has no endpoint of its
// own for data and no auth of its own: every read and write is a call to
// the API handler with the signed-in user's bearer token, so scope rules,
// 404s and validation errors are exactly the API's.
package console

import (
	"embed"
	"html/template"
	"io/fs"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
)

//go:embed templates/*.html templates/partials/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Prefix is where the console is mounted; PortalPrefix is where the portal
// (portal.go), the console reduced to one customer's tags, is.
const (
	Prefix       = "/ui"
	PortalPrefix = "/portal"
)

// contentSecurityPolicy allows nothing inline and nothing from elsewhere;
// the portal's pages replace its frame-ancestors (portalPolicy).
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// Options configure the console.
type Options struct {
	// API is the public API's handler; the console calls it in-process.
	API http.Handler
	// EncryptionKey is secrets.encryption_key; the session cookie is sealed
	// with a key derived from it.
	EncryptionKey string
	// SessionTTL bounds a sign-in (default 12 h); the token's own expiry and
	// revocation end it sooner.
	SessionTTL time.Duration
	// SecureCookie is console.secure_cookie: "always", or "auto"/"" (Secure
	// over TLS, seen directly or via X-Forwarded-Proto from TrustedProxies).
	SecureCookie   string
	TrustedProxies []netip.Prefix
	// Revocations keep signed-out sessions (the store); nil keeps none, so
	// only the browser forgets a session (tests).
	Revocations Revocations
	// RequestsOff is outbound.record_requests: false; the occurrence page
	// then says requests are not stored instead of "not recorded".
	RequestsOff bool
	// FrameAncestors is console.portal.frame_ancestors: the origins that
	// may frame the portal's pages (none when empty). The console itself
	// is never framed.
	FrameAncestors []string
	Logger         *zap.Logger
	Now            func() time.Time
}

// Console serves /ui.
type Console struct {
	opts     Options
	log      *zap.Logger
	sessions *sessionBox
	pages    map[string]*template.Template
	// portalPages are the same templates with their links under /portal.
	portalPages map[string]*template.Template
	// portalCSP is the portal pages' Content-Security-Policy.
	portalCSP string
	static    http.Handler
	mux       *http.ServeMux
	ws        *wsDialer

	closeOnce sync.Once
}

// New builds the console.
func New(opts Options) (*Console, error) {
	if opts.SessionTTL <= 0 {
		opts.SessionTTL = 12 * time.Hour
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	sb, err := newSessionBox(opts.EncryptionKey, opts.SessionTTL, opts.Now)
	if err != nil {
		return nil, err
	}
	sb.secureAlways, sb.trusted, sb.revoked = opts.SecureCookie == "always", opts.TrustedProxies, opts.Revocations
	sb.framed = len(opts.FrameAncestors) > 0
	pages, err := parsePages(Prefix)
	if err != nil {
		return nil, err
	}
	portalPages, err := parsePages(PortalPrefix)
	if err != nil {
		return nil, err
	}
	sub, err := fs.Sub(staticFS, "static")
	if err != nil {
		return nil, err
	}
	c := &Console{opts: opts, log: opts.Logger.Named("console"), sessions: sb, pages: pages,
		portalPages: portalPages, portalCSP: portalPolicy(opts.FrameAncestors),
		static: http.StripPrefix(Prefix+"/static/", http.FileServerFS(sub)), ws: newWSDialer(opts.API)}
	c.mux = c.routes()
	c.portalRoutes(c.mux)
	return c, nil
}

// Close stops the in-process WebSocket transport.
func (c *Console) Close() {
	c.closeOnce.Do(c.ws.close)
}

func (c *Console) routes() *http.ServeMux {
	m := http.NewServeMux()
	m.HandleFunc("GET /ui", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, Prefix+"/", http.StatusFound)
	})
	m.HandleFunc("GET /ui/static/", c.serveStatic)
	m.HandleFunc("GET /ui/login", c.loginPage)
	m.HandleFunc("POST /ui/login", c.login)
	m.HandleFunc("POST /ui/logout", c.signedIn(c.logout))

	m.HandleFunc("GET /ui/{$}", c.signedIn(c.overview))
	m.HandleFunc("GET /ui/events", c.signedIn(c.eventsPage))
	m.HandleFunc("GET /ui/events/bulk", c.signedIn(c.confirmBulkEvents))
	m.HandleFunc("POST /ui/events/bulk", c.signedIn(c.bulkEvents))
	m.HandleFunc("GET /ui/events/new", c.signedIn(c.newEventPage))
	m.HandleFunc("POST /ui/events/new", c.signedIn(c.createEvent))
	m.HandleFunc("POST /ui/preview", c.signedIn(c.preview))
	m.HandleFunc("POST /ui/resolve-time", c.signedIn(c.resolveTime))
	m.HandleFunc("GET /ui/events/{id}", c.signedIn(c.eventPage))
	m.HandleFunc("GET /ui/events/{id}/edit", c.signedIn(c.editEventPage))
	m.HandleFunc("POST /ui/events/{id}/edit", c.signedIn(c.updateEvent))
	m.HandleFunc("GET /ui/events/{id}/confirm/{action}", c.signedIn(c.confirmEventAction))
	m.HandleFunc("POST /ui/events/{id}/do/{action}", c.signedIn(c.eventAction))
	m.HandleFunc("POST /ui/events/{id}/pause", c.signedIn(c.pauseEvent))
	m.HandleFunc("POST /ui/events/{id}/resume", c.signedIn(c.resumeEvent))
	m.HandleFunc("POST /ui/events/{id}/exceptions", c.signedIn(c.addException))
	m.HandleFunc("POST /ui/events/{id}/exceptions/remove", c.signedIn(c.removeException))
	m.HandleFunc("POST /ui/events/{id}/backfill", c.signedIn(c.backfillEvent))
	m.HandleFunc("GET /ui/occurrences/{id}", c.signedIn(c.occurrencePage))
	m.HandleFunc("POST /ui/occurrences/{id}/replay", c.signedIn(c.replayOne))
	m.HandleFunc("POST /ui/occurrences/{id}/skip", c.signedIn(c.controlOne("skip", "Skipped: it will not fire.")))
	m.HandleFunc("POST /ui/occurrences/{id}/unskip", c.signedIn(c.controlOne("unskip", "Unskipped: it fires as planned.")))
	m.HandleFunc("POST /ui/occurrences/{id}/move", c.signedIn(c.moveOne))
	m.HandleFunc("GET /ui/inflight", c.signedIn(c.inflightPage))
	m.HandleFunc("GET /ui/concurrency", c.signedIn(c.concurrencyPage))
	m.HandleFunc("GET /ui/concurrency/{key}", c.signedIn(c.concurrencyKeyPage))
	m.HandleFunc("POST /ui/concurrency/{key}/pause", c.signedIn(c.pauseKey(true)))
	m.HandleFunc("POST /ui/concurrency/{key}/resume", c.signedIn(c.pauseKey(false)))
	m.HandleFunc("GET /ui/punctuality", c.signedIn(c.punctualityPage))
	m.HandleFunc("GET /ui/failures", c.signedIn(c.failuresPage))
	m.HandleFunc("GET /ui/failures/replay", c.signedIn(c.confirmBulkReplay))
	m.HandleFunc("POST /ui/failures/replay", c.signedIn(c.bulkReplay))
	m.HandleFunc("GET /ui/live", c.signedIn(c.livePage))
	m.HandleFunc("GET /ui/live/stream", c.signedIn(c.liveStream))
	m.HandleFunc("GET /ui/tokens", c.signedIn(c.tokensPage))
	m.HandleFunc("POST /ui/tokens", c.signedIn(c.mintToken))
	m.HandleFunc("GET /ui/tokens/{id}/revoke", c.signedIn(c.confirmRevoke))
	m.HandleFunc("POST /ui/tokens/{id}/revoke", c.signedIn(c.revokeToken))
	m.HandleFunc("GET /ui/endpoints", c.signedIn(c.endpointsPage))
	m.HandleFunc("GET /ui/endpoints/new", c.signedIn(c.newEndpointPage))
	m.HandleFunc("POST /ui/endpoints/new", c.signedIn(c.createEndpoint))
	m.HandleFunc("GET /ui/endpoints/{id}", c.signedIn(c.endpointPage))
	m.HandleFunc("GET /ui/endpoints/{id}/edit", c.signedIn(c.editEndpointPage))
	m.HandleFunc("POST /ui/endpoints/{id}/edit", c.signedIn(c.updateEndpoint))
	m.HandleFunc("GET /ui/endpoints/{id}/confirm/{action}", c.signedIn(c.confirmEndpointAction))
	m.HandleFunc("POST /ui/endpoints/{id}/do/{action}", c.signedIn(c.endpointAction))
	m.HandleFunc("POST /ui/endpoints/{id}/test", c.signedIn(c.testEndpoint))
	m.HandleFunc("GET /ui/topics", c.signedIn(c.topicsPage))
	m.HandleFunc("POST /ui/topics", c.signedIn(c.createTopic))
	m.HandleFunc("GET /ui/topics/{name}", c.signedIn(c.topicPage))
	m.HandleFunc("POST /ui/topics/{name}/edit", c.signedIn(c.updateTopic))
	m.HandleFunc("GET /ui/topics/{name}/delete", c.signedIn(c.confirmDeleteTopic))
	m.HandleFunc("POST /ui/topics/{name}/delete", c.signedIn(c.deleteTopic))
	m.HandleFunc("GET /ui/subscriptions", c.signedIn(c.subscriptionsPage))
	m.HandleFunc("POST /ui/subscriptions", c.signedIn(c.createSubscription))
	m.HandleFunc("GET /ui/subscriptions/{id}", c.signedIn(c.subscriptionPage))
	m.HandleFunc("POST /ui/subscriptions/{id}/edit", c.signedIn(c.updateSubscription))
	m.HandleFunc("POST /ui/subscriptions/{id}/pause", c.signedIn(c.pauseSubscription(true)))
	m.HandleFunc("POST /ui/subscriptions/{id}/resume", c.signedIn(c.pauseSubscription(false)))
	m.HandleFunc("GET /ui/subscriptions/{id}/delete", c.signedIn(c.confirmDeleteSubscription))
	m.HandleFunc("POST /ui/subscriptions/{id}/delete", c.signedIn(c.deleteSubscription))
	m.HandleFunc("GET /ui/calendars", c.signedIn(c.calendarsPage))
	m.HandleFunc("GET /ui/calendars/new", c.signedIn(c.newCalendarPage))
	m.HandleFunc("POST /ui/calendars/new", c.signedIn(c.createCalendar))
	m.HandleFunc("GET /ui/calendars/{id}", c.signedIn(c.calendarPage))
	m.HandleFunc("GET /ui/calendars/{id}/edit", c.signedIn(c.editCalendarPage))
	m.HandleFunc("POST /ui/calendars/{id}/edit", c.signedIn(c.updateCalendar))
	m.HandleFunc("GET /ui/calendars/{id}/delete", c.signedIn(c.confirmDeleteCalendar))
	m.HandleFunc("POST /ui/calendars/{id}/delete", c.signedIn(c.deleteCalendar))
	m.HandleFunc("GET /ui/notifications", c.signedIn(c.notificationsPage))
	m.HandleFunc("POST /ui/notifications", c.signedIn(c.createChannel))
	m.HandleFunc("GET /ui/notifications/{id}", c.signedIn(c.channelPage))
	m.HandleFunc("POST /ui/notifications/{id}/edit", c.signedIn(c.updateChannel))
	m.HandleFunc("POST /ui/notifications/{id}/test", c.signedIn(c.testChannel))
	m.HandleFunc("GET /ui/notifications/{id}/delete", c.signedIn(c.confirmDeleteChannel))
	m.HandleFunc("POST /ui/notifications/{id}/delete", c.signedIn(c.deleteChannel))
	m.HandleFunc("GET /ui/search", c.signedIn(c.search))
	m.HandleFunc("GET /ui/api", c.signedIn(c.apiReference))
	m.HandleFunc("/ui/", func(w http.ResponseWriter, r *http.Request) {
		// A signed-in user keeps the nav and is not asked to sign in again.
		s, _ := c.sessions.read(r)
		c.renderError(w, r, s, http.StatusNotFound, "There is no such page in the console.")
	})
	return m
}

// ServeHTTP serves every /ui and /portal request with the security
// headers. The portal's pages may be framed by the origins the operator
// listed (frame-ancestors); X-Frame-Options cannot name origins, so they
// go without it then, as browsers that know CSP ignore it anyway.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	switch {
	case !isPortal(r):
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Frame-Options", "DENY")
	case len(c.opts.FrameAncestors) == 0:
		h.Set("Content-Security-Policy", c.portalCSP)
		h.Set("X-Frame-Options", "DENY")
	default:
		h.Set("Content-Security-Policy", c.portalCSP)
	}
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	if !strings.HasPrefix(r.URL.Path, Prefix+"/static/") {
		h.Set("Cache-Control", "no-store")
	}
	c.mux.ServeHTTP(w, r)
}

func (c *Console) serveStatic(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "public, max-age=3600")
	c.static.ServeHTTP(w, r)
}
