package api

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// refusedNaming asserts a 400 whose field is field and whose message names
// it first.
func refusedNaming(t *testing.T, res response, field string) {
	t.Helper()
	require.Equal(t, http.StatusBadRequest, res.Status, "%s", res.Body)
	var body struct{ Error, Field string }
	res.json(t, &body)
	require.Equal(t, field, body.Field, "error %q", body.Error)
	require.True(t, strings.HasPrefix(body.Error, field+": "), "error %q names its field", body.Error)
}

// TestOAuth2ClientSecretDoesNotFollowANewURL: an OAuth2 endpoint's bearer
// tokens go to its url, so a PATCH moving the url must carry
// auth.client_secret again, as a basic-auth password must. It used to
// answer 200 and send tokens minted with the stored secret to the new url.
func TestOAuth2ClientSecretDoesNotFollowANewURL(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			// The token server mints a token naming the secret it was paid with.
			tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, secret, ok := r.BasicAuth()
				if !ok {
					_ = r.ParseForm()
					secret = r.PostForm.Get("client_secret")
				}
				w.Header().Set("Content-Type", "application/json")
				_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "minted-with-" + secret,
					"token_type": "Bearer", "expires_in": 3600})
			}))
			t.Cleanup(tokens.Close)
			authorizations := make(chan string, 4)
			receiver := func() *httptest.Server {
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					_, _ = io.Copy(io.Discard, r.Body)
					authorizations <- r.Host + " " + r.Header.Get("Authorization")
				}))
				t.Cleanup(srv.Close)
				return srv
			}
			oldRcv, newRcv := receiver(), receiver()
			oauth := func(secret ...string) map[string]any {
				a := map[string]any{"type": "oauth2_client_credentials", "token_url": tokens.URL + "/token", "client_id": "c"}
				if len(secret) > 0 {
					a["client_secret"] = secret[0]
				}
				return a
			}
			body := endpointBody()
			body["url"], body["auth"] = oldRcv.URL+"/hooks", oauth("stored-client-secret")
			id := e.createEndpoint(e.master, body)["id"].(string)
			before := e.do("GET", "/endpoints/"+id, e.master, nil)

			for _, patch := range []map[string]any{
				{"url": newRcv.URL + "/hooks"},
				{"url": newRcv.URL + "/hooks", "auth": oauth()},
			} {
				res := e.do("PATCH", "/endpoints/"+id, e.master, patch)
				refusedNaming(t, res, "auth.client_secret")
				require.Contains(t, res.object(t)["error"], "must be given again: url changed")
				after := e.do("GET", "/endpoints/"+id, e.master, nil)
				require.Equal(t, before.Header.Get("ETag"), after.Header.Get("ETag"), "nothing was written")
			}
			res := e.do("POST", "/endpoints/"+id+"/test", e.master, nil)
			require.Equal(t, true, res.object(t)["delivered"], "%s", res.Body)
			require.Equal(t, strings.TrimPrefix(oldRcv.URL, "http://")+" Bearer minted-with-stored-client-secret",
				<-authorizations, "the url stayed where the secret was given")

			// Sent again, the secret goes with the new url.
			res = e.do("PATCH", "/endpoints/"+id, e.master, map[string]any{"url": newRcv.URL + "/hooks",
				"auth": oauth("client-secret-for-new-url")})
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			res = e.do("POST", "/endpoints/"+id+"/test", e.master, nil)
			require.Equal(t, true, res.object(t)["delivered"], "%s", res.Body)
			require.Equal(t, strings.TrimPrefix(newRcv.URL, "http://")+" Bearer minted-with-client-secret-for-new-url",
				<-authorizations)
		})
	}
}

// TestUnusableEncryptionKeysAreRefusedOnEvents: a key no delivery can be
// sealed to (a small-order X25519 point, an even RSA modulus, an even
// exponent) or a 100 KB kid used to be stored with 201, and every
// delivery then failed; each answers 400 naming action.params.encryption_jwk
// on create, on update and in a batch, and writes nothing.
func TestUnusableEncryptionKeysAreRefusedOnEvents(t *testing.T) {
	t.Parallel()
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	b64 := func(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
	evenN := append([]byte{}, rsaKey.N.Bytes()...)
	evenN[len(evenN)-1] &^= 1
	one := make([]byte, 32)
	one[0] = 1
	const goodX = "hSDwCYkwp1R0i33ctD73Wg2_Og0mOBr066SpjqqbTmo"
	bad := map[string]map[string]any{
		"X25519 all zeros": {"kty": "OKP", "crv": "X25519", "x": b64(make([]byte, 32))},
		"X25519 one":       {"kty": "OKP", "crv": "X25519", "x": b64(one)},
		"RSA even modulus": {"kty": "RSA", "n": b64(evenN), "e": "AQAB"},
		"RSA exponent 4":   {"kty": "RSA", "n": b64(rsaKey.N.Bytes()), "e": "BA"},
		"kid of 100 KB":    {"kty": "OKP", "crv": "X25519", "x": goodX, "kid": strings.Repeat("k", 100<<10)},
	}
	withKey := func(jwk map[string]any) map[string]any {
		body := eventBody("a")
		delete(body, "webhook")
		body["action"] = map[string]any{"type": "webhook",
			"params": map[string]any{"url": "http://127.0.0.1:9999/hook", "encryption_jwk": jwk}}
		return body
	}
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			id := e.createEvent(e.master, withKey(map[string]any{"kty": "OKP", "crv": "X25519", "x": goodX}))["id"].(string)
			for name, jwk := range bad {
				before := countRows(t, e)
				refusedNaming(t, e.do("POST", "/events", e.master, withKey(jwk)), "action.params.encryption_jwk")
				update := withKey(jwk)
				delete(update, "start_time")
				refusedNaming(t, e.do("PUT", "/events/"+id, e.master, update), "action.params.encryption_jwk")
				res := e.do("POST", "/events/batch", e.master, map[string]any{"events": []any{withKey(jwk)}})
				require.Equal(t, http.StatusOK, res.Status, "%s: %s", name, res.Body)
				var batch struct {
					Results []struct {
						Status int
						Field  string
					}
				}
				res.json(t, &batch)
				require.Equal(t, http.StatusBadRequest, batch.Results[0].Status, name)
				require.Equal(t, "action.params.encryption_jwk", batch.Results[0].Field, name)
				require.Equal(t, before, countRows(t, e), "%s: nothing written", name)
			}
			params := e.do("GET", "/events/"+id, e.master, nil).object(t)["action"].(map[string]any)["params"]
			require.Equal(t, goodX, params.(map[string]any)["encryption_jwk"].(map[string]any)["x"], "the event kept its key")
		})
	}
}

// TestKeyInEventBodies: a key in a POST /events body, a batch item or a
// PUT /events/{id} body used to be dropped silently, so a client relying
// on it created a duplicate on every retry. Only PUT /events/by-key/{key}
// sets a key; elsewhere a key other than the event's own answers 400
// naming key, and the event's own key (a GET → PUT round trip) passes.
func TestKeyInEventBodies(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			keyed := func(key string) map[string]any {
				body := eventBody("a")
				body["key"] = key
				return body
			}
			before := countRows(t, e)
			refusedNaming(t, e.do("POST", "/events", e.master, keyed("invoice-42")), "key")
			refusedNaming(t, e.do("POST", "/events", e.master, keyed("invoice-42")), "key")
			require.Equal(t, before, countRows(t, e), "no event, let alone two")

			res := e.do("POST", "/events/batch", e.master, map[string]any{"events": []any{keyed("invoice-42"), eventBody("a")}})
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			var batch struct {
				Results []struct {
					Status int
					Field  string
				}
			}
			res.json(t, &batch)
			require.Equal(t, http.StatusBadRequest, batch.Results[0].Status, "%s", res.Body)
			require.Equal(t, "key", batch.Results[0].Field)
			require.Equal(t, http.StatusCreated, batch.Results[1].Status, "the other item is written")
			require.JSONEq(t, `[]`, string(e.do("GET", "/events?key=invoice-42", e.master, nil).Body), "no event has the key")

			// An event without a key: null (as GET shows it) passes, a key does not.
			plain := e.createEvent(e.master, eventBody("a"))
			id := plain["id"].(string)
			require.Nil(t, plain["key"])
			delete(plain, "endpoint_id") // not taken back on PUT (a 400 of its own)
			res = e.do("PUT", "/events/"+id, e.master, plain)
			require.Equal(t, http.StatusOK, res.Status, "GET → PUT round trip: %s", res.Body)
			refusedNaming(t, e.do("PUT", "/events/"+id, e.master, map[string]any{"key": "invoice-42"}), "key")

			// A keyed event: its own key passes, another or null does not.
			res = e.do("PUT", "/events/by-key/invoice-7", e.master, eventBody("a"))
			require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
			ev := res.object(t)
			id = ev["id"].(string)
			delete(ev, "endpoint_id")
			res = e.do("PUT", "/events/"+id, e.master, ev)
			require.Equal(t, http.StatusOK, res.Status, "GET → PUT round trip: %s", res.Body)
			require.Equal(t, "invoice-7", res.object(t)["key"])
			refusedNaming(t, e.do("PUT", "/events/"+id, e.master, map[string]any{"key": "invoice-8"}), "key")
			refusedNaming(t, e.do("PUT", "/events/"+id, e.master, map[string]any{"key": nil}), "key")
			res = e.do("PUT", "/events/by-key/invoice-7", e.master, keyed("invoice-7"))
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			refusedNaming(t, e.do("PUT", "/events/by-key/invoice-7", e.master, keyed("invoice-8")), "key")
			require.Equal(t, "invoice-7", e.do("GET", "/events/"+id, e.master, nil).object(t)["key"])
		})
	}
}

// TestDurationsTakeDays: the docs give limits in days (debounce and
// max_wait up to 366 days), and every duration member now takes a "d"
// unit; "1d" used to be refused as "invalid duration" everywhere. A
// retry backoff given in days is stored so the dispatcher reads it.
func TestDurationsTakeDays(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			body := eventBody("a")
			delete(body, "start_time")
			body["debounce"], body["max_wait"] = "1d", "366d"
			res := e.do("PUT", "/events/by-key/nightly-digest", e.master, body)
			require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
			ev := res.object(t)
			require.Equal(t, "24h0m0s", ev["debounce"])
			require.Equal(t, "8784h0m0s", ev["max_wait"])
			body["max_wait"] = "367d"
			refusedNaming(t, e.do("PUT", "/events/by-key/nightly-digest", e.master, body), "max_wait")

			body = eventBody("a")
			body["retry"] = map[string]any{"initial_backoff": "1d", "max_backoff": "7d"}
			ev = e.createEvent(e.master, body)
			require.Equal(t, map[string]any{"initial_backoff": "24h0m0s", "max_backoff": "168h0m0s"}, ev["retry"])
			res = e.do("PUT", "/events/"+ev["id"].(string), e.master, map[string]any{"retry": map[string]any{"max_backoff": "8d"}})
			refusedNaming(t, res, "retry.max_backoff")
			require.Contains(t, res.object(t)["error"], "must be between", "read as a duration, refused by its limit")

			ep := endpointBody()
			ep["circuit"] = map[string]any{"disable_after": "2d12h", "window": "1d"}
			got := e.createEndpoint(e.master, ep)["circuit"].(map[string]any)
			require.Equal(t, "60h0m0s", got["disable_after"])
			require.Equal(t, "24h0m0s", got["window"])
		})
	}
}

// TestSigningSecretBounds: a 1-byte secret signed nothing worth verifying.
// An endpoint's secret and a whsec_ secret's key (forms no client of the
// original API sends) need at least 16 bytes; an event's plain hmac_secret
// keeps taking any length, as the original API did.
func TestSigningSecretBounds(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			short := "whsec_" + base64.StdEncoding.EncodeToString([]byte("x"))
			enough := "whsec_" + base64.StdEncoding.EncodeToString([]byte("0123456789abcdef"))
			for _, secret := range []string{"x", "fifteen-bytes!!", short} {
				body := endpointBody()
				body["secret"] = secret
				refusedNaming(t, e.do("POST", "/endpoints", e.master, body), "secret")
			}
			for _, secret := range []string{"sixteen-bytes!!!", enough} {
				body := endpointBody()
				body["secret"] = secret
				e.createEndpoint(e.master, body)
			}
			before := countRows(t, e)
			body := eventBody("a")
			body["hmac_secret"] = short
			res := e.do("POST", "/events", e.master, body)
			refusedNaming(t, res, "hmac_secret")
			require.Contains(t, res.object(t)["error"], "at least 16 bytes")
			require.Equal(t, before, countRows(t, e))
			for _, secret := range []string{"s", enough} {
				body["hmac_secret"] = secret
				require.Equal(t, true, e.createEvent(e.master, body)["hmac_secret_set"])
			}
		})
	}
}

// TestTokenExpiresAtTakesEveryInstantForm: POST /tokens read expires_at
// as RFC 3339 only ("in 2 hours" → 400) while every other instant takes
// the shared parser's forms; now it takes them too, in UTC.
func TestTokenExpiresAtTakesEveryInstantForm(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			mint := func(expires string) response {
				return e.do("POST", "/tokens", e.master, map[string]any{"type": "jwt", "sub": "ci", "access": "read",
					"scope": []string{"a"}, "expires_at": expires})
			}
			for text, want := range map[string]time.Duration{
				"in 2 hours": 2 * time.Hour, "in 30 days": 30 * 24 * time.Hour, "in 90 minutes": 90 * time.Minute,
			} {
				sent := time.Now()
				res := mint(text)
				require.Equal(t, http.StatusOK, res.Status, "%s: %s", text, res.Body)
				var tok struct {
					Token     string
					ExpiresAt time.Time `json:"expires_at"`
				}
				res.json(t, &tok)
				require.WithinRange(t, tok.ExpiresAt, sent.Add(want).Add(-time.Second), time.Now().Add(want), text)
				require.Equal(t, http.StatusOK, e.do("GET", "/events", tok.Token, nil).Status, "%s: the token works", text)
			}
			res := mint(time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
			require.Equal(t, http.StatusOK, res.Status, "RFC 3339 still: %s", res.Body)
			refusedNaming(t, mint("whenever"), "expires_at")
			refusedNaming(t, mint("now"), "expires_at")
			refusedNaming(t, mint("in 400 days"), "expires_at")
		})
	}
}
