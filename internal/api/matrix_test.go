package api

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/auth"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository/repositorytest"
)

// The matrix: every authenticated route × every kind of credential, each
// asserting the status a client would see. Tenancy is "team-a": fixture
// events carry that tag, scoped-out tokens cover only "team-b".
const (
	matrixTag      = "team-a"
	matrixOtherTag = "team-b"
)

// withT returns a copy of the env that reports to t, so parallel subtests
// (and fuzz iterations) fail themselves rather than their parent.
func (e *env) withT(t testing.TB) *env {
	c := *e
	c.t = t
	return &c
}

// mintToken mints through the API and returns the JWT and its id.
func (e *env) mintToken(access string, scope []string) (token, id string) {
	e.t.Helper()
	res := e.do("POST", "/tokens", e.master, map[string]any{"sub": "matrix-" + access, "access": access,
		"scope": scope, "expires_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
	require.Equal(e.t, http.StatusOK, res.Status, "mint: %s", res.Body)
	var out struct{ Token, ID string }
	res.json(e.t, &out)
	return out.Token, out.ID
}

// claimsFor are the claims Mint would put in a JWT for row.
func claimsFor(row model.Token) jwt.MapClaims {
	now := time.Now()
	return jwt.MapClaims{"iss": auth.DefaultIssuer, "aud": []string{auth.DefaultAudience}, "sub": row.Subject,
		"exp": row.ExpiresAt.Unix(), "iat": now.Unix(), "nbf": now.Unix(), "jti": row.ID,
		"access": string(row.Access), "scope": row.Scope}
}

// credential is one way a client may call: a bearer (possibly empty) and what
// it is entitled to. level "" means it must be refused as unauthenticated.
type credential struct {
	name      string
	token     string
	level     model.Access
	scopedOut bool   // a valid write token whose scope misses the fixture's tag
	reason    string // what a refused credential's error says
	// portal is a portal session's token (a redeemed link for the
	// fixture's tag): a scoped write token on the portal's routes, refused
	// (403) on every other.
	portal bool
}

// credentials builds the ten credentials of the matrix on e, realistically:
// the expired token is a stored row signed with the test keyring whose expiry
// has passed, the revoked one was minted and then revoked through the API, and
// the wrong-algorithm ones carry the claims of a real, valid admin token.
func credentials(t testing.TB, e *env) []credential {
	t.Helper()
	ctx := context.Background()

	// Expired: a row whose expiry has passed, signed as Mint would have done
	// when it was still in the future.
	past := time.Now().Add(-2 * time.Hour)
	expiredRow := model.Token{ID: uuid.NewString(), Subject: "matrix-expired", Access: model.AccessAdmin,
		Scope: []string{}, ExpiresAt: time.Now().Add(-time.Hour).UTC().Truncate(time.Second), CreatedBy: "master",
		CreatedAt: past.UTC()}
	pastAuth := auth.NewAuthenticator(auth.Config{Keys: e.keys}, e.store, func() time.Time { return past })
	expired, err := pastAuth.Mint(expiredRow)
	require.NoError(t, err)
	require.NoError(t, e.store.CreateToken(ctx, expiredRow))

	revoked, revokedID := e.mintToken("admin", nil)
	res := e.do("DELETE", "/tokens/"+revokedID, e.master, nil)
	require.Equal(t, http.StatusNoContent, res.Status, "revoke: %s", res.Body)

	// Wrong algorithms, on the claims of a real admin token.
	_, adminID := e.mintToken("admin", nil)
	adminRow, err := e.store.TokenByID(ctx, adminID)
	require.NoError(t, err)
	none := jwt.NewWithClaims(jwt.SigningMethodNone, claimsFor(adminRow))
	none.Header["kid"] = e.keys.Current
	algNone, err := none.SignedString(jwt.UnsafeAllowNoneSignatureType)
	require.NoError(t, err)
	hs512 := jwt.NewWithClaims(jwt.SigningMethodHS512, claimsFor(adminRow))
	hs512.Header["kid"] = e.keys.Current
	algHS512, err := hs512.SignedString([]byte(testJWTSecret))
	require.NoError(t, err)

	read, _ := e.mintToken("read", []string{matrixTag})
	write, _ := e.mintToken("write", []string{matrixTag, "team-c"})
	admin, _ := e.mintToken("admin", nil)
	scopedIn, _ := e.mintToken("write", []string{matrixTag})
	scopedOut, _ := e.mintToken("write", []string{matrixOtherTag})
	portal := e.portalToken(e.master, matrixTag)
	return []credential{
		{name: "no token"},
		{name: "garbage", token: "not-a-jwt.at-all"},
		{name: "expired jwt", token: expired, reason: "token expired"},
		{name: "revoked jwt", token: revoked, reason: "token revoked"},
		{name: "alg none", token: algNone, reason: "invalid token"},
		{name: "alg HS512", token: algHS512, reason: "invalid token"},
		{name: "read", token: read, level: model.AccessRead},
		{name: "write", token: write, level: model.AccessWrite},
		{name: "admin", token: admin, level: model.AccessAdmin},
		{name: "scoped-in", token: scopedIn, level: model.AccessWrite},
		{name: "scoped-out", token: scopedOut, level: model.AccessWrite, scopedOut: true},
		{name: "portal", token: portal, level: model.AccessWrite, portal: true},
	}
}

// fixture is a fresh event (tagged team-a, created by the master token), its
// first occurrence, a fresh token and a fresh calendar (tagged team-a), so
// destructive routes can succeed.
type fixture struct {
	event, occurrence, token, calendar, endpoint string
	// concurrencyKey is the fixture event's own concurrency key.
	concurrencyKey string
	// topic is a fresh topic; subscription (tagged team-a) names a pattern
	// of topics and delivers to an endpoint of its own.
	topic, subscription string
}

func newFixture(e *env) fixture {
	e.t.Helper()
	body := eventBody(matrixTag)
	key := "mx-" + uuid.NewString()
	body["concurrency"] = map[string]any{"key": key, "limit": 3}
	ev := e.createEvent(e.master, body)
	id, _ := ev["id"].(string)
	res := e.do("GET", "/events/"+id+"/occurrences", e.master, nil)
	require.Equal(e.t, http.StatusOK, res.Status, "occurrences: %s", res.Body)
	var occs []struct{ ID string }
	res.json(e.t, &occs)
	require.NotEmpty(e.t, occs, "a one-time event has its occurrence row before the answer")
	_, tokenID := e.mintToken("read", []string{matrixTag})
	res = e.do("POST", "/calendars", e.master, calendarBody(matrixTag))
	require.Equal(e.t, http.StatusCreated, res.Status, "calendar: %s", res.Body)
	calendarID, _ := res.object(e.t)["id"].(string)
	res = e.do("POST", "/endpoints", e.master, endpointBody(matrixTag))
	require.Equal(e.t, http.StatusCreated, res.Status, "endpoint: %s", res.Body)
	endpointID, _ := res.object(e.t)["id"].(string)
	topic := "mx." + strings.ReplaceAll(uuid.NewString(), "-", "")
	res = e.do("POST", "/topics", e.master, map[string]any{"name": topic})
	require.Equal(e.t, http.StatusCreated, res.Status, "topic: %s", res.Body)
	res = e.do("POST", "/endpoints", e.master, endpointBody(matrixTag))
	require.Equal(e.t, http.StatusCreated, res.Status, "endpoint: %s", res.Body)
	subEndpoint, _ := res.object(e.t)["id"].(string)
	res = e.do("POST", "/subscriptions", e.master, map[string]any{"topic": "mx.*", "endpoint_id": subEndpoint,
		"tags": []string{matrixTag}})
	require.Equal(e.t, http.StatusCreated, res.Status, "subscription: %s", res.Body)
	subscriptionID, _ := res.object(e.t)["id"].(string)
	return fixture{event: id, occurrence: occs[0].ID, token: tokenID, calendar: calendarID, endpoint: endpointID,
		concurrencyKey: key, topic: topic, subscription: subscriptionID}
}

// matrixRoute is one authenticated route and what it answers when allowed.
type matrixRoute struct {
	method, path string
	level        model.Access
	names        bool // names an event or occurrence: invisible ones are 404
	list         bool // lists events or occurrences: scoped-out sees none of the fixture
	portal       bool // open to portal sessions (openToPortal)
	ok           int
	body         func(f fixture) any
}

func (r matrixRoute) url(f fixture) string {
	return strings.NewReplacer("{event}", f.event, "{occurrence}", f.occurrence, "{token}", f.token,
		"{at}", "2031-01-01T00:00:00Z", "{calendar}", f.calendar, "{endpoint}", f.endpoint,
		"{channel}", matrixNoChannel, "{key}", "k-"+f.event, "{ckey}", f.concurrencyKey, "{topic}", f.topic,
		"{subscription}", f.subscription,
		// A cursor just before the fixture's key: the list is in key order
		// and the run's hundreds of fixtures each add a random key, so its
		// first page would hold the fixture's only by chance.
		"{ckeycursor}", keyCursor(f.concurrencyKey[:len(f.concurrencyKey)-1])).Replace(r.path)
}

func matrixRoutes() []matrixRoute {
	future := func() string { return time.Now().Add(time.Hour).UTC().Format(time.RFC3339) }
	return []matrixRoute{
		{method: "POST", path: "/events", level: model.AccessWrite, ok: http.StatusCreated,
			body: func(fixture) any { return eventBody(matrixTag) }},
		// A key of the fixture's own (a fresh one per case): an allowed PUT
		// creates (201); DELETE of a key nobody used is 404 once allowed.
		{method: "PUT", path: "/events/by-key/{key}", level: model.AccessWrite, ok: http.StatusCreated,
			body: func(fixture) any { return eventBody(matrixTag) }},
		{method: "DELETE", path: "/events/by-key/{key}", level: model.AccessWrite, ok: http.StatusNotFound},
		// A batch answers 200 with each item's own status (an item outside
		// the token's scope is refused inside the answer, not by the route).
		{method: "POST", path: "/events/batch", level: model.AccessWrite, ok: http.StatusOK,
			body: func(fixture) any { return map[string]any{"events": []any{eventBody(matrixTag)}} }},
		{method: "GET", path: "/events?limit=500", level: model.AccessRead, list: true, ok: http.StatusOK},
		{method: "GET", path: "/events/{event}", level: model.AccessRead, names: true, ok: http.StatusOK},
		{method: "PUT", path: "/events/{event}", level: model.AccessWrite, names: true, ok: http.StatusOK,
			body: func(fixture) any { return map[string]any{"name": "renamed"} }},
		{method: "DELETE", path: "/events/{event}", level: model.AccessWrite, names: true, ok: http.StatusNoContent},
		{method: "POST", path: "/events/{event}/pause", level: model.AccessWrite, names: true, ok: http.StatusOK},
		{method: "POST", path: "/events/{event}/resume", level: model.AccessWrite, names: true, ok: http.StatusOK},
		{method: "POST", path: "/events/{event}/trigger", level: model.AccessWrite, names: true, ok: http.StatusCreated},
		// The fixture's event is one-time: an allowed backfill reaches the
		// service and is refused there (409), a refused one never does.
		{method: "POST", path: "/events/{event}/backfill", level: model.AccessWrite, names: true, ok: http.StatusConflict,
			body: func(fixture) any {
				day := time.Now().Add(-24 * time.Hour).UTC().Format(time.RFC3339)
				return map[string]any{"from": day, "to": day}
			}},
		{method: "POST", path: "/events/{event}/rotate-secret", level: model.AccessWrite, names: true,
			ok: http.StatusOK, body: func(fixture) any { return map[string]any{"grace": "1h"} }},
		{method: "GET", path: "/events/{event}/occurrences", level: model.AccessRead, names: true, ok: http.StatusOK},
		{method: "GET", path: "/events/{event}/preview", level: model.AccessRead, names: true, ok: http.StatusOK},
		{method: "GET", path: "/events/{event}/history", level: model.AccessRead, names: true, ok: http.StatusOK},
		{method: "POST", path: "/schedules/preview", level: model.AccessRead, ok: http.StatusOK,
			body: func(fixture) any {
				return map[string]any{"rrule": "FREQ=DAILY", "start_time": future(), "count": 3}
			}},
		{method: "POST", path: "/calendars", level: model.AccessWrite, ok: http.StatusCreated,
			body: func(fixture) any { return calendarBody(matrixTag) }},
		{method: "GET", path: "/calendars?limit=500", level: model.AccessRead, list: true, ok: http.StatusOK},
		{method: "GET", path: "/calendars/{calendar}", level: model.AccessRead, names: true, ok: http.StatusOK},
		{method: "PUT", path: "/calendars/{calendar}", level: model.AccessWrite, names: true, ok: http.StatusOK,
			body: func(fixture) any { return calendarBody(matrixTag) }},
		{method: "DELETE", path: "/calendars/{calendar}", level: model.AccessWrite, names: true,
			ok: http.StatusNoContent},
		{method: "POST", path: "/endpoints", portal: true, level: model.AccessWrite, ok: http.StatusCreated,
			body: func(fixture) any { return endpointBody(matrixTag) }},
		{method: "GET", path: "/endpoints?limit=500", portal: true, level: model.AccessRead, list: true, ok: http.StatusOK},
		{method: "GET", path: "/endpoints/{endpoint}", portal: true, level: model.AccessRead, names: true, ok: http.StatusOK},
		{method: "PATCH", path: "/endpoints/{endpoint}", portal: true, level: model.AccessWrite, names: true, ok: http.StatusOK,
			body: func(fixture) any { return map[string]any{"name": "renamed"} }},
		{method: "DELETE", path: "/endpoints/{endpoint}", portal: true, level: model.AccessWrite, names: true,
			ok: http.StatusNoContent},
		{method: "POST", path: "/endpoints/{endpoint}/enable", portal: true, level: model.AccessWrite, names: true, ok: http.StatusOK},
		{method: "POST", path: "/endpoints/{endpoint}/disable", portal: true, level: model.AccessWrite, names: true, ok: http.StatusOK},
		{method: "POST", path: "/endpoints/{endpoint}/test", portal: true, level: model.AccessWrite, names: true, ok: http.StatusOK},
		{method: "GET", path: "/endpoints/{endpoint}/circuit-history", portal: true, level: model.AccessRead, names: true,
			ok: http.StatusOK},
		{method: "POST", path: "/endpoints/{endpoint}/rotate-secret", portal: true, level: model.AccessWrite, names: true,
			ok: http.StatusOK, body: func(fixture) any { return map[string]any{"grace": "1h"} }},
		{method: "GET", path: "/occurrences?event_id={event}", portal: true, level: model.AccessRead, list: true, ok: http.StatusOK},
		{method: "GET", path: "/occurrences/{occurrence}", portal: true, level: model.AccessRead, names: true, ok: http.StatusOK},
		{method: "GET", path: "/occurrences/{occurrence}/attempts", portal: true, level: model.AccessRead, names: true,
			ok: http.StatusOK},
		// The fixture's event runs an action: its occurrence has no fan-out.
		{method: "GET", path: "/occurrences/{occurrence}/deliveries", portal: true, level: model.AccessRead, names: true,
			ok: http.StatusOK},
		// The fixture's event names a key of its own: only who sees the
		// event sees the key, and only who may modify it pauses it.
		{method: "GET", path: "/concurrency-keys?limit=10&cursor={ckeycursor}", level: model.AccessRead, list: true,
			ok: http.StatusOK},
		{method: "GET", path: "/concurrency-keys/{ckey}", level: model.AccessRead, names: true, ok: http.StatusOK},
		{method: "POST", path: "/concurrency-keys/{ckey}/pause", level: model.AccessWrite, names: true, ok: http.StatusOK},
		{method: "POST", path: "/concurrency-keys/{ckey}/resume", level: model.AccessWrite, names: true, ok: http.StatusOK},
		// Topics are a catalogue every token reads and only admins change.
		{method: "POST", path: "/topics", level: model.AccessAdmin, ok: http.StatusCreated,
			body: func(fixture) any { return map[string]any{"name": "mx.new-" + uuid.NewString()} }},
		{method: "GET", path: "/topics?limit=500", portal: true, level: model.AccessRead, ok: http.StatusOK},
		{method: "GET", path: "/topics/{topic}", portal: true, level: model.AccessRead, ok: http.StatusOK},
		{method: "PATCH", path: "/topics/{topic}", level: model.AccessAdmin, ok: http.StatusOK,
			body: func(fixture) any { return map[string]any{"description": "changed"} }},
		{method: "DELETE", path: "/topics/{topic}", level: model.AccessAdmin, ok: http.StatusNoContent},
		{method: "POST", path: "/subscriptions", portal: true, level: model.AccessWrite, ok: http.StatusCreated,
			body: func(f fixture) any {
				return map[string]any{"topic": f.topic, "endpoint_id": f.endpoint, "tags": []string{matrixTag}}
			}},
		{method: "GET", path: "/subscriptions?limit=500", portal: true, level: model.AccessRead, list: true, ok: http.StatusOK},
		{method: "GET", path: "/subscriptions/{subscription}", portal: true, level: model.AccessRead, names: true, ok: http.StatusOK},
		{method: "GET", path: "/subscriptions/{subscription}/deliveries", portal: true, level: model.AccessRead, names: true,
			ok: http.StatusOK},
		{method: "PATCH", path: "/subscriptions/{subscription}", portal: true, level: model.AccessWrite, names: true,
			ok: http.StatusOK, body: func(fixture) any { return map[string]any{"paused": true} }},
		{method: "DELETE", path: "/subscriptions/{subscription}", portal: true, level: model.AccessWrite, names: true,
			ok: http.StatusNoContent},
		{method: "GET", path: "/stats", level: model.AccessRead, ok: http.StatusOK},
		{method: "GET", path: "/stats/timeline", level: model.AccessRead, ok: http.StatusOK},
		{method: "GET", path: "/stats/punctuality", level: model.AccessRead, ok: http.StatusOK},
		// The fixture's occurrence is pending, so an allowed retry is refused
		// for its state (409), after the access and scope checks passed.
		// The fixture's event completes by response: an allowed report
		// reaches the service and is refused there (409). A run token is
		// the other credential these take (runs_test.go).
		{method: "POST", path: "/occurrences/{occurrence}/complete", level: model.AccessWrite, names: true,
			ok: http.StatusConflict, body: func(fixture) any { return map[string]any{"status": "succeeded"} }},
		{method: "POST", path: "/occurrences/{occurrence}/heartbeat", level: model.AccessWrite, names: true,
			ok: http.StatusConflict},
		{method: "POST", path: "/occurrences/{occurrence}/retry", portal: true, level: model.AccessWrite, names: true,
			ok: http.StatusConflict},
		{method: "POST", path: "/occurrences/retry", portal: true, level: model.AccessWrite, ok: http.StatusOK,
			body: func(f fixture) any { return map[string]any{"event_id": f.event} }},
		{method: "POST", path: "/occurrences/{occurrence}/skip", level: model.AccessWrite, names: true,
			ok: http.StatusOK},
		// A pending occurrence cannot be unskipped (409) once access and scope passed.
		{method: "POST", path: "/occurrences/{occurrence}/unskip", level: model.AccessWrite, names: true,
			ok: http.StatusConflict},
		{method: "POST", path: "/occurrences/{occurrence}/move", level: model.AccessWrite, names: true,
			ok: http.StatusOK, body: func(fixture) any {
				return map[string]any{"to": time.Now().Add(2 * time.Hour).UTC().Format(time.RFC3339)}
			}},
		{method: "GET", path: "/events/{event}/exceptions", level: model.AccessRead, names: true, ok: http.StatusOK},
		// Not an instant the event plans: 400 once access and scope passed.
		{method: "POST", path: "/events/{event}/exceptions", level: model.AccessWrite, names: true,
			ok: http.StatusBadRequest, body: func(fixture) any {
				return map[string]any{"at": time.Now().Add(3 * time.Hour).UTC().Format(time.RFC3339), "action": "skip"}
			}},
		{method: "DELETE", path: "/events/{event}/exceptions/{at}", level: model.AccessWrite,
			names: true, ok: http.StatusNotFound},
		{method: "POST", path: "/tokens", level: model.AccessAdmin, ok: http.StatusOK,
			body: func(fixture) any {
				return map[string]any{"sub": "minted", "access": "read", "scope": []string{matrixTag},
					"expires_at": future()}
			}},
		{method: "GET", path: "/tokens", level: model.AccessAdmin, ok: http.StatusOK},
		// A link for tags the caller may create with; a portal session may
		// not make one.
		{method: "POST", path: "/portal-links", level: model.AccessWrite, ok: http.StatusCreated,
			body: func(fixture) any { return map[string]any{"tags": []string{matrixTag}} }},
		{method: "DELETE", path: "/tokens/{token}", level: model.AccessAdmin, ok: http.StatusNoContent},
		// Notification channels are admin only; {channel} names none, so an
		// allowed request answers 404 once access passed.
		{method: "POST", path: "/notification-channels", level: model.AccessAdmin, ok: http.StatusCreated,
			body: func(fixture) any {
				return map[string]any{"name": "ops-" + uuid.NewString(), "type": "webhook",
					"url": "https://ops.example.com/hook"}
			}},
		{method: "GET", path: "/notification-channels", level: model.AccessAdmin, ok: http.StatusOK},
		{method: "GET", path: "/notification-channels/{channel}", level: model.AccessAdmin, ok: http.StatusNotFound},
		{method: "PATCH", path: "/notification-channels/{channel}", level: model.AccessAdmin, ok: http.StatusNotFound,
			body: func(fixture) any { return map[string]any{"name": "renamed"} }},
		{method: "DELETE", path: "/notification-channels/{channel}", level: model.AccessAdmin, ok: http.StatusNotFound},
		{method: "POST", path: "/notification-channels/{channel}/test", level: model.AccessAdmin,
			ok: http.StatusNotFound},
		{method: "GET", path: "/notification-channels/{channel}/notices", level: model.AccessAdmin,
			ok: http.StatusNotFound},
	}
}

// matrixNoChannel is a notification channel id that names no channel.
const matrixNoChannel = "00000000-0000-4000-8000-000000000000"

var accessRank = map[model.Access]int{model.AccessRead: 1, model.AccessWrite: 2,
	model.AccessAdmin: 3}

// want is the documented answer of route r to credential c.
func (r matrixRoute) want(c credential) int {
	switch {
	case c.level == "":
		return http.StatusUnauthorized
	case c.portal && !r.portal:
		return http.StatusForbidden
	case accessRank[c.level] < accessRank[r.level]:
		return http.StatusForbidden
	case c.scopedOut && r.names:
		return http.StatusNotFound
	case c.scopedOut && r.method == "POST" && (r.path == "/events" || r.path == "/calendars" || r.path == "/endpoints" ||
		r.path == "/subscriptions" || r.path == "/portal-links"),
		c.scopedOut && r.method == "PUT" && r.path == "/events/by-key/{key}":
		return http.StatusForbidden // tags: outside token scope
	}
	return r.ok
}

// runMatrix runs routes × credentials on e.
func runMatrix(t *testing.T, e *env, routes []matrixRoute) {
	creds := credentials(t, e)
	for _, r := range routes {
		t.Run(r.method+" "+r.path, func(t *testing.T) {
			t.Parallel()
			for _, c := range creds {
				t.Run(c.name, func(t *testing.T) {
					checkMatrixCase(t, e.withT(t), r, c)
				})
			}
		})
	}
}

func checkMatrixCase(t *testing.T, e *env, r matrixRoute, c credential) {
	f := newFixture(e)
	var body any
	if r.body != nil {
		body = r.body(f)
	}
	res := e.do(r.method, r.url(f), c.token, body)
	want := r.want(c)
	if got := res.Status; got != want {
		t.Fatalf("status: got %d, want %d (body %s)", got, want, res.Body)
	}
	if want >= 400 {
		var eb struct {
			Error *string `json:"error"`
		}
		res.json(t, &eb)
		if eb.Error == nil || *eb.Error == "" {
			t.Fatalf("error body: got %s, want {\"error\": …}", res.Body)
		}
		if want == http.StatusUnauthorized && !strings.Contains(*eb.Error, c.reason) {
			t.Errorf("error: got %q, want it to say %q", *eb.Error, c.reason)
		}
		if want == http.StatusUnauthorized && c.token != "" && strings.Contains(string(res.Body), c.token) {
			t.Errorf("401 body echoes the bearer token")
		}
		if want == http.StatusNotFound || want == http.StatusForbidden {
			assertFixtureUntouched(t, e, f)
		}
		return
	}
	if r.list {
		if got, want := listMentions(res.Body, f), !c.scopedOut; got != want {
			t.Errorf("fixture listed: got %v, want %v (body %.300s)", got, want, res.Body)
		}
	}
}

// listMentions reports whether a list answer includes the fixture's event or
// occurrence.
func listMentions(body []byte, f fixture) bool {
	return strings.Contains(string(body), f.event) || strings.Contains(string(body), f.occurrence) ||
		strings.Contains(string(body), f.calendar) || strings.Contains(string(body), f.endpoint) ||
		strings.Contains(string(body), f.concurrencyKey) || strings.Contains(string(body), f.subscription)
}

// assertFixtureUntouched checks that a refused request changed nothing a user
// would see: the event is still active, unrenamed, at version 1.
func assertFixtureUntouched(t *testing.T, e *env, f fixture) {
	t.Helper()
	res := e.do("GET", "/events/"+f.event, e.master, nil)
	require.Equal(t, http.StatusOK, res.Status, "a refused request must not delete the event: %s", res.Body)
	ev := res.object(t)
	if got, want := ev["status"], "active"; got != want {
		t.Errorf("status after refused request: got %v, want %v", got, want)
	}
	if got, want := ev["version"], float64(1); got != want {
		t.Errorf("version after refused request: got %v, want %v", got, want)
	}
	if got, want := ev["hmac_secret_set"], false; got != want {
		t.Errorf("hmac_secret_set after refused request: got %v, want %v", got, want)
	}
	res = e.do("GET", "/endpoints/"+f.endpoint, e.master, nil)
	require.Equal(t, http.StatusOK, res.Status, "a refused request must not delete the endpoint: %s", res.Body)
	ep := res.object(t)
	if ep["version"] != float64(1) || ep["state"] != "healthy" {
		t.Errorf("endpoint after refused request: version %v state %v, want 1 healthy", ep["version"], ep["state"])
	}
}

// TestAuthMatrixCoversEveryRoute fails when a route is added without a row in
// the matrix (public routes and the WebSocket endpoint have their own tests).
func TestAuthMatrixCoversEveryRoute(t *testing.T) {
	t.Parallel()
	e := newEnv(t, repositorytest.SQLite)
	public := map[string]bool{"GET /health": true, "GET /healthz": true, "GET /ready": true, "GET /status": true,
		"GET /openapi.json": true, "GET /ws": true, "GET /metrics": true, "POST /portal-links/redeem": true}
	covered := map[string]bool{}
	for _, r := range matrixRoutes() {
		path, _, _ := strings.Cut(r.path, "?")
		path = strings.NewReplacer("{event}", ":id", "{occurrence}", ":id", "{token}", ":id", "{at}", ":at",
			"{calendar}", ":id", "{endpoint}", ":id", "{channel}", ":id", "{key}", ":key", "{ckey}", ":key",
			"{topic}", ":name", "{subscription}", ":id").Replace(path)
		covered[r.method+" "+path] = true
	}
	for _, r := range e.srv.engine.Routes() {
		if key := r.Method + " " + r.Path; !public[key] && !covered[key] {
			t.Errorf("route %s is not in the auth matrix", key)
		}
	}
}

func TestAuthMatrixSQLite(t *testing.T) {
	t.Parallel()
	e := newEnv(t, repositorytest.SQLite)
	runMatrix(t, e, matrixRoutes())
}

// TestAuthMatrixPostgres runs a reduced matrix (one route of each kind) on
// PostgreSQL: the checks live above the store, the visibility queries below.
func TestAuthMatrixPostgres(t *testing.T) {
	t.Parallel()
	e := newEnv(t, repositorytest.Postgres)
	keep := []string{"POST /events", "GET /events?limit=500", "GET /events/{event}", "DELETE /events/{event}",
		"POST /events/{event}/trigger", "GET /occurrences?event_id={event}", "GET /occurrences/{occurrence}",
		"POST /tokens"}
	var routes []matrixRoute
	for _, r := range matrixRoutes() {
		if slices.Contains(keep, r.method+" "+r.path) {
			routes = append(routes, r)
		}
	}
	require.Len(t, routes, len(keep))
	runMatrix(t, e, routes)
}

// TestPublicRoutes: the public routes answer without a token, and /status
// reveals no secret and no tenant data.
func TestPublicRoutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, repositorytest.SQLite)
	secretTag, secretName := "tenant-zebra-42", "payroll-run-for-acme"
	body := eventBody(secretTag)
	body["name"] = secretName
	body["metadata"] = map[string]any{"customer": "acme-metadata-marker"}
	body["hmac_secret"] = "hmac-secret-marker-0123456789"
	e.createEvent(e.master, body)
	jwtToken := e.mint("admin", nil)

	for _, path := range []string{"/health", "/healthz", "/ready", "/status", "/openapi.json"} {
		t.Run(path, func(t *testing.T) {
			res := e.withT(t).do("GET", path, "", nil)
			if got, want := res.Status, http.StatusOK; got != want {
				t.Fatalf("status: got %d, want %d (body %s)", got, want, res.Body)
			}
		})
	}
	res := e.do("GET", "/status", "", nil)
	require.Equal(t, http.StatusOK, res.Status)
	for _, secret := range []string{testMaster, testJWTSecret, testBoxKey, jwtToken, secretTag, secretName,
		"acme-metadata-marker", "hmac-secret-marker-0123456789", "127.0.0.1:9"} {
		if strings.Contains(string(res.Body), secret) {
			t.Errorf("/status reveals %q: %s", secret, res.Body)
		}
	}
}

// TestMintRules: a token can never be minted wider than its minter, and a bad
// request names its field.
func TestMintRules(t *testing.T) {
	t.Parallel()
	e := newEnv(t, repositorytest.SQLite)
	future := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	write := e.mint("write", []string{matrixTag})
	read := e.mint("read", []string{matrixTag})
	admin := e.mint("admin", nil)
	tests := []struct {
		name      string
		token     string
		body      map[string]any
		status    int
		wantField string
	}{
		{"write mints admin", write, map[string]any{"sub": "x", "access": "admin", "expires_at": future},
			http.StatusForbidden, ""},
		{"write mints write", write, map[string]any{"sub": "x", "access": "write", "scope": []string{matrixTag},
			"expires_at": future}, http.StatusForbidden, ""},
		{"read mints read", read, map[string]any{"sub": "x", "access": "read", "scope": []string{matrixTag},
			"expires_at": future}, http.StatusForbidden, ""},
		{"expires in the past", admin, map[string]any{"sub": "x", "access": "read",
			"expires_at": time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)}, http.StatusBadRequest, "expires_at"},
		// "tomorrow" is an instant now, as for every other instant field.
		{"expires malformed", admin, map[string]any{"sub": "x", "access": "read", "expires_at": "some day"},
			http.StatusBadRequest, "expires_at"},
		{"unknown access", admin, map[string]any{"sub": "x", "access": "superuser", "expires_at": future},
			http.StatusBadRequest, "access"},
		{"missing sub", admin, map[string]any{"access": "read", "expires_at": future}, http.StatusBadRequest, "sub"},
		{"unknown field", admin, map[string]any{"sub": "x", "access": "read", "expires_at": future, "root": true},
			http.StatusBadRequest, "root"},
		{"admin mints admin", admin, map[string]any{"sub": "x", "access": "admin", "expires_at": future},
			http.StatusOK, ""},
		{"read_write alias", admin, map[string]any{"sub": "x", "access": "read_write", "scope": []string{matrixTag},
			"expires_at": future}, http.StatusOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := e.withT(t).do("POST", "/tokens", tt.token, tt.body)
			if got, want := res.Status, tt.status; got != want {
				t.Fatalf("status: got %d, want %d (body %s)", got, want, res.Body)
			}
			if tt.wantField != "" {
				m := res.object(t)
				if got, want := m["field"], tt.wantField; got != want {
					t.Errorf("field: got %v, want %v (body %s)", got, want, res.Body)
				}
				if msg, _ := m["error"].(string); !strings.HasPrefix(msg, tt.wantField+":") {
					t.Errorf("error: got %q, want it to start with %q", msg, tt.wantField+":")
				}
			}
		})
	}
	// The minted alias is stored as write.
	res := e.do("GET", "/tokens", admin, nil)
	require.Equal(t, http.StatusOK, res.Status)
	if !strings.Contains(string(res.Body), `"access":"write"`) {
		t.Errorf("read_write should be stored as write: %s", res.Body)
	}
}
