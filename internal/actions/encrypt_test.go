package actions_test

import (
	"context"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/actions"
	"github.com/qhronos/qhronos/receiver"
)

var (
	rsaOnce sync.Once
	rsaKey  *rsa.PrivateKey
)

// testRSAKey is generated once: 2048-bit generation is slow under -race.
func testRSAKey(t *testing.T) *rsa.PrivateKey {
	rsaOnce.Do(func() {
		var err error
		rsaKey, err = rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
	})
	return rsaKey
}

// receiverKey is a receiver's key pair: its public JWK (what the event
// carries) and its private key as the receiver kit reads it (PEM).
type receiverKey struct {
	name    string
	public  json.RawMessage
	private receiver.PrivateKey
}

func receiverKeys(t *testing.T) []receiverKey {
	t.Helper()
	pemOf := func(k any) []byte {
		der, err := x509.MarshalPKCS8PrivateKey(k)
		require.NoError(t, err)
		return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	}
	parse := func(b []byte) receiver.PrivateKey {
		k, err := receiver.ParsePrivateKey(b)
		require.NoError(t, err)
		return k
	}
	jwk := func(pub any, kid string) json.RawMessage {
		b, err := json.Marshal(jose.JSONWebKey{Key: pub, KeyID: kid, Use: "enc"})
		require.NoError(t, err)
		return b
	}
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	x, err := ecdh.X25519().GenerateKey(rand.Reader)
	require.NoError(t, err)
	xJWK, _ := json.Marshal(map[string]string{"kty": "OKP", "crv": "X25519", "kid": "x1",
		"x": base64.RawURLEncoding.EncodeToString(x.PublicKey().Bytes())})
	r := testRSAKey(t)
	return []receiverKey{
		{"RSA-OAEP-256", jwk(&r.PublicKey, "rsa1"), parse(pemOf(r))},
		{"ECDH-ES P-256", jwk(&ec.PublicKey, "ec1"), parse(pemOf(ec))},
		{"ECDH-ES X25519", xJWK, parse(pemOf(x))},
	}
}

// secretPayload marks the plaintext: it must reach the receiver's handler
// and nothing else.
const secretPayload = "card-4242-4242-4242-4242"

func encryptedRequest() actions.Request {
	req := baseRequest()
	req.Metadata = json.RawMessage(`{"card":"` + secretPayload + `"}`)
	return req
}

func TestEncryptedWebhookIsOpenedByTheReceiverKit(t *testing.T) {
	t.Parallel()
	for _, k := range receiverKeys(t) {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex // the handler runs on the server's goroutine
			var wire, seen []byte
			var wireType string
			v := receiver.NewVerifier([]string{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, receiver.WithDecryptionKeys(k.private))
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				defer mu.Unlock()
				wire, _ = io.ReadAll(r.Body)
				wireType = r.Header.Get("Content-Type")
				r.Body = io.NopCloser(strings.NewReader(string(wire)))
				v.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					seen, _ = io.ReadAll(r.Body)
					// A careless receiver echoes the request: the attempt's
					// excerpt must still hold no plaintext.
					_, _ = w.Write(wire)
				})).ServeHTTP(w, r)
			}))
			t.Cleanup(srv.Close)
			params, _ := json.Marshal(map[string]any{"url": srv.URL, "encryption_jwk": k.public})
			d := prepareJSON(t, actions.NewWebhook(testConfig(t, nil)), string(params))
			req := encryptedRequest()
			req.Secrets = []string{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}
			out := d.Execute(context.Background(), req)
			require.NoError(t, out.Err)
			mu.Lock()
			defer mu.Unlock()
			require.Equal(t, "application/jose", wireType)
			require.Len(t, strings.Split(string(wire), "."), 5, "a compact JWE")
			require.NotContains(t, string(wire), secretPayload)
			require.NotContains(t, out.Excerpt, secretPayload)
			d2, err := receiver.ParseDelivery(seen)
			require.NoError(t, err)
			require.Equal(t, req.OccurrenceID, d2.OccurrenceID)
			require.Contains(t, string(seen), secretPayload)
		})
	}
}

func TestEncryptedWebhookWithTheWrongKeyFailsClearly(t *testing.T) {
	t.Parallel()
	keys := receiverKeys(t)
	secret := "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	// The receiver holds the P-256 key; the event encrypts to the X25519 one.
	v := receiver.NewVerifier([]string{secret}, receiver.WithDecryptionKeys(keys[1].private))
	var called atomic.Bool
	srv := httptest.NewServer(v.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { called.Store(true) })))
	t.Cleanup(srv.Close)
	params, _ := json.Marshal(map[string]any{"url": srv.URL, "encryption_jwk": keys[2].public})
	d := prepareJSON(t, actions.NewWebhook(testConfig(t, nil)), string(params))
	req := encryptedRequest()
	req.Secrets = []string{secret}
	out := d.Execute(context.Background(), req)
	require.Error(t, out.Err)
	require.Equal(t, http.StatusInternalServerError, out.StatusCode)
	require.True(t, out.Retryable, "the receiver may be given the right key")
	require.Contains(t, out.Excerpt, "payload decryption failed: none of the 1 private key(s) opens it")
	require.NotContains(t, out.Excerpt, secretPayload)
	require.False(t, called.Load(), "the handler never sees an unopened body")

	// Rotation: given both private keys, the kit opens it.
	body, err := actions.NewBrokerMessage(req, time.Now(), mustEncryption(t, keys[2].public))
	require.NoError(t, err)
	plain, err := receiver.NewVerifier([]string{secret}, receiver.WithDecryptionKeys(keys[1].private, keys[2].private)).
		OpenMessage(body.Headers, body.Body)
	require.NoError(t, err)
	require.Contains(t, string(plain), secretPayload)
}

func TestEncryptionJWKIsValidated(t *testing.T) {
	t.Parallel()
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	require.NoError(t, err)
	smallJWK, _ := json.Marshal(jose.JSONWebKey{Key: &small.PublicKey})
	privJWK, _ := json.Marshal(jose.JSONWebKey{Key: testRSAKey(t)})
	for _, c := range []struct{ jwk, reason string }{
		{string(smallJWK), "at least 2048 bits"},
		{string(privJWK), "must be a public key"},
		{`{"kty":"oct","k":"AAAA"}`, `"kty" must be RSA, EC or OKP`},
		{`{"kty":"OKP","crv":"Ed25519","x":"AAAA"}`, "X25519"},
		{`"key"`, "must be a JWK"},
	} {
		_, err := actions.NewWebhook(testConfig(t, nil)).Prepare(json.RawMessage(`{"url":"https://example.com","encryption_jwk":` + c.jwk + `}`))
		var pe *actions.ParamError
		require.ErrorAs(t, err, &pe, c.jwk)
		require.Equal(t, "encryption_jwk", pe.Param)
		require.Contains(t, pe.Reason, c.reason)
		require.NotContains(t, pe.Reason, "AAAA", "the key is not quoted back")
	}
}

func mustEncryption(t *testing.T, jwk json.RawMessage) *actions.Encryption {
	t.Helper()
	e, err := actions.ParseEncryptionJWK(jwk)
	require.NoError(t, err)
	return e
}
