package main

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"sync"
	"testing"
)

func sign(key []byte, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

func TestSignatureVerifier(t *testing.T) {
	t.Parallel()
	body := []byte(`{"event_id":"e1"}`)
	raw := []byte("whsec_" + base64.StdEncoding.EncodeToString([]byte("decoded key")))
	tests := []struct {
		name   string
		secret string
		header string
		want   bool
	}{
		{"hex of HMAC with the secret", "s3cret", sign([]byte("s3cret"), body), true},
		{"surrounding spaces", "s3cret", "  " + sign([]byte("s3cret"), body) + " ", true},
		{"wrong secret", "s3cret", sign([]byte("other"), body), false},
		{"other body", "s3cret", sign([]byte("s3cret"), []byte(`{}`)), false},
		{"missing header", "s3cret", "", false},
		{"not hex", "s3cret", "zz", false},
		{"whsec secret as its bytes", string(raw), sign(raw, body), true},
		{"whsec secret decoded", string(raw), sign([]byte("decoded key"), body), true},
	}
	for _, tt := range tests {
		if got := newSignatureVerifier(tt.secret).Verify(tt.header, body); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestSignatureVerifierReusesState checks that a pooled HMAC state carries
// nothing from one delivery to the next, whichever key matched or failed
// before, from several goroutines at once.
func TestSignatureVerifierReusesState(t *testing.T) {
	t.Parallel()
	decoded := []byte("decoded key")
	secret := "whsec_" + base64.StdEncoding.EncodeToString(decoded)
	v := newSignatureVerifier(secret)
	bodies := [][]byte{[]byte(`{"event_id":"e1"}`), []byte(`{"event_id":"e2","attempt":2}`), {}}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 200 {
				body := bodies[(g+i)%len(bodies)]
				for _, c := range []struct {
					key  []byte
					want bool
				}{{[]byte(secret), true}, {decoded, true}, {[]byte("other"), false}} {
					if got := v.Verify(sign(c.key, body), body); got != c.want {
						t.Errorf("key %q, body %q: got %v, want %v", c.key, body, got, c.want)
						return
					}
				}
			}
		})
	}
	wg.Wait()
}

// FuzzDecodeHexSignature holds decodeHexSignature to what hex.DecodeString
// accepted for a SHA-256 signature before it.
func FuzzDecodeHexSignature(f *testing.F) {
	f.Add(sign([]byte("k"), []byte("body")))
	f.Add(strings.ToUpper(sign([]byte("k"), []byte("body"))))
	f.Add(sign([]byte("k"), []byte("body"))[1:])
	f.Add(sign([]byte("k"), []byte("body"))[:62] + "zz")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		want, err := hex.DecodeString(s)
		ok := err == nil && len(want) == sha256.Size
		var got [sha256.Size]byte
		if decodeHexSignature(&got, s) != ok {
			t.Fatalf("%q: got %v, want %v", s, !ok, ok)
		}
		if ok && !bytes.Equal(got[:], want) {
			t.Fatalf("%q: decoded %x, want %x", s, got, want)
		}
	})
}
