package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/actions"
	"github.com/qhronos/qhronos/receiver"
)

// TestVerifyEncrypted: verify checks the signature over the JWE as sent,
// then opens it with --private-key and shows the payload; with the wrong
// key it says so and fails.
func TestVerifyEncrypted(t *testing.T) {
	t.Parallel()
	key := func() (*ecdsa.PrivateKey, string) {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		require.NoError(t, err)
		der, err := x509.MarshalPKCS8PrivateKey(k)
		require.NoError(t, err)
		path := filepath.Join(t.TempDir(), "key.pem")
		require.NoError(t, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600))
		return k, path
	}
	right, rightFile := key()
	_, wrongFile := key()
	jwk, err := json.Marshal(jose.JSONWebKey{Key: &right.PublicKey})
	require.NoError(t, err)
	enc, err := actions.ParseEncryptionJWK(jwk)
	require.NoError(t, err)
	jwe, err := enc.Seal([]byte(`{"event_id":"e","occurrence_id":"o","metadata":{"card":"4242"}}`))
	require.NoError(t, err)
	h := receiver.Sign([]string{"s3cret"}, "o", time.Now(), jwe)
	h.Set("Content-Type", "application/jose")
	saved := saveRequest(t, true, h, jwe)

	cases := []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"verify", "--secret", "s3cret", "--private-key", rightFile, saved}, exitOK, `"card":"4242"`},
		{[]string{"verify", "--secret", "s3cret", "--private-key", wrongFile, "--private-key", rightFile, saved}, exitOK, `"card":"4242"`},
		{[]string{"verify", "--secret", "s3cret", saved}, exitOK, "give --private-key to open it"},
		{[]string{"verify", "--secret", "s3cret", "--private-key", wrongFile, saved}, exitError, "payload decryption failed"},
	}
	for _, tc := range cases {
		r := cli(t, env{}, "", tc.args...)
		if r.code != tc.code || !strings.Contains(r.stdout, tc.out) {
			t.Errorf("qhronos %s: exit %d, stdout %q, stderr %q; want exit %d with %q", strings.Join(tc.args, " "), r.code, r.stdout, r.stderr, tc.code, tc.out)
		}
	}
}
