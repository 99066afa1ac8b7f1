package actions_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/qhronos/qhronos/internal/actions"
)

// The expected values were computed independently with openssl:
//
//	printf '%s' '{"event_id":"e1","occurrence_id":"o1"}' | openssl dgst -sha256 -hmac 'qhronos-test-secret'
//	printf '%s' 'o1.1700000000.{"a":1}' | openssl dgst -sha256 -hmac 'plain-secret' -binary | base64
//	printf '%s' 'o1.1700000000.{"a":1}' | openssl dgst -sha256 -mac HMAC \
//	  -macopt hexkey:$(printf '%s' MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw | base64 -d | xxd -p) -binary | base64
func TestQhronosSignatureVector(t *testing.T) {
	t.Parallel()
	got := actions.QhronosSignature("qhronos-test-secret", []byte(`{"event_id":"e1","occurrence_id":"o1"}`))
	want := "ed8d37858c5845ff643ac3d84213db4f043a72a04f0295e42d867d907a2180c9"
	if got != want {
		t.Errorf("QhronosSignature = %s, want %s", got, want)
	}
}

func TestStandardSignatureVectors(t *testing.T) {
	t.Parallel()
	ts := time.Unix(1700000000, 0)
	body := []byte(`{"a":1}`)
	tests := []struct {
		name    string
		secrets []string
		want    string
	}{
		{"plain secret is its UTF-8 bytes", []string{"plain-secret"}, "v1,atFilTtgTox6c9kNop+LmI64ai0SaOHQPEalm+/PFGk="},
		{"whsec secret is base64-decoded", []string{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, "v1,rTidMCt3Xs9bvPERHLwGZCCEwr2DLSJDRsb3Sl1O6mg="},
		{"rotation sends both, newest first",
			[]string{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "plain-secret"},
			"v1,rTidMCt3Xs9bvPERHLwGZCCEwr2DLSJDRsb3Sl1O6mg= v1,atFilTtgTox6c9kNop+LmI64ai0SaOHQPEalm+/PFGk="},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := actions.StandardSignature(tc.secrets, "o1", ts, body); got != tc.want {
				t.Errorf("StandardSignature = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSigningKey(t *testing.T) {
	t.Parallel()
	tests := []struct{ secret, want string }{
		{"plain", "plain"},
		{"whsec_aGVsbG8=", "hello"},
		{"whsec_not base64!", "whsec_not base64!"}, // not base64: its bytes, never an empty key
	}
	for _, tc := range tests {
		if got := string(actions.SigningKey(tc.secret)); got != tc.want {
			t.Errorf("SigningKey(%q) = %q, want %q", tc.secret, got, tc.want)
		}
	}
}

func TestSignHeadersWithoutSecretsSendsNoSignature(t *testing.T) {
	t.Parallel()
	h := http.Header{}
	actions.SignHeaders(h, nil, "o1", time.Unix(1700000000, 0), []byte("{}"))
	if got, want := h.Get("webhook-id"), "o1"; got != want {
		t.Errorf("webhook-id = %q, want %q", got, want)
	}
	if got := h.Get("webhook-signature") + h.Get("X-Qhronos-Signature"); got != "" {
		t.Errorf("signature headers = %q, want none without a secret", got)
	}
}

// Which header carries which secret, outside and during a rotation's grace
// (secrets newest first). The hex values are QhronosSignature's, checked
// against openssl above.
func TestSignHeadersLegacyHeaders(t *testing.T) {
	t.Parallel()
	body := []byte(`{"event_id":"e1","occurrence_id":"o1"}`)
	const testSecret = "ed8d37858c5845ff643ac3d84213db4f043a72a04f0295e42d867d907a2180c9"
	other := actions.QhronosSignature("new-secret", body)
	tests := []struct {
		name              string
		secrets           []string
		wantSig, wantNew  string
		wantStandardCount int
	}{
		{"one secret: X-Qhronos-Signature only", []string{"qhronos-test-secret"}, testSecret, "", 1},
		{"grace: previous in X-Qhronos-Signature, new in -New", []string{"new-secret", "qhronos-test-secret"}, testSecret, other, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := http.Header{}
			actions.SignHeaders(h, tc.secrets, "o1", time.Unix(1700000000, 0), body)
			if got := h.Get("X-Qhronos-Signature"); got != tc.wantSig {
				t.Errorf("X-Qhronos-Signature = %q, want %q", got, tc.wantSig)
			}
			if got := h.Get("X-Qhronos-Signature-New"); got != tc.wantNew {
				t.Errorf("X-Qhronos-Signature-New = %q, want %q", got, tc.wantNew)
			}
			if got := len(strings.Fields(h.Get("webhook-signature"))); got != tc.wantStandardCount {
				t.Errorf("webhook-signature has %d values, want %d", got, tc.wantStandardCount)
			}
		})
	}
}

// TestSignaturesMatchAFreshHMACConcurrently holds the kept HMAC states
// (macs) to signatures computed from scratch, from many goroutines at once
// and with more secrets than the cache keeps, so that it starts over
// meanwhile.
func TestSignaturesMatchAFreshHMACConcurrently(t *testing.T) {
	t.Parallel()
	fresh := func(secret string, parts ...string) []byte {
		m := hmac.New(sha256.New, actions.SigningKey(secret))
		for _, p := range parts {
			m.Write([]byte(p))
		}
		return m.Sum(nil)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1500 {
				secret := fmt.Sprintf("secret-%d", (i*7+g)%1100)
				if i%3 == 0 {
					secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
				}
				body := fmt.Sprintf(`{"n":%d,"g":%d}`, i, g)
				id := fmt.Sprintf("occ-%d", i)
				ts := time.Unix(1700000000+int64(i), 0)
				if got, want := actions.QhronosSignature(secret, []byte(body)), hex.EncodeToString(fresh(secret, body)); got != want {
					errs <- fmt.Errorf("QhronosSignature(%s, %s) = %s, want %s", secret, body, got, want)
					return
				}
				want := "v1," + base64.StdEncoding.EncodeToString(fresh(secret, id+"."+strconv.FormatInt(ts.Unix(), 10)+".", body))
				if got := actions.StandardSignature([]string{secret}, id, ts, []byte(body)); got != want {
					errs <- fmt.Errorf("StandardSignature(%s, %s) = %s, want %s", secret, body, got, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func BenchmarkSignHeaders(b *testing.B) {
	ts := time.Unix(1700000000, 0)
	for _, bc := range []struct {
		name    string
		secrets []string
		body    int
	}{
		{"one secret, 500 B", []string{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, 500},
		{"rotation, 1 KB", []string{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "old-secret"}, 1024},
	} {
		body := make([]byte, bc.body)
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				actions.SignHeaders(http.Header{}, bc.secrets, "7c9e6679-7425-40de-944b-e07fc1f90ae7", ts, body)
			}
		})
	}
}
