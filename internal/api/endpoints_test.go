package api

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository/repositorytest"
	"github.com/qhronos/qhronos/internal/secrets"
)

// endpointBody is a valid endpoint on loopback (allowed in the test env).
func endpointBody(tags ...string) map[string]any {
	if tags == nil {
		tags = []string{}
	}
	return map[string]any{"name": "billing", "url": "http://127.0.0.1:9999/hooks", "tags": tags}
}

// createEndpoint posts an endpoint and returns its decoded answer.
func (e *env) createEndpoint(token string, body map[string]any) map[string]any {
	e.t.Helper()
	res := e.do("POST", "/endpoints", token, body)
	require.Equal(e.t, http.StatusCreated, res.Status, "create endpoint: %s", res.Body)
	return res.object(e.t)
}

// testKeyPair is a self-signed client certificate and its key, PEM.
func testKeyPair(t *testing.T) (certPEM, keyPEM string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "qhronos-test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, IsCA: true, BasicConstraintsValid: true,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}))
}

// storedAuthSecrets opens the auth secrets the store holds for an endpoint.
func (e *env) storedAuthSecrets(id string) model.EndpointAuthSecrets {
	e.t.Helper()
	ep, err := e.store.GetEndpoint(context.Background(), id)
	require.NoError(e.t, err)
	box, err := secrets.NewBox(testBoxKey)
	require.NoError(e.t, err)
	plain, err := box.Open(ep.AuthSecret)
	require.NoError(e.t, err)
	var out model.EndpointAuthSecrets
	require.NoError(e.t, json.Unmarshal(plain, &out))
	return out
}

func TestEndpointCRUD(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			body := endpointBody("team-a")
			body["description"] = "the billing service"
			body["headers"] = map[string]string{"X-Team": "billing"}
			body["rate_limit"] = map[string]any{"per_second": 2.5}
			body["max_concurrency"] = 3
			body["timeout"] = "10s"
			body["circuit"] = map[string]any{"failures": 5, "cool_down": "30s"}
			body["auth"] = map[string]any{"type": "basic", "username": "qhronos", "password": "hunter2-secret"}
			created := e.createEndpoint(e.master, body)
			id, _ := created["id"].(string)
			secret, _ := created["secret"].(string)
			require.True(t, strings.HasPrefix(secret, "whsec_"), "generated secret %q", secret)
			require.Equal(t, map[string]any{"per_second": 2.5, "burst": float64(3)}, created["rate_limit"], "burst defaults to ceil(rate)")
			require.Equal(t, map[string]any{"type": "basic", "username": "qhronos"}, created["auth"])
			require.Equal(t, map[string]any{"failures": float64(5), "cool_down": "30s"}, created["circuit"])
			require.Equal(t, "10s", created["timeout"])
			require.Equal(t, "healthy", created["state"])
			health, _ := created["health"].(map[string]any)
			require.Equal(t, float64(0), health["attempts"])
			require.Nil(t, health["success_ratio"])

			res := e.do("GET", "/endpoints/"+id, e.master, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			got := res.object(t)
			require.NotContains(t, got, "secret")
			require.Equal(t, "billing", got["name"])
			etag := res.Header.Get("ETag")
			require.NotEmpty(t, etag)

			// PATCH keeps what it omits, including the write-only password
			// while the auth type stays.
			res = e.do("PATCH", "/endpoints/"+id, e.master, map[string]any{"name": "billing-eu",
				"auth": map[string]any{"type": "basic", "username": "other"}, "rate_limit": nil}, "If-Match", etag)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			got = res.object(t)
			require.Equal(t, "billing-eu", got["name"])
			require.Equal(t, "the billing service", got["description"])
			require.Nil(t, got["rate_limit"])
			require.Equal(t, float64(3), got["max_concurrency"])
			require.Equal(t, float64(2), got["version"])
			require.Equal(t, "hunter2-secret", e.storedAuthSecrets(id).Password)

			res = e.do("PATCH", "/endpoints/"+id, e.master, map[string]any{"name": "stale"}, "If-Match", etag)
			require.Equal(t, http.StatusPreconditionFailed, res.Status, "%s", res.Body)

			// Another auth type needs its own secrets.
			res = e.do("PATCH", "/endpoints/"+id, e.master, map[string]any{"auth": map[string]any{
				"type": "oauth2_client_credentials", "token_url": "http://127.0.0.1:9999/token", "client_id": "c"}})
			require.Equal(t, http.StatusBadRequest, res.Status, "%s", res.Body)
			require.Contains(t, string(res.Body), "auth.client_secret")

			res = e.do("GET", "/endpoints", e.master, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			var list []map[string]any
			res.json(t, &list)
			require.Len(t, list, 1)
			require.Equal(t, id, list[0]["id"])
			res = e.do("GET", "/endpoints?state=disabled", e.master, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			require.JSONEq(t, `[]`, string(res.Body))

			res = e.do("POST", "/endpoints/"+id+"/disable", e.master, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			got = res.object(t)
			require.Equal(t, "disabled", got["state"])
			require.Equal(t, "manual", got["disabled_reason"])
			res = e.do("GET", "/endpoints?state=disabled", e.master, nil)
			res.json(t, &list)
			require.Len(t, list, 1)

			res = e.do("POST", "/endpoints/"+id+"/rotate-secret", e.master, map[string]any{"grace": "1h"})
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			got = res.object(t)
			next, _ := got["secret"].(string)
			require.True(t, strings.HasPrefix(next, "whsec_") && next != secret, "rotated secret %q", next)
			require.NotNil(t, got["previous_secret_expires_at"])
			stored, err := e.store.GetEndpoint(context.Background(), id)
			require.NoError(t, err)
			box, err := secrets.NewBox(testBoxKey)
			require.NoError(t, err)
			signing, err := box.SigningSecrets(secrets.Sealed{Current: stored.Secret, Previous: stored.PreviousSecret,
				PreviousUntil: stored.PreviousSecretExpires}, "", time.Now())
			require.NoError(t, err)
			require.Equal(t, []string{next, secret}, signing, "both secrets sign during the grace")

			res = e.do("DELETE", "/endpoints/"+id, e.master, nil)
			require.Equal(t, http.StatusNoContent, res.Status, "%s", res.Body)
			res = e.do("GET", "/endpoints/"+id, e.master, nil)
			require.Equal(t, http.StatusNotFound, res.Status, "%s", res.Body)
		})
	}
}

func TestEndpointValidationNamesTheField(t *testing.T) {
	t.Parallel()
	e := newEnv(t, repositorytest.SQLite)
	cert, key := testKeyPair(t)
	_, otherKey := testKeyPair(t)
	with := func(k string, v any) map[string]any {
		b := endpointBody()
		if v == nil {
			delete(b, k)
		} else {
			b[k] = v
		}
		return b
	}
	for _, c := range []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"no name", with("name", nil), "name"},
		{"long name", with("name", strings.Repeat("n", 201)), "name"},
		{"no url", with("url", nil), "url"},
		{"private url", with("url", "http://10.0.0.1/hooks"), "url"},
		{"ftp url", with("url", "ftp://127.0.0.1/x"), "url"},
		{"unknown member", with("color", "red"), "color"},
		{"hop-by-hop header", with("headers", map[string]string{"Connection": "close"}), "headers.Connection"},
		{"reserved header", with("headers", map[string]string{"Webhook-Signature": "x"}), "headers.Webhook-Signature"},
		{"zero rate", with("rate_limit", map[string]any{"per_second": 0}), "rate_limit.per_second"},
		{"huge rate", with("rate_limit", map[string]any{"per_second": 100001}), "rate_limit.per_second"},
		{"zero burst", with("rate_limit", map[string]any{"per_second": 1, "burst": 0}), "rate_limit.burst"},
		{"rate unknown", with("rate_limit", map[string]any{"per_second": 1, "per_minute": 3}), "rate_limit"},
		{"concurrency", with("max_concurrency", 10001), "max_concurrency"},
		{"timeout", with("timeout", "2h"), "timeout"},
		{"bad timeout", with("timeout", "soon"), "timeout"},
		{"circuit failures", with("circuit", map[string]any{"failures": 0}), "circuit.failures"},
		{"circuit ratio", with("circuit", map[string]any{"failure_ratio": 1.5}), "circuit.failure_ratio"},
		{"circuit window", with("circuit", map[string]any{"window": "forever"}), "circuit.window"},
		{"auth type", with("auth", map[string]any{"type": "kerberos"}), "auth.type"},
		{"basic without password", with("auth", map[string]any{"type": "basic", "username": "u"}), "auth.password"},
		{"basic with token url", with("auth", map[string]any{"type": "basic", "username": "u", "password": "p",
			"token_url": "http://127.0.0.1/t"}), "auth.token_url"},
		{"oauth2 private token url", with("auth", map[string]any{"type": "oauth2_client_credentials",
			"token_url": "http://10.1.1.1/token", "client_id": "c", "client_secret": "s"}), "auth.token_url"},
		{"oauth2 without client", with("auth", map[string]any{"type": "oauth2_client_credentials",
			"token_url": "http://127.0.0.1/token", "client_secret": "s"}), "auth.client_id"},
		{"mtls garbage key", with("auth", map[string]any{"type": "mtls", "certificate": cert,
			"private_key": "not a key"}), "auth.private_key"},
		{"mtls other key", with("auth", map[string]any{"type": "mtls", "certificate": cert,
			"private_key": otherKey}), "auth.private_key"},
		{"mtls bad ca", with("auth", map[string]any{"type": "mtls", "certificate": cert, "private_key": key,
			"ca_certificate": "nope"}), "auth.ca_certificate"},
		{"authorization beside auth", func() map[string]any {
			b := with("auth", map[string]any{"type": "basic", "username": "u", "password": "p"})
			b["headers"] = map[string]string{"Authorization": "Bearer x"}
			return b
		}(), "headers.Authorization"},
		{"bad whsec", with("secret", "whsec_!!!"), "secret"},
		{"tags", with("tags", []string{" padded"}), "tags"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := e.withT(t)
			res := e.do("POST", "/endpoints", e.master, c.body)
			require.Equal(t, http.StatusBadRequest, res.Status, "%s", res.Body)
			var eb struct{ Error, Field string }
			res.json(t, &eb)
			require.True(t, strings.HasPrefix(eb.Error, c.field+": ") || eb.Field == c.field,
				"error %q (field %q) should name %s", eb.Error, eb.Field, c.field)
		})
	}
	res := e.do("GET", "/endpoints", e.master, nil)
	require.JSONEq(t, `[]`, string(res.Body), "nothing half written")

	created := e.createEndpoint(e.master, endpointBody())
	id, _ := created["id"].(string)
	res = e.do("PATCH", "/endpoints/"+id, e.master, map[string]any{"secret": "whsec_c2VjcmV0"})
	require.Equal(t, http.StatusBadRequest, res.Status, "%s", res.Body)
	require.Contains(t, string(res.Body), "rotate-secret")
	res = e.do("PATCH", "/endpoints/"+id, e.master, map[string]any{"url": nil})
	require.Equal(t, http.StatusBadRequest, res.Status, "%s", res.Body)
	res = e.do("GET", "/endpoints?state=sleepy", e.master, nil)
	require.Equal(t, http.StatusBadRequest, res.Status, "%s", res.Body)
}

// Write-only secrets — the signing secret after create, passwords, client
// secrets and private keys — appear in no answer.
func TestEndpointSecretsAreWriteOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t, repositorytest.SQLite)
	cert, key := testKeyPair(t)
	const signing, password, clientSecret = "whsec_c2lnbmluZy1zZWNyZXQtdmFsdWU=", "pa55-word-value", "client-secret-value"
	var answers []response
	send := func(method, path string, body any) map[string]any {
		res := e.do(method, path, e.master, body)
		require.Less(t, res.Status, 300, "%s %s: %s", method, path, res.Body)
		answers = append(answers, res)
		if len(res.Body) == 0 || res.Body[0] != '{' {
			return nil
		}
		return res.object(t)
	}
	b := endpointBody()
	b["secret"] = signing
	b["auth"] = map[string]any{"type": "mtls", "certificate": cert, "private_key": key}
	created := send("POST", "/endpoints", b)
	require.Equal(t, signing, created["secret"], "the create answer shows the secret it set, once")
	answers = answers[:0]
	id, _ := created["id"].(string)
	require.Equal(t, key, e.storedAuthSecrets(id).PrivateKey)
	got := send("PATCH", "/endpoints/"+id, map[string]any{"auth": map[string]any{"type": "mtls", "certificate": cert}})
	require.Equal(t, cert, got["auth"].(map[string]any)["certificate"], "certificates are public")
	require.Equal(t, key, e.storedAuthSecrets(id).PrivateKey, "an omitted key is kept")
	send("PATCH", "/endpoints/"+id, map[string]any{"auth": map[string]any{"type": "basic", "username": "u",
		"password": password}})
	send("PATCH", "/endpoints/"+id, map[string]any{"auth": map[string]any{"type": "oauth2_client_credentials",
		"token_url": "http://127.0.0.1:9999/token", "client_id": "c", "client_secret": clientSecret, "scopes": []string{"a"}}})
	require.Equal(t, model.EndpointAuthSecrets{ClientSecret: clientSecret}, e.storedAuthSecrets(id),
		"a new auth type drops the old type's secrets")
	send("GET", "/endpoints/"+id, nil)
	send("GET", "/endpoints", nil)
	send("POST", "/endpoints/"+id+"/disable", nil)
	send("POST", "/endpoints/"+id+"/enable", nil)
	for _, res := range answers {
		for _, s := range []string{signing, password, clientSecret, key, "private_key", "password", "client_secret"} {
			require.NotContains(t, string(res.Body), s, "answer leaks a write-only value: %s", res.Body)
		}
		require.NotContains(t, string(res.Body), `"secret"`, "only create and rotate-secret show the secret")
	}
}

func TestEndpointScope(t *testing.T) {
	t.Parallel()
	e := newEnv(t, repositorytest.SQLite)
	teamA := e.mint("write", []string{"team-a"})
	teamB := e.mint("write", []string{"team-b"})
	a := e.createEndpoint(teamA, endpointBody("team-a"))
	aID, _ := a["id"].(string)

	res := e.do("GET", "/endpoints/"+aID, teamB, nil)
	require.Equal(t, http.StatusNotFound, res.Status, "%s", res.Body)
	res = e.do("GET", "/endpoints", teamB, nil)
	require.JSONEq(t, `[]`, string(res.Body))
	res = e.do("POST", "/endpoints", teamB, endpointBody("team-a"))
	require.Equal(t, http.StatusForbidden, res.Status, "%s", res.Body)
	res = e.do("PATCH", "/endpoints/"+aID, teamA, map[string]any{"tags": []string{"team-b"}})
	require.Equal(t, http.StatusForbidden, res.Status, "%s", res.Body)

	// An event may name only an endpoint its creator can see.
	for _, c := range []struct{ token, id string }{{teamB, aID}, {teamA, uuid.NewString()}, {teamA, "nope"}} {
		body := eventBody("team-b")
		if c.token == teamA {
			body = eventBody("team-a")
		}
		delete(body, "webhook")
		body["action"] = map[string]any{"type": "webhook", "params": map[string]any{"endpoint_id": c.id}}
		res = e.do("POST", "/events", c.token, body)
		require.Equal(t, http.StatusBadRequest, res.Status, "%s", res.Body)
		require.Contains(t, string(res.Body), "action.params.endpoint_id")
	}
}

// eventNaming stores an event whose webhook names an endpoint, as the
// events service does once the webhook action takes endpoint_id.
func (e *env) eventNaming(endpointID, catchUp string, tags ...string) *model.Event {
	e.t.Helper()
	now := time.Now().UTC().Truncate(time.Microsecond)
	ev := &model.Event{ID: uuid.NewString(), Name: "report", StartTime: now.Add(-time.Hour), Timezone: "UTC",
		Action: model.Action{Type: "webhook", Params: json.RawMessage(`{"endpoint_id":"` + endpointID + `"}`)},
		Tags:   tags, Metadata: json.RawMessage(`{}`), CatchUp: catchUp, Status: model.EventActive, CreatedVia: "api", Version: 1, CreatedAt: now,
		UpdatedAt: now, EndpointID: &endpointID}
	require.NoError(e.t, e.store.CreateEvent(context.Background(), ev))
	return ev
}

func TestDeleteEndpointRefusedWhileEventsNameIt(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			created := e.createEndpoint(e.master, endpointBody("team-a"))
			id, _ := created["id"].(string)
			ev1, ev2 := e.eventNaming(id, "all", "team-a"), e.eventNaming(id, "all", "team-a")
			e.createEvent(e.master, eventBody("team-a")) // an inline URL

			res := e.do("GET", "/events/"+ev1.ID, e.master, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			require.Equal(t, id, res.object(t)["endpoint_id"])
			res = e.do("GET", "/events?endpoint_id="+id, e.master, nil)
			var listed []map[string]any
			res.json(t, &listed)
			require.Len(t, listed, 2)

			res = e.do("DELETE", "/endpoints/"+id, e.master, nil)
			require.Equal(t, http.StatusConflict, res.Status, "%s", res.Body)
			require.Contains(t, string(res.Body), "used by 2 events")

			require.Equal(t, http.StatusNoContent, e.do("DELETE", "/events/"+ev1.ID, e.master, nil).Status)
			res = e.do("DELETE", "/endpoints/"+id, e.master, nil)
			require.Equal(t, http.StatusConflict, res.Status, "%s", res.Body)
			require.Contains(t, string(res.Body), "used by 1 event")
			require.Equal(t, http.StatusNoContent, e.do("DELETE", "/events/"+ev2.ID, e.master, nil).Status)
			res = e.do("DELETE", "/endpoints/"+id, e.master, nil)
			require.Equal(t, http.StatusNoContent, res.Status, "%s", res.Body)
		})
	}
}

func TestEnableEndpointResumesDisabledRows(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			ctx := context.Background()
			created := e.createEndpoint(e.master, endpointBody("team-a"))
			id, _ := created["id"].(string)
			res := e.do("POST", "/endpoints/"+id+"/disable", e.master, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)

			// Within the default catch-up window (1h): 30 and 10 minutes
			// ago; outside it: a day ago.
			now := time.Now().UTC().Truncate(time.Second)
			instants := []time.Time{now.Add(-24 * time.Hour), now.Add(-30 * time.Minute), now.Add(-10 * time.Minute)}
			byMode := map[string]*model.Event{}
			for _, mode := range []string{"all", "latest", "none"} {
				ev := e.eventNaming(id, mode, "team-a")
				byMode[mode] = ev
				_, err := e.store.InsertOccurrences(ctx, ev.ID, instants, false, now)
				require.NoError(t, err)
				_, err = e.store.DB().ExecContext(ctx, e.store.DB().Rebind(`UPDATE occurrences SET status = 'failed',
					reason = ?, error_message = 'failed: its endpoint is disabled', attempt_count = 1 WHERE event_id = ?`),
					model.ReasonEndpointDisabled, ev.ID)
				require.NoError(t, err)
			}

			res = e.do("POST", "/endpoints/"+id+"/enable", e.master, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			got := res.object(t)
			require.Equal(t, float64(3), got["resumed"], "all: 2 rows, latest: 1, none: 0")
			require.Equal(t, "healthy", got["state"])
			require.Equal(t, "", got["disabled_reason"])

			want := map[string]map[time.Time]bool{"all": {instants[1]: true, instants[2]: true},
				"latest": {instants[2]: true}, "none": {}}
			for mode, ev := range byMode {
				occs, err := e.store.ListOccurrences(ctx, model.OccurrenceFilter{EventID: ev.ID, Unrestricted: true})
				require.NoError(t, err)
				require.Len(t, occs, 3)
				for _, o := range occs {
					wantStatus := model.OccurrenceFailed
					if want[mode][o.ScheduledAt] {
						wantStatus = model.OccurrencePending
					}
					if o.Status != wantStatus || o.AttemptCount != 1 {
						t.Errorf("catch_up %s row at %s: %s with %d attempts, want %s with 1", mode, o.ScheduledAt,
							o.Status, o.AttemptCount, wantStatus)
					}
				}
			}
			res = e.do("POST", "/endpoints/"+id+"/enable", e.master, nil)
			require.Equal(t, float64(0), res.object(t)["resumed"], "enabling again resumes nothing more")
		})
	}
}

// TestStoredSecretsDoNotFollowANewDestination: a PATCH that changes where
// a stored secret goes (the endpoint's url for a basic-auth password, the
// token URL and the url for an OAuth2 client secret) must carry the secret again;
// otherwise 400 names the secret and nothing changes.
func TestStoredSecretsDoNotFollowANewDestination(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			refused := func(id string, body map[string]any, field string) {
				t.Helper()
				before := e.do("GET", "/endpoints/"+id, e.master, nil)
				res := e.do("PATCH", "/endpoints/"+id, e.master, body)
				require.Equal(t, http.StatusBadRequest, res.Status, "%s", res.Body)
				require.Equal(t, field, res.object(t)["field"], "%s", res.Body)
				require.Contains(t, res.object(t)["error"], "must be given again")
				after := e.do("GET", "/endpoints/"+id, e.master, nil)
				require.Equal(t, before.Header.Get("ETag"), after.Header.Get("ETag"), "nothing was written")
			}
			accepted := func(id string, body map[string]any) {
				t.Helper()
				res := e.do("PATCH", "/endpoints/"+id, e.master, body)
				require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			}

			basic := endpointBody()
			basic["auth"] = map[string]any{"type": "basic", "username": "u", "password": "old-password"}
			id := e.createEndpoint(e.master, basic)["id"].(string)
			accepted(id, map[string]any{"name": "renamed"}) // same url: the password stays
			refused(id, map[string]any{"url": "http://127.0.0.2:9999/elsewhere"}, "auth.password")
			refused(id, map[string]any{"url": "http://127.0.0.2:9999/elsewhere",
				"auth": map[string]any{"type": "basic", "username": "u"}}, "auth.password")
			accepted(id, map[string]any{"url": "http://127.0.0.2:9999/elsewhere",
				"auth": map[string]any{"type": "basic", "username": "u", "password": "new-password"}})
			require.Equal(t, "new-password", e.storedAuthSecrets(id).Password)

			oauth := endpointBody()
			oauthAuth := func(tokenURL string, secret ...string) map[string]any {
				a := map[string]any{"type": "oauth2_client_credentials", "token_url": tokenURL, "client_id": "c"}
				if len(secret) > 0 {
					a["client_secret"] = secret[0]
				}
				return a
			}
			oauth["auth"] = oauthAuth("http://127.0.0.1:9999/token", "old-client-secret")
			id = e.createEndpoint(e.master, oauth)["id"].(string)
			accepted(id, map[string]any{"auth": oauthAuth("http://127.0.0.1:9999/token")}) // same token URL
			require.Equal(t, "old-client-secret", e.storedAuthSecrets(id).ClientSecret)
			refused(id, map[string]any{"auth": oauthAuth("http://127.0.0.2:9999/steal")}, "auth.client_secret")
			accepted(id, map[string]any{"auth": oauthAuth("http://127.0.0.2:9999/token", "new-client-secret")})
			require.Equal(t, "new-client-secret", e.storedAuthSecrets(id).ClientSecret)
			// Its bearer tokens go to the endpoint's url: moving the url
			// needs the client secret again too.
			refused(id, map[string]any{"url": "http://127.0.0.3:9999/hooks"}, "auth.client_secret")
			accepted(id, map[string]any{"url": "http://127.0.0.3:9999/hooks",
				"auth": oauthAuth("http://127.0.0.2:9999/token", "client-secret-for-new-url")})
		})
	}
}
