package receiver_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/client"
	"github.com/qhronos/qhronos/internal/qhronostest"
	"github.com/qhronos/qhronos/receiver"
)

func TestMain(m *testing.M) { qhronostest.Main(m) }

// Deliveries of the real server verify with the receiver package and with
// the official Standard Webhooks verifier — with a whsec_ secret and a plain
// one, and during a rotation with either secret — and a replayed old
// message is refused.
func TestRealDeliveries(t *testing.T) {
	t.Parallel()
	for _, b := range qhronostest.Backends() {
		t.Run(string(b), func(t *testing.T) {
			t.Parallel()
			srv := qhronostest.Start(t, b)
			c, err := client.New(srv.URL, client.WithToken(srv.Token))
			require.NoError(t, err)
			ctx := qhronostest.Context(t, 60*time.Second)
			rc := qhronostest.NewReceiver(t)

			deliver := func(eventID string) qhronostest.Request {
				t.Helper()
				before := len(rc.Requests())
				occ, err := c.Events.Trigger(ctx, eventID)
				require.NoError(t, err)
				qhronostest.Wait(t, 60*time.Second, "the webhook arrives", func() bool {
					for _, r := range rc.Requests()[before:] {
						if strings.Contains(string(r.Body), occ.ID) {
							return true
						}
					}
					return false
				})
				for _, r := range rc.Requests()[before:] {
					if strings.Contains(string(r.Body), occ.ID) {
						return r
					}
				}
				panic("unreachable")
			}
			official := func(secret string) *standardwebhooks.Webhook {
				if strings.HasPrefix(secret, "whsec_") {
					wh, err := standardwebhooks.NewWebhook(secret)
					require.NoError(t, err)
					return wh
				}
				wh, err := standardwebhooks.NewWebhookRaw([]byte(secret))
				require.NoError(t, err)
				return wh
			}

			for _, secret := range []string{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "a plain secret of thirty-two bytes!"} {
				ev, err := c.Events.Create(ctx, client.EventInput{Name: client.Ptr("signed"), StartTime: client.Ptr("in 1 hour"),
					Webhook: client.Ptr(rc.URL), HmacSecret: client.Ptr(secret)})
				require.NoError(t, err)
				got := deliver(ev.ID)
				require.NoError(t, receiver.Verify(secret, got.Header, got.Body), "receiver package")
				require.NoError(t, official(secret).Verify(got.Body, got.Header), "official verifier")
				require.ErrorIs(t, receiver.Verify("wrong", got.Header, got.Body), receiver.ErrSignatureMismatch)
				later := receiver.NewVerifier([]string{secret}, receiver.WithClock(func() time.Time { return time.Now().Add(10 * time.Minute) }))
				require.ErrorIs(t, later.Verify(got.Header, got.Body), receiver.ErrTooOld, "the same message replayed later")
				require.NoError(t, receiver.NewVerifier([]string{secret}, receiver.WithLegacy()).Verify(
					http.Header{receiver.HeaderQhronosSignature: got.Header.Values(receiver.HeaderQhronosSignature),
						receiver.HeaderQhronosSignatureNew: got.Header.Values(receiver.HeaderQhronosSignatureNew)}, got.Body),
					"X-Qhronos-Signature alone")

				// Rotation: during the grace, holders of either secret verify.
				rot, err := c.Events.RotateSecret(ctx, ev.ID, time.Hour)
				require.NoError(t, err)
				got = deliver(ev.ID)
				for _, s := range []string{secret, rot.HmacSecret} {
					require.NoError(t, receiver.Verify(s, got.Header, got.Body), "receiver package during rotation")
					require.NoError(t, official(s).Verify(got.Body, got.Header), "official verifier during rotation")
				}
				require.NoError(t, receiver.NewVerifier([]string{rot.HmacSecret, secret}).Verify(got.Header, got.Body))
				require.ErrorIs(t, receiver.Verify("wrong", got.Header, got.Body), receiver.ErrSignatureMismatch)
				// A receiver of the original API holds the old secret and
				// reads X-Qhronos-Signature only.
				require.NoError(t, receiver.NewVerifier([]string{secret}, receiver.WithLegacy()).Verify(
					http.Header{receiver.HeaderQhronosSignature: got.Header.Values(receiver.HeaderQhronosSignature)}, got.Body),
					"X-Qhronos-Signature carries the previous secret during the grace")
				require.NoError(t, receiver.NewVerifier([]string{rot.HmacSecret}, receiver.WithLegacy()).Verify(
					http.Header{receiver.HeaderQhronosSignatureNew: got.Header.Values(receiver.HeaderQhronosSignatureNew)}, got.Body),
					"X-Qhronos-Signature-New carries the new secret during the grace")
			}

			// An event signing with hmac.default_secret: the default keeps
			// signing through the grace of its first rotation.
			ev, err := c.Events.Create(ctx, client.EventInput{Name: client.Ptr("default-signed"),
				StartTime: client.Ptr("in 1 hour"), Webhook: client.Ptr(rc.URL)})
			require.NoError(t, err)
			rot, err := c.Events.RotateSecret(ctx, ev.ID, time.Hour)
			require.NoError(t, err)
			require.NotNil(t, rot.PreviousSecretExpiresAt, "the default secret has a grace")
			got := deliver(ev.ID)
			require.NoError(t, receiver.NewVerifier([]string{srv.DefaultSecret}, receiver.WithLegacy()).Verify(
				http.Header{receiver.HeaderQhronosSignature: got.Header.Values(receiver.HeaderQhronosSignature)}, got.Body),
				"X-Qhronos-Signature with the default secret during the grace")
			for _, s := range []string{srv.DefaultSecret, rot.HmacSecret} {
				require.NoError(t, official(s).Verify(got.Body, got.Header), "official verifier during the grace")
			}
		})
	}
}

// A client-hook frame's webhook, forwarded as it is, verifies like a
// webhook: the server signed it.
func TestClientHookFrameVerifies(t *testing.T) {
	t.Parallel()
	srv := qhronostest.Start(t, qhronostest.SQLite)
	c, err := client.New(srv.URL, client.WithToken(srv.Token))
	require.NoError(t, err)
	ctx := qhronostest.Context(t, 30*time.Second)
	conn, err := c.Subscribe(ctx, client.Subscription{ClientName: "frames"})
	require.NoError(t, err)
	defer conn.Close()
	ev, err := c.Events.Create(ctx, client.EventInput{Name: client.Ptr("ws"), StartTime: client.Ptr("in 1 hour"),
		Webhook: client.Ptr("q:frames"), Metadata: []byte(`{"k":"<v>"}`)})
	require.NoError(t, err)
	occ, err := c.Events.Trigger(ctx, ev.ID)
	require.NoError(t, err)
	f, err := conn.Next(ctx)
	require.NoError(t, err)
	require.Equal(t, "event", f.Type)
	require.Equal(t, occ.ID, f.OccurrenceID)
	require.JSONEq(t, `{"k":"<v>"}`, string(f.Payload), "the original payload field is kept")
	require.NotNil(t, f.Webhook)
	h := http.Header{}
	for k, v := range f.Webhook.Headers {
		h.Set(k, v)
	}
	require.NoError(t, receiver.Verify(srv.DefaultSecret, h, []byte(f.Webhook.Body)))
	d, err := receiver.ParseDelivery([]byte(f.Webhook.Body))
	require.NoError(t, err)
	require.Equal(t, occ.ID, d.OccurrenceID)
	require.JSONEq(t, `{"k":"<v>"}`, string(d.Metadata))
}
