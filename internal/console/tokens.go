package console

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/qhronos/qhronos/client"
)

type mintForm struct {
	Sub, Access, Scope, Expires string
	Errors                      map[string]string
	General                     string
}

type tokensData struct {
	Tokens    []client.Token
	Forbidden string
	Form      mintForm
	Minted    *client.Token
	Limit     int
}

// tokenLimit is how many tokens the page lists, newest first (the API's
// listing has no cursor).
const tokenLimit = 100

var expiries = map[string]time.Duration{"1d": 24 * time.Hour, "7d": 7 * 24 * time.Hour, "30d": 30 * 24 * time.Hour,
	"90d": 90 * 24 * time.Hour, "365d": 365 * 24 * time.Hour}

func (c *Console) tokensData(r *http.Request, s *session, d *tokensData) error {
	d.Limit = tokenLimit
	list, err := c.sdk(r).Tokens.ListNewest(r.Context(), tokenLimit)
	err = sdkError(err)
	d.Tokens = list
	var ae *apiError
	if errors.As(err, &ae) && ae.Status == http.StatusForbidden {
		d.Forbidden = "Your token cannot manage tokens: that needs admin access or the master token."
		return nil
	}
	return err
}

func (c *Console) tokensPage(w http.ResponseWriter, r *http.Request, s *session) {
	d := tokensData{Form: mintForm{Access: "read", Expires: "30d", Errors: map[string]string{}}}
	if err := c.tokensData(r, s, &d); err != nil {
		c.fail(w, r, s, err)
		return
	}
	c.render(w, r, s, "tokens", http.StatusOK, view{Title: "Tokens", Nav: "tokens", Data: d})
}

// mintToken mints a JWT and shows it once, in this answer only.
func (c *Console) mintToken(w http.ResponseWriter, r *http.Request, s *session) {
	f := mintForm{Sub: strings.TrimSpace(r.PostFormValue("sub")), Access: r.PostFormValue("access"),
		Scope: strings.TrimSpace(r.PostFormValue("scope")), Expires: r.PostFormValue("expires"),
		Errors: map[string]string{}}
	d := tokensData{Form: f}
	status := http.StatusOK
	ttl, ok := expiries[f.Expires]
	if !ok {
		f.Errors["expires"] = "choose a lifetime"
	}
	scope := []string{}
	for _, t := range strings.Split(f.Scope, ",") {
		if t = strings.TrimSpace(t); t != "" {
			scope = append(scope, t)
		}
	}
	if len(f.Errors) == 0 {
		minted, err := c.sdk(r).Tokens.Create(r.Context(), client.TokenRequest{Type: client.Ptr(client.TokenRequestType("jwt")),
			Sub: f.Sub, Access: client.TokenRequestAccess(f.Access), Scope: scope,
			ExpiresAt: time.Now().Add(ttl).UTC().Truncate(time.Second)})
		err = sdkError(err)
		var ae *apiError
		switch {
		case errors.As(err, &ae) && ae.Status >= 400 && ae.Status < 500:
			field := ae.Field
			if field == "expires_at" {
				field = "expires"
			}
			if field == "sub" || field == "access" || field == "scope" || field == "expires" {
				f.Errors[field] = fieldMessage(ae)
			} else {
				f.General = ae.Message
			}
		case err != nil:
			c.fail(w, r, s, err)
			return
		default:
			d.Minted = minted
			f = mintForm{Access: "read", Expires: "30d", Errors: map[string]string{}}
		}
	}
	if len(f.Errors) > 0 || f.General != "" {
		status = http.StatusBadRequest
	}
	d.Form = f
	if err := c.tokensData(r, s, &d); err != nil {
		c.fail(w, r, s, err)
		return
	}
	c.render(w, r, s, "tokens", status, view{Title: "Tokens", Nav: "tokens", Data: d})
}

func (c *Console) confirmRevoke(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.PathValue("id")
	c.render(w, r, s, "confirm", http.StatusOK, view{Title: "Revoke token", Nav: "tokens", Data: confirmData{
		Action: "revoke", Verb: "Revoke", Danger: true,
		Question: "Revoke token " + id + "? Every request and WebSocket session using it stops within a second.",
		Post:     Prefix + "/tokens/" + url.PathEscape(id) + "/revoke", Cancel: Prefix + "/tokens"}})
}

func (c *Console) revokeToken(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.PathValue("id")
	if err := sdkError(c.sdk(r).Tokens.Revoke(r.Context(), id)); err != nil {
		var ae *apiError
		if errors.As(err, &ae) {
			redirect(w, r, Prefix+"/tokens", "Revoke failed: "+ae.Message)
			return
		}
		c.fail(w, r, s, err)
		return
	}
	redirect(w, r, Prefix+"/tokens", "Token revoked.")
}
