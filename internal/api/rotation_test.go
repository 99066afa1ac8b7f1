package api

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/receiver"
)

// signedRequest is one delivery as a receiver saw it.
type signedRequest struct {
	header http.Header
	body   []byte
}

// Rotating an event's secret — its own, or the default secret it signed
// with — keeps the old secret signing until the grace ends: a receiver that
// holds only the old secret verifies X-Qhronos-Signature (the original API)
// and webhook-signature (a Standard Webhooks verifier) during the grace, and
// after the grace only the new secret verifies.
func TestRotationKeepsTheOldSecretSigningThroughTheGrace(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			var offset atomic.Int64 // how far the signing clock is ahead
			e := newEnv(t, b.Open, withSigningClock(func() time.Time {
				return time.Now().Add(time.Duration(offset.Load()))
			}))
			got := make(chan signedRequest, 16)
			rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				got <- signedRequest{header: r.Header.Clone(), body: body}
			}))
			t.Cleanup(rc.Close)
			e.sched.Start(context.Background())

			for _, tc := range []struct{ name, old string }{
				{"default secret", testDefaultSecret},
				{"own secret", "an own secret of thirty-two bytes"},
			} {
				offset.Store(0)
				body := map[string]any{"name": "signed", "start_time": inAnHour(), "webhook": rc.URL + "/hook"}
				if tc.old != testDefaultSecret {
					body["hmac_secret"] = tc.old
				}
				ev := e.createEvent(e.master, body)
				id := ev["id"].(string)
				deliver := func() signedRequest {
					t.Helper()
					res := e.do("POST", "/events/"+id+"/trigger", e.master, nil)
					require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
					occ := res.object(t)["id"].(string)
					deadline := time.After(60 * time.Second)
					for {
						select {
						case r := <-got:
							if strings.Contains(string(r.body), occ) {
								return r
							}
						case <-deadline:
							t.Fatalf("%s: the delivery of %s did not arrive within 10s", tc.name, occ)
						}
					}
				}

				before := deliver()
				require.NoError(t, legacyVerify(tc.old, before), "%s: before the rotation", tc.name)
				require.Empty(t, before.header.Get("X-Qhronos-Signature-New"), "%s: no rotation, no -New", tc.name)

				res := e.do("POST", "/events/"+id+"/rotate-secret", e.master, map[string]any{"grace": "1h"})
				require.Equal(t, http.StatusOK, res.Status, "%s: %s", tc.name, res.Body)
				var rot struct {
					HMACSecret string     `json:"hmac_secret"`
					Until      *time.Time `json:"previous_secret_expires_at"`
				}
				res.json(t, &rot)
				require.NotEmpty(t, rot.HMACSecret)
				require.NotNil(t, rot.Until, "%s: the old secret has a grace", tc.name)
				require.WithinDuration(t, time.Now().Add(time.Hour), *rot.Until, time.Minute)

				during := deliver()
				require.NoError(t, legacyVerify(tc.old, during), "%s: X-Qhronos-Signature with the old secret during the grace", tc.name)
				require.NoError(t, official(t, tc.old).Verify(during.body, during.header),
					"%s: Standard Webhooks verifier with the old secret during the grace", tc.name)
				require.NoError(t, official(t, rot.HMACSecret).Verify(during.body, during.header),
					"%s: Standard Webhooks verifier with the new secret during the grace", tc.name)
				require.Equal(t, hexHMAC(rot.HMACSecret, during.body), during.header.Get("X-Qhronos-Signature-New"),
					"%s: X-Qhronos-Signature-New carries the new secret's signature", tc.name)
				require.Len(t, strings.Fields(during.header.Get("webhook-signature")), 2, tc.name)

				offset.Store(int64(time.Hour + time.Second))
				after := deliver()
				require.Equal(t, hexHMAC(rot.HMACSecret, after.body), after.header.Get("X-Qhronos-Signature"),
					"%s: X-Qhronos-Signature switches to the new secret after the grace", tc.name)
				require.Empty(t, after.header.Get("X-Qhronos-Signature-New"), tc.name)
				require.NoError(t, official(t, rot.HMACSecret).Verify(after.body, after.header), tc.name)
				require.Error(t, official(t, tc.old).Verify(after.body, after.header),
					"%s: the old secret no longer verifies after the grace", tc.name)
				require.ErrorIs(t, legacyVerify(tc.old, after), receiver.ErrSignatureMismatch, tc.name)
			}
		})
	}
}

// legacyVerify checks X-Qhronos-Signature alone, as a receiver written for
// the original API does.
func legacyVerify(secret string, r signedRequest) error {
	h := http.Header{"X-Qhronos-Signature": {r.header.Get("X-Qhronos-Signature")}}
	return receiver.NewVerifier([]string{secret}, receiver.WithLegacy()).Verify(h, r.body)
}

func official(t *testing.T, secret string) *standardwebhooks.Webhook {
	t.Helper()
	wh, err := standardwebhooks.NewWebhookRaw([]byte(secret))
	if strings.HasPrefix(secret, "whsec_") {
		wh, err = standardwebhooks.NewWebhook(secret)
	}
	require.NoError(t, err)
	return wh
}

// hexHMAC is the X-Qhronos-Signature value of body under secret.
func hexHMAC(secret string, body []byte) string {
	m := hmac.New(sha256.New, receiver.SigningKey(secret))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}
