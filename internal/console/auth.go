package console

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"go.uber.org/zap"

	"github.com/qhronos/qhronos/client"
)

// handler is a page handler of a signed-in user.
type handler func(w http.ResponseWriter, r *http.Request, s *session)

// signedIn requires a session, and on POST a valid CSRF token; without a
// session a page redirects to the sign-in form.
func (c *Console) signedIn(h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s, ok := c.sessions.read(r)
		if !ok {
			if r.Method == http.MethodGet && r.Header.Get("Accept") != "text/event-stream" {
				http.Redirect(w, r, base(r)+"/login", http.StatusSeeOther)
				return
			}
			http.Error(w, "sign in first", http.StatusUnauthorized)
			return
		}
		if r.Method != http.MethodGet {
			r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
			if !checkCSRF(r, s) {
				c.renderError(w, r, s, http.StatusForbidden,
					"This form has expired or came from another site. Reload the page and try again.")
				return
			}
		}
		h(w, withSession(r, s), s)
	}
}

type loginData struct {
	PreCSRF string
	Error   string
	Ended   bool
}

func (c *Console) loginPage(w http.ResponseWriter, r *http.Request) {
	if _, ok := c.sessions.read(r); ok && r.URL.Query().Get("ended") == "" {
		http.Redirect(w, r, Prefix+"/", http.StatusSeeOther)
		return
	}
	d := loginData{PreCSRF: c.sessions.preSignIn(w, r), Ended: r.URL.Query().Get("ended") != ""}
	if d.Ended {
		c.sessions.end(w, r)
	}
	c.render(w, r, nil, "login", http.StatusOK, view{Title: "Sign in", Data: d})
}

// login verifies the token by calling the API with it, then keeps it in the
// sealed, HttpOnly, SameSite=Strict session cookie.
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	token := strings.TrimSpace(r.PostFormValue("token"))
	d := loginData{PreCSRF: c.sessions.preSignIn(w, r)}
	if !sameOrigin(r) || !c.sessions.checkPreSignIn(r, r.PostFormValue("csrf")) {
		d.Error = "The sign-in form expired; try again."
		c.render(w, r, nil, "login", http.StatusForbidden, view{Title: "Sign in", Data: d})
		return
	}
	if token == "" {
		d.Error = "Paste a token: the master token or a JWT minted by POST /tokens."
		c.render(w, r, nil, "login", http.StatusBadRequest, view{Title: "Sign in", Data: d})
		return
	}
	// Any answer but 401 and 429 means the API knows the token; a read-only
	// or tag-scoped one may be refused the listing (403) and still sign in.
	_, err := c.sdkFor(r, token).Events.List(r.Context(), client.ListEventsParams{Limit: client.Ptr(1)})
	var ae *client.APIError
	switch {
	case err == nil, errors.Is(err, client.ErrForbidden):
	case errors.Is(err, client.ErrUnauthorized):
		d.Error = "The API does not accept this token (unknown, expired or revoked)."
		c.render(w, r, nil, "login", http.StatusUnauthorized, view{Title: "Sign in", Data: d})
		return
	case errors.Is(err, client.ErrRateLimited):
		d.Error = "Too many attempts; wait a little and try again."
		c.render(w, r, nil, "login", http.StatusTooManyRequests, view{Title: "Sign in", Data: d})
		return
	case errors.As(err, &ae):
		d.Error = "The API answered " + http.StatusText(ae.StatusCode) + "; try again."
		c.render(w, r, nil, "login", ae.StatusCode, view{Title: "Sign in", Data: d})
		return
	default:
		c.log.Error("verify console sign-in", zap.Error(err))
		d.Error = "The server could not verify the token; try again."
		c.render(w, r, nil, "login", http.StatusInternalServerError, view{Title: "Sign in", Data: d})
		return
	}
	if err := c.sessions.start(w, r, token); err != nil {
		c.log.Error("start console session", zap.Error(err))
		d.Error = "The session could not be started; try again."
		c.render(w, r, nil, "login", http.StatusInternalServerError, view{Title: "Sign in", Data: d})
		return
	}
	http.Redirect(w, r, Prefix+"/", http.StatusSeeOther)
}

// logout ends the session on every instance, not only in this browser.
func (c *Console) logout(w http.ResponseWriter, r *http.Request, s *session) {
	if err := c.sessions.signOut(w, r, s); err != nil {
		c.log.Error("revoke console session", zap.Error(err))
		c.renderError(w, r, nil, http.StatusServiceUnavailable,
			"Signing out could not be recorded; the session may still work elsewhere. Try again.")
		return
	}
	http.Redirect(w, r, base(r)+"/login", http.StatusSeeOther)
}

func urlQueryEscape(s string) string { return url.QueryEscape(s) }
