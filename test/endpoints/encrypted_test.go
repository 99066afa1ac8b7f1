package endpoints

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/qhronostest"
	"github.com/qhronos/qhronos/receiver"
)

// TestEncryptedWebhook: a receiver holding the private key gets the payload
// through the receiver kit; what crossed the wire was a JWE; the plaintext
// reaches neither the attempt log (even when the receiver echoes what it
// got) nor the server's log, which records every delivery here.
func TestEncryptedWebhook(t *testing.T) {
	t.Parallel()
	for _, backend := range qhronostest.Backends() {
		t.Run(string(backend), func(t *testing.T) {
			t.Parallel()
			marker := "pan-" + qhronostest.RandomHex(t, 8)
			key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
			require.NoError(t, err)
			jwk, err := json.Marshal(jose.JSONWebKey{Key: &key.PublicKey, KeyID: "r1"})
			require.NoError(t, err)
			privJWK, err := json.Marshal(jose.JSONWebKey{Key: key, KeyID: "r1"})
			require.NoError(t, err)
			priv, err := receiver.ParsePrivateKey(privJWK)
			require.NoError(t, err)

			srv := qhronostest.Start(t, backend, "QHRONOS_LOG_LEVEL=debug", "QHRONOS_LOG_DELIVERIES=true")
			var mu sync.Mutex
			var payloads []string
			var wireTypes []string
			v := receiver.NewVerifier([]string{srv.DefaultSecret}, receiver.WithDecryptionKeys(priv))
			rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				wire, _ := io.ReadAll(r.Body)
				mu.Lock()
				wireTypes = append(wireTypes, r.Header.Get("Content-Type"))
				mu.Unlock()
				r.Body = io.NopCloser(strings.NewReader(string(wire)))
				v.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					plain, _ := io.ReadAll(r.Body)
					mu.Lock()
					payloads = append(payloads, string(plain))
					mu.Unlock()
					_, _ = w.Write(wire) // a careless receiver echoes what it got
				})).ServeHTTP(w, r)
			}))
			t.Cleanup(rc.Close)

			c := client{t: t, srv: srv}
			var ev struct {
				ID string `json:"id"`
			}
			require.Equal(t, http.StatusCreated, c.call("POST", "/events", map[string]any{"name": "sealed",
				"start_time": time.Now().Add(1500 * time.Millisecond).UTC().Format(time.RFC3339Nano),
				"metadata":   map[string]any{"card": marker},
				"action": map[string]any{"type": "webhook", "params": map[string]any{"url": rc.URL,
					"encryption_jwk": json.RawMessage(jwk)}}}, &ev))
			occs := c.settled([]string{ev.ID}, 30*time.Second, "completed")
			require.Len(t, occs, 1)

			mu.Lock()
			require.Equal(t, []string{"application/jose"}, wireTypes)
			require.Len(t, payloads, 1)
			require.Contains(t, payloads[0], marker, "the receiver kit opened the payload")
			mu.Unlock()
			for id := range occs {
				var attempts []map[string]any
				require.Equal(t, http.StatusOK, c.call("GET", "/occurrences/"+id+"/attempts", nil, &attempts))
				require.NotEmpty(t, attempts)
				require.NotContains(t, fmt.Sprint(attempts), marker, "the attempt log holds the JWE the receiver echoed, not the payload")
			}
			require.Contains(t, srv.Logs(), ev.ID, "the server logged the delivery")
			require.NotContains(t, srv.Logs(), marker)
		})
	}
}
