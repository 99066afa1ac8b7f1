package api

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
)

// testPublicURL is the public URL portal links point under in these tests.
const testPublicURL = "https://qhronos.example.com"

// portalLink makes a portal link with token and returns its code.
func (e *env) portalLink(token string, body map[string]any) (code string, link map[string]any) {
	e.t.Helper()
	res := e.do("POST", "/portal-links", token, body)
	require.Equal(e.t, http.StatusCreated, res.Status, "portal link: %s", res.Body)
	link = res.object(e.t)
	u, err := url.Parse(link["url"].(string))
	require.NoError(e.t, err)
	return u.Query().Get("code"), link
}

// redeem redeems a portal code as the console does.
func (e *env) redeem(code string) response {
	e.t.Helper()
	return e.do("POST", "/portal-links/redeem", "", map[string]any{"code": code})
}

// portalToken is the token of a portal session for tags, made with token.
func (e *env) portalToken(token string, tags ...string) string {
	e.t.Helper()
	code, _ := e.portalLink(token, map[string]any{"tags": tags})
	res := e.redeem(code)
	require.Equal(e.t, http.StatusOK, res.Status, "redeem: %s", res.Body)
	return res.object(e.t)["token"].(string)
}

// A link for customer-42 points under the public URL, signs in once (the
// second redeem is refused, and of redeems at once exactly one wins), and
// the session's token is listed as a portal token expiring with the link.
func TestPortalLinkRedeemsOnce(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open, withOptions(func(o *Options) { o.PublicURL = testPublicURL + "/" }))
			before := time.Now().UTC().Truncate(time.Second)
			code, link := e.portalLink(e.master, map[string]any{"tags": []string{"customer-42"},
				"return_url": "https://app.example.com/settings/webhooks"})
			require.True(t, strings.HasPrefix(link["url"].(string), testPublicURL+"/portal/login?code=qpl_"),
				"the link opens the portal under the public URL: %s", link["url"])
			require.GreaterOrEqual(t, len(code), len("qpl_")+43, "256 random bits")
			expires, err := time.Parse(time.RFC3339, link["expires_at"].(string))
			require.NoError(t, err)
			require.WithinDuration(t, before.Add(time.Hour), expires, 5*time.Second, "an hour by default")

			res := e.redeem(code)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			session := res.object(t)
			require.Equal(t, []any{"customer-42"}, session["tags"])
			require.Equal(t, "https://app.example.com/settings/webhooks", session["return_url"])
			require.Equal(t, link["expires_at"], session["expires_at"])

			again := e.redeem(code)
			refused(t, again, http.StatusNotFound, "code", "already used or has expired")
			require.NotContains(t, string(again.Body), code, "the answer does not echo the code")

			var tokens []map[string]any
			res = e.do("GET", "/tokens", e.master, nil)
			require.Equal(t, http.StatusOK, res.Status)
			res.json(t, &tokens)
			var portal []map[string]any
			for _, tok := range tokens {
				if tok["access"] == "portal" {
					portal = append(portal, tok)
				}
			}
			require.Len(t, portal, 1, "one session per link: %s", res.Body)
			require.Equal(t, "portal:customer-42", portal[0]["sub"])
			require.Equal(t, []any{"customer-42"}, portal[0]["scope"])
			require.Equal(t, link["expires_at"], portal[0]["expires_at"])

			// Redeems at once: the link signs in exactly once.
			code, _ = e.portalLink(e.master, map[string]any{"tags": []string{"customer-42"}})
			var wg sync.WaitGroup
			statuses := make([]int, 8)
			for i := range statuses {
				wg.Add(1)
				go func() {
					defer wg.Done()
					statuses[i] = e.withT(t).redeem(code).Status
				}()
			}
			wg.Wait()
			ok := 0
			for _, s := range statuses {
				require.Contains(t, []int{http.StatusOK, http.StatusNotFound}, s)
				if s == http.StatusOK {
					ok++
				}
			}
			require.Equal(t, 1, ok, "statuses %v", statuses)

			refused(t, e.redeem("qpl_"+strings.Repeat("A", 43)), http.StatusNotFound, "code", "already used")
			refused(t, e.redeem("not-a-code"), http.StatusNotFound, "code", "already used")
		})
	}
}

// An expired link signs nobody in, and a session ends with its link: its
// token is refused once the link's expiry passed, or once revoked.
func TestPortalLinkExpires(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			ctx := context.Background()
			now := time.Now().UTC()
			code, err := portalCode()
			require.NoError(t, err)
			require.NoError(t, e.store.CreatePortalLink(ctx, model.PortalLink{ID: uuid.NewString(),
				CodeHash: portalCodeHash(code), Tags: []string{"customer-42"},
				ExpiresAt: now.Add(-time.Second).Truncate(time.Second), CreatedBy: "master",
				CreatedAt: now.Add(-time.Hour)}, now.Add(-time.Hour)))
			refused(t, e.redeem(code), http.StatusNotFound, "code", "has expired")

			// The store's own check, at an instant past a live link's expiry.
			code, link := e.portalLink(e.master, map[string]any{"tags": []string{"customer-42"}, "expires_in": "2m"})
			expires, err := time.Parse(time.RFC3339, link["expires_at"].(string))
			require.NoError(t, err)
			_, err = e.store.RedeemPortalLink(ctx, portalCodeHash(code), expires,
				func(model.PortalLink) (model.Token, error) {
					t.Fatal("an expired link issues no token")
					return model.Token{}, nil
				})
			require.ErrorIs(t, err, model.ErrNotFound)
			res := e.redeem(code)
			require.Equal(t, http.StatusOK, res.Status, "still live now: %s", res.Body)

			// Revoking the session's token ends the session everywhere.
			token := res.object(t)["token"].(string)
			require.Equal(t, http.StatusOK, e.do("GET", "/endpoints", token, nil).Status)
			var tokens []map[string]any
			e.do("GET", "/tokens", e.master, nil).json(t, &tokens)
			for _, tok := range tokens {
				if tok["access"] == "portal" {
					require.Equal(t, http.StatusNoContent, e.do("DELETE", "/tokens/"+tok["id"].(string), e.master, nil).Status)
				}
			}
			require.Eventually(t, func() bool { return e.do("GET", "/endpoints", token, nil).Status == http.StatusUnauthorized },
				10*time.Second, 20*time.Millisecond, "a revoked portal token is refused within the revocation cache's second")
		})
	}
}

// The session of a link for customer-42 sees and changes customer-42's
// endpoints and subscriptions and nothing of customer-43's, reads the
// topics, and is refused everything that is not the portal's: events,
// tokens, notification channels, statistics, other portal links, /ws.
func TestPortalSessionScope(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			require.Equal(t, http.StatusCreated, e.do("POST", "/topics", e.master, map[string]any{"name": "orders.created"}).Status)
			mine := e.createEndpoint(e.master, endpointBody("customer-42"))["id"].(string)
			theirs := e.createEndpoint(e.master, endpointBody("customer-43"))["id"].(string)
			sub := func(endpoint, tag string) string {
				res := e.do("POST", "/subscriptions", e.master, map[string]any{"topic": "orders.*", "endpoint_id": endpoint,
					"tags": []string{tag}})
				require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
				return res.object(t)["id"].(string)
			}
			mySub, theirSub := sub(mine, "customer-42"), sub(theirs, "customer-43")
			theirEvent := e.createEvent(e.master, eventBody("customer-43"))["id"].(string)
			myEvent := e.createEvent(e.master, eventBody("customer-42"))["id"].(string)
			portal := e.portalToken(e.master, "customer-42")

			list := func(path string) string {
				res := e.do("GET", path, portal, nil)
				require.Equal(t, http.StatusOK, res.Status, "%s: %s", path, res.Body)
				return string(res.Body)
			}
			endpoints := list("/endpoints")
			require.Contains(t, endpoints, mine)
			require.NotContains(t, endpoints, theirs)
			subs := list("/subscriptions")
			require.Contains(t, subs, mySub)
			require.NotContains(t, subs, theirSub)
			require.Contains(t, list("/topics"), "orders.created")
			occs := list("/occurrences")
			require.Contains(t, occs, myEvent, "the deliveries of customer-42's events")
			require.NotContains(t, occs, theirEvent)

			for _, path := range []string{"/endpoints/" + theirs, "/subscriptions/" + theirSub} {
				require.Equal(t, http.StatusNotFound, e.do("GET", path, portal, nil).Status, path)
				require.Equal(t, http.StatusNotFound, e.do("PATCH", path, portal, map[string]any{"description": "x"}).Status, path)
				require.Equal(t, http.StatusNotFound, e.do("DELETE", path, portal, nil).Status, path)
			}
			require.Equal(t, http.StatusNotFound, e.do("POST", "/endpoints/"+theirs+"/rotate-secret", portal, nil).Status)

			// Its own: rotate a secret, create an endpoint and a subscription.
			res := e.do("POST", "/endpoints/"+mine+"/rotate-secret", portal, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			res = e.do("POST", "/endpoints", portal, endpointBody("customer-42"))
			require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
			require.Equal(t, "portal:customer-42", res.object(t)["created_by"])
			res = e.do("POST", "/subscriptions", portal, map[string]any{"topic": "orders.created", "endpoint_id": mine,
				"tags": []string{"customer-42"}})
			require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
			refused(t, e.do("POST", "/subscriptions", portal, map[string]any{"topic": "orders.created",
				"endpoint_id": theirs, "tags": []string{"customer-42"}}), http.StatusBadRequest, "endpoint_id", "unknown endpoint")
			require.Equal(t, http.StatusForbidden, e.do("POST", "/endpoints", portal, endpointBody("customer-43")).Status)
			require.Equal(t, http.StatusForbidden, e.do("POST", "/endpoints", portal, endpointBody()).Status)

			// Nothing else.
			for _, call := range []struct{ method, path string }{
				{"GET", "/events"}, {"GET", "/events/" + myEvent}, {"POST", "/events"}, {"GET", "/tokens"},
				{"POST", "/tokens"}, {"GET", "/notification-channels"}, {"GET", "/stats"}, {"GET", "/calendars"},
				{"GET", "/concurrency-keys"}, {"POST", "/topics"}, {"POST", "/portal-links"},
				{"POST", "/occurrences/" + uuid.NewString() + "/skip"},
			} {
				res := e.do(call.method, call.path, portal, map[string]any{})
				require.Equal(t, http.StatusForbidden, res.Status, "%s %s: %s", call.method, call.path, res.Body)
			}
			c, _, err := e.dialWS(t, nil)
			require.NoError(t, err)
			c.send(map[string]any{"type": "tag-listener", "tags": []string{"customer-42"}, "token": portal})
			frame := c.mustNext(60 * time.Second)
			require.Equal(t, map[string]any{"type": "error", "message": "insufficient access"}, frame)
		})
	}
}

// POST /portal-links names the field it refuses, and a link never reaches
// wider than its maker: write access and every tag in its scope.
func TestPortalLinkRules(t *testing.T) {
	t.Parallel()
	e := newEnv(t, backends()[0].Open)
	scoped := e.mint("write", []string{"customer-42"})
	reader := e.mint("read", []string{"customer-42"})
	tags := []string{"customer-42"}
	for _, tt := range []struct {
		name   string
		token  string
		body   map[string]any
		status int
		field  string
	}{
		{"no tags", e.master, map[string]any{}, http.StatusBadRequest, "tags"},
		{"empty tags", e.master, map[string]any{"tags": []string{}}, http.StatusBadRequest, "tags"},
		{"tags not a list", e.master, map[string]any{"tags": "customer-42"}, http.StatusBadRequest, "tags"},
		{"tag with a comma", e.master, map[string]any{"tags": []string{"a,b"}}, http.StatusBadRequest, "tags"},
		{"blank tag", e.master, map[string]any{"tags": []string{" "}}, http.StatusBadRequest, "tags"},
		{"past 24 hours", e.master, map[string]any{"tags": tags, "expires_in": "25h"}, http.StatusBadRequest, "expires_in"},
		{"under a minute", e.master, map[string]any{"tags": tags, "expires_in": "30s"}, http.StatusBadRequest, "expires_in"},
		{"not a duration", e.master, map[string]any{"tags": tags, "expires_in": "soon"}, http.StatusBadRequest, "expires_in"},
		{"script URL", e.master, map[string]any{"tags": tags, "return_url": "javascript:alert(1)"}, http.StatusBadRequest, "return_url"},
		{"relative URL", e.master, map[string]any{"tags": tags, "return_url": "/settings"}, http.StatusBadRequest, "return_url"},
		{"URL with credentials", e.master, map[string]any{"tags": tags, "return_url": "https://u:p@app.example.com/"},
			http.StatusBadRequest, "return_url"},
		{"unknown field", e.master, map[string]any{"tags": tags, "scope": tags}, http.StatusBadRequest, "scope"},
		{"read token", reader, map[string]any{"tags": tags}, http.StatusForbidden, ""},
		{"a tag outside the scope", scoped, map[string]any{"tags": []string{"customer-42", "customer-43"}},
			http.StatusForbidden, ""},
		{"within the scope", scoped, map[string]any{"tags": tags, "expires_in": "24h"}, http.StatusCreated, ""},
		{"a day in days", e.master, map[string]any{"tags": tags, "expires_in": "1d"}, http.StatusCreated, ""},
		{"admin, any tags", e.mint("admin", nil), map[string]any{"tags": []string{"anyone"},
			"return_url": "http://localhost:3000/back"}, http.StatusCreated, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := e.withT(t).do("POST", "/portal-links", tt.token, tt.body)
			require.Equal(t, tt.status, res.Status, "%s", res.Body)
			if tt.field != "" {
				refusedNaming(t, res, tt.field)
			}
		})
	}
	// A portal session makes no link, even for its own tags.
	portal := e.portalToken(scoped, "customer-42")
	require.Equal(t, http.StatusForbidden, e.do("POST", "/portal-links", portal, map[string]any{"tags": tags}).Status)
}
