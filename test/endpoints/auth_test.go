package endpoints

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/outbound/outboundtest"
	"github.com/qhronos/qhronos/internal/qhronostest"
)

// TestOAuth2ClientCredentials: deliveries carry a bearer token fetched from
// a loopback token server with the endpoint's client credentials, fetched
// once and reused; the client secret never appears in an answer.
func TestOAuth2ClientCredentials(t *testing.T) {
	t.Parallel()
	for _, backend := range qhronostest.Backends() {
		t.Run(string(backend), func(t *testing.T) {
			t.Parallel()
			var tokens atomic.Int32
			tokenSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				id, secret, ok := r.BasicAuth()
				if r.FormValue("grant_type") != "client_credentials" {
					http.Error(w, `{"error":"unsupported_grant_type"}`, http.StatusBadRequest)
					return
				}
				if !ok {
					id, secret = r.FormValue("client_id"), r.FormValue("client_secret")
				}
				if id != "qhronos" || secret != "client-s3cret" || r.FormValue("scope") != "deliveries:write" {
					http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
					return
				}
				n := tokens.Add(1)
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"access_token":"token-` + string(rune('0'+n)) + `","token_type":"Bearer","expires_in":3600}`))
			}))
			t.Cleanup(tokenSrv.Close)
			rc := qhronostest.NewReceiver(t)
			rc.Answer(func(r qhronostest.Request) int {
				if r.Header.Get("Authorization") != "Bearer token-1" {
					return http.StatusUnauthorized
				}
				return http.StatusOK
			})

			srv := qhronostest.Start(t, backend)
			c := client{t: t, srv: srv}
			var created map[string]any
			require.Equal(t, http.StatusCreated, c.call("POST", "/endpoints", map[string]any{"name": "oauth", "url": rc.URL,
				"auth": map[string]any{"type": "oauth2_client_credentials", "token_url": tokenSrv.URL + "/token",
					"client_id": "qhronos", "client_secret": "client-s3cret", "scopes": []string{"deliveries:write"}}}, &created))
			id := created["id"].(string)
			var shown map[string]any
			require.Equal(t, http.StatusOK, c.call("GET", "/endpoints/"+id, nil, &shown))
			auth := shown["auth"].(map[string]any)
			require.Equal(t, "qhronos", auth["client_id"])
			require.NotContains(t, auth, "client_secret", "write-only")

			at := time.Now().Add(1500 * time.Millisecond)
			events := []string{c.onceAt("oauth-1", id, at, nil), c.onceAt("oauth-2", id, at, nil), c.onceAt("oauth-3", id, at, nil)}
			occs := c.settled(events, 20*time.Second, "completed")
			require.Len(t, occs, 3)
			for _, o := range occs {
				require.Equal(t, 1, o.AttemptCount, "the first attempt carried the token")
			}
			require.Equal(t, int32(1), tokens.Load(), "one token for every delivery until it expires")
		})
	}
}

// TestMutualTLS: an endpoint with a client certificate reaches a loopback
// receiver that requires one signed by a CA generated here; the receiver's
// own certificate is trusted through the endpoint's ca_certificate.
func TestMutualTLS(t *testing.T) {
	t.Parallel()
	ca := outboundtest.NewPKI(t, "qhronos test CA")
	clientCert, clientKey := ca.Issue(t, "qhronos-client", false)

	for _, backend := range qhronostest.Backends() {
		t.Run(string(backend), func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var seen []string
			rcv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				defer mu.Unlock()
				if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
					seen = append(seen, r.TLS.PeerCertificates[0].Subject.CommonName)
				}
			}))
			rcv.TLS = ca.ServerTLS(t, tls.RequireAndVerifyClientCert)
			rcv.StartTLS()
			t.Cleanup(rcv.Close)
			srv := qhronostest.Start(t, backend)
			c := client{t: t, srv: srv}
			withCert := c.createEndpoint(map[string]any{"name": "mtls", "url": rcv.URL + "/hooks",
				"auth": map[string]any{"type": "mtls", "certificate": string(clientCert),
					"private_key": string(clientKey), "ca_certificate": string(ca.CAPEM)}})
			var shown map[string]any
			require.Equal(t, http.StatusOK, c.call("GET", "/endpoints/"+withCert.ID, nil, &shown))
			require.NotContains(t, shown["auth"], "private_key", "write-only")

			at := time.Now().Add(1500 * time.Millisecond)
			ev := c.onceAt("mtls", withCert.ID, at, nil)
			occs := c.settled([]string{ev}, 20*time.Second, "completed")
			require.Len(t, occs, 1)
			mu.Lock()
			defer mu.Unlock()
			require.Equal(t, []string{"qhronos-client"}, seen, "one delivery, with the client certificate")
		})
	}
}
