package console

import (
	"errors"
	"net/http"
	"strings"

	"go.uber.org/zap"

	"github.com/qhronos/qhronos/client"
)

// The portal (#39) is the console reduced to one customer: a one-time link
// (POST /portal-links) opens /portal/login?code=…, which redeems the code
// over the API and starts a portal session whose token is limited to the
// link's tags and to the API's portal routes. Its pages are the console's
// own handlers and templates, served under /portal (parsePages moves their
// links there) and only these: Endpoints, Subscriptions, Topics (to read),
// Failures and an occurrence's page with its attempts and replay. Anything
// else under /portal is not found, and the API refuses the portal token
// everywhere else, so no page could show more anyway.
func (c *Console) portalRoutes(m *http.ServeMux) {
	m.HandleFunc("GET /portal", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, PortalPrefix+"/", http.StatusFound)
	})
	m.HandleFunc("GET /portal/login", c.portalLogin)
	m.HandleFunc("POST /portal/logout", c.signedIn(c.logout))
	m.HandleFunc("GET /portal/{$}", c.signedIn(func(w http.ResponseWriter, r *http.Request, _ *session) {
		http.Redirect(w, r, PortalPrefix+"/endpoints", http.StatusSeeOther)
	}))

	m.HandleFunc("GET /portal/endpoints", c.signedIn(c.endpointsPage))
	m.HandleFunc("GET /portal/endpoints/new", c.signedIn(c.newEndpointPage))
	m.HandleFunc("POST /portal/endpoints/new", c.signedIn(c.createEndpoint))
	m.HandleFunc("GET /portal/endpoints/{id}", c.signedIn(c.endpointPage))
	m.HandleFunc("GET /portal/endpoints/{id}/edit", c.signedIn(c.editEndpointPage))
	m.HandleFunc("POST /portal/endpoints/{id}/edit", c.signedIn(c.updateEndpoint))
	m.HandleFunc("GET /portal/endpoints/{id}/confirm/{action}", c.signedIn(c.confirmEndpointAction))
	m.HandleFunc("POST /portal/endpoints/{id}/do/{action}", c.signedIn(c.endpointAction))
	m.HandleFunc("POST /portal/endpoints/{id}/test", c.signedIn(c.testEndpoint))
	m.HandleFunc("GET /portal/topics", c.signedIn(c.topicsPage))
	m.HandleFunc("GET /portal/topics/{name}", c.signedIn(c.topicPage))
	m.HandleFunc("GET /portal/subscriptions", c.signedIn(c.subscriptionsPage))
	m.HandleFunc("POST /portal/subscriptions", c.signedIn(c.createSubscription))
	m.HandleFunc("GET /portal/subscriptions/{id}", c.signedIn(c.subscriptionPage))
	m.HandleFunc("POST /portal/subscriptions/{id}/edit", c.signedIn(c.updateSubscription))
	m.HandleFunc("POST /portal/subscriptions/{id}/pause", c.signedIn(c.pauseSubscription(true)))
	m.HandleFunc("POST /portal/subscriptions/{id}/resume", c.signedIn(c.pauseSubscription(false)))
	m.HandleFunc("GET /portal/subscriptions/{id}/delete", c.signedIn(c.confirmDeleteSubscription))
	m.HandleFunc("POST /portal/subscriptions/{id}/delete", c.signedIn(c.deleteSubscription))
	m.HandleFunc("GET /portal/failures", c.signedIn(c.failuresPage))
	m.HandleFunc("GET /portal/failures/replay", c.signedIn(c.confirmBulkReplay))
	m.HandleFunc("POST /portal/failures/replay", c.signedIn(c.bulkReplay))
	m.HandleFunc("GET /portal/occurrences/{id}", c.signedIn(c.occurrencePage))
	m.HandleFunc("POST /portal/occurrences/{id}/replay", c.signedIn(c.replayOne))
	m.HandleFunc("/portal/", func(w http.ResponseWriter, r *http.Request) {
		s, _ := c.sessions.read(r)
		c.renderError(w, r, s, http.StatusNotFound, "There is no such page in the portal.")
	})
}

// portalPolicy is the portal pages' Content-Security-Policy: the console's,
// with frame-ancestors naming the origins allowed to frame them
// (console.portal.frame_ancestors, validated as origins by the
// configuration), or 'none'.
func portalPolicy(ancestors []string) string {
	if len(ancestors) == 0 {
		return contentSecurityPolicy
	}
	return strings.Replace(contentSecurityPolicy, "frame-ancestors 'none'",
		"frame-ancestors "+strings.Join(ancestors, " "), 1)
}

// maxPortalCode bounds the code read from a link before it reaches the API.
const maxPortalCode = 256

// portalLogin opens a portal link (GET /portal/login?code=…): it redeems
// the code over the API, once, starts the portal session and sends the
// browser to the portal's first page, the code out of the address bar.
// Without a code it is where an ended session lands. The code is never
// logged: the access log names the route only, and so does this.
func (c *Console) portalLogin(w http.ResponseWriter, r *http.Request) {
	code := r.URL.Query().Get("code")
	if code == "" {
		if _, ok := c.sessions.read(r); ok {
			http.Redirect(w, r, PortalPrefix+"/endpoints", http.StatusSeeOther)
			return
		}
		c.portalMessage(w, r, http.StatusUnauthorized, "Portal session ended",
			"Your portal session has ended. Open a new portal link to come back.")
		return
	}
	if len(code) > maxPortalCode {
		code = "" // no link has such a code: the API answers not found
	}
	res, err := c.sdkFor(r, "").PortalLinks.Redeem(r.Context(), code)
	switch {
	case err == nil:
	case errors.Is(err, client.ErrNotFound), errors.Is(err, client.ErrBadRequest):
		c.portalMessage(w, r, http.StatusGone, "Portal link used or expired",
			"This portal link was already used or has expired: each link signs in once. Ask for a new one.")
		return
	case errors.Is(err, client.ErrRateLimited):
		c.portalMessage(w, r, http.StatusTooManyRequests, "Too many attempts",
			"Too many attempts from your address; wait a little and open the link again.")
		return
	default:
		c.log.Error("redeem portal link", zap.Error(err))
		c.portalMessage(w, r, http.StatusInternalServerError, "Portal unavailable",
			"The portal could not be opened; the server log has the details. Try again with a new link.")
		return
	}
	scope := portalScope{Tags: res.Tags}
	if res.ReturnURL != nil {
		scope.Back = *res.ReturnURL
	}
	if err := c.sessions.startPortal(w, r, res.Token, res.ExpiresAt, scope); err != nil {
		c.log.Error("start portal session", zap.Error(err))
		c.portalMessage(w, r, http.StatusInternalServerError, "Portal unavailable",
			"The portal session could not be started. Try again with a new link.")
		return
	}
	http.Redirect(w, r, PortalPrefix+"/endpoints", http.StatusSeeOther)
}

// portalMessage shows a page of the portal to someone without a session.
func (c *Console) portalMessage(w http.ResponseWriter, r *http.Request, status int, title, msg string) {
	c.render(w, r, nil, "portal", status, view{Title: title, Data: msg})
}

// inPortal reports whether s is a portal session.
func (s *session) inPortal() bool { return s != nil && s.Portal != nil }

// defaultTags is what a new endpoint's or subscription's tags start as: a
// portal session's own tags (it may only create what carries them), none
// in the console.
func (s *session) defaultTags() string {
	if !s.inPortal() {
		return ""
	}
	return strings.Join(s.Portal.Tags, ", ")
}

// notPortalOperator is what a portal session is told on the Topics pages.
const notPortalOperator = "The catalogue is your provider's: subscribe your endpoints to its topics on Subscriptions."
