package receiver_test

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/receiver"
)

const whsec = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

var (
	body = []byte(`{"event_id":"e1","occurrence_id":"o1","attempt":1}`)
	t0   = time.Unix(1_900_000_000, 0)
)

func at(t time.Time) receiver.Option { return receiver.WithClock(func() time.Time { return t }) }

func without(h http.Header, names ...string) http.Header {
	h = h.Clone()
	for _, n := range names {
		h.Del(n)
	}
	return h
}

func with(h http.Header, name, value string) http.Header {
	h = h.Clone()
	h.Set(name, value)
	return h
}

func TestVerify(t *testing.T) {
	t.Parallel()
	signed := receiver.Sign([]string{"plain-secret"}, "o1", t0, body)
	rotated := receiver.Sign([]string{whsec, "old-secret"}, "o1", t0, body)
	legacy := without(signed, receiver.HeaderWebhookID, receiver.HeaderWebhookTimestamp, receiver.HeaderWebhookSignature)
	tests := []struct {
		name    string
		secrets []string
		opts    []receiver.Option
		header  http.Header
		body    []byte
		want    error
	}{
		{"signed with the secret", []string{"plain-secret"}, nil, signed, body, nil},
		{"whsec secret is base64-decoded", []string{whsec}, nil, receiver.Sign([]string{whsec}, "o1", t0, body), body, nil},
		{"rotation: holder of the new secret", []string{whsec}, nil, rotated, body, nil},
		{"rotation: holder of the previous secret", []string{"old-secret"}, nil, rotated, body, nil},
		{"verifier holding both during its switch", []string{"other", "plain-secret"}, nil, signed, body, nil},
		{"wrong secret", []string{"nope"}, nil, signed, body, receiver.ErrSignatureMismatch},
		{"whsec secret used as bytes by mistake", []string{"MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, nil, receiver.Sign([]string{whsec}, "o1", t0, body), body, receiver.ErrSignatureMismatch},
		{"body changed", []string{"plain-secret"}, nil, signed, []byte(`{"event_id":"e2"}`), receiver.ErrSignatureMismatch},
		{"id changed", []string{"plain-secret"}, nil, with(signed, receiver.HeaderWebhookID, "o2"), body, receiver.ErrSignatureMismatch},
		{"timestamp changed", []string{"plain-secret"}, []receiver.Option{at(t0.Add(time.Second))}, with(signed, receiver.HeaderWebhookTimestamp, "1900000001"), body, receiver.ErrSignatureMismatch},
		{"old message refused", []string{"plain-secret"}, []receiver.Option{at(t0.Add(6 * time.Minute))}, signed, body, receiver.ErrTooOld},
		{"within tolerance", []string{"plain-secret"}, []receiver.Option{at(t0.Add(4 * time.Minute))}, signed, body, nil},
		{"future message refused", []string{"plain-secret"}, []receiver.Option{at(t0.Add(-6 * time.Minute))}, signed, body, receiver.ErrTooNew},
		{"wider tolerance", []string{"plain-secret"}, []receiver.Option{at(t0.Add(time.Hour)), receiver.WithTolerance(2 * time.Hour)}, signed, body, nil},
		{"tolerance off", []string{"plain-secret"}, []receiver.Option{at(t0.Add(1000 * time.Hour)), receiver.WithTolerance(0)}, signed, body, nil},
		{"bad timestamp", []string{"plain-secret"}, nil, with(signed, receiver.HeaderWebhookTimestamp, "soon"), body, receiver.ErrInvalidTimestamp},
		{"missing signature", []string{"plain-secret"}, nil, without(signed, receiver.HeaderWebhookSignature), body, receiver.ErrMissingHeaders},
		{"no headers at all", []string{"plain-secret"}, nil, http.Header{}, body, receiver.ErrMissingHeaders},
		{"other schemes ignored", []string{"plain-secret"}, nil, with(signed, receiver.HeaderWebhookSignature, "v1a,AAAA "+signed.Get(receiver.HeaderWebhookSignature)), body, nil},
		{"garbage signature", []string{"plain-secret"}, nil, with(signed, receiver.HeaderWebhookSignature, "v1,!!! v2 ,,"), body, receiver.ErrSignatureMismatch},
		{"legacy refused by default", []string{"plain-secret"}, nil, legacy, body, receiver.ErrMissingHeaders},
		{"legacy accepted WithLegacy", []string{"plain-secret"}, []receiver.Option{receiver.WithLegacy()}, legacy, body, nil},
		{"legacy new header during rotation", []string{"plain-secret"}, []receiver.Option{receiver.WithLegacy()},
			http.Header{"X-Qhronos-Signature": {strings.Repeat("0", 64)}, "X-Qhronos-Signature-New": {legacy.Get(receiver.HeaderQhronosSignature)}}, body, nil},
		{"legacy rotation: holder of the previous secret (X-Qhronos-Signature)", []string{"old-secret"}, []receiver.Option{receiver.WithLegacy()},
			without(rotated, receiver.HeaderWebhookID, receiver.HeaderWebhookTimestamp, receiver.HeaderWebhookSignature, receiver.HeaderQhronosSignatureNew), body, nil},
		{"legacy rotation: holder of the new secret (X-Qhronos-Signature-New)", []string{whsec}, []receiver.Option{receiver.WithLegacy()},
			without(rotated, receiver.HeaderWebhookID, receiver.HeaderWebhookTimestamp, receiver.HeaderWebhookSignature), body, nil},
		{"legacy wrong body", []string{"plain-secret"}, []receiver.Option{receiver.WithLegacy()}, legacy, []byte("{}"), receiver.ErrSignatureMismatch},
		{"no secret", nil, nil, signed, body, receiver.ErrNoSecret},
		{"empty secret ignored", []string{""}, nil, signed, body, receiver.ErrNoSecret},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			opts := append([]receiver.Option{at(t0)}, tc.opts...)
			got := receiver.NewVerifier(tc.secrets, opts...).Verify(tc.header, tc.body)
			if tc.want == nil && got != nil || tc.want != nil && !errors.Is(got, tc.want) {
				t.Fatalf("Verify = %v, want %v", got, tc.want)
			}
			if got != nil && strings.Contains(got.Error(), "plain-secret") {
				t.Errorf("error names the secret: %v", got)
			}
		})
	}
}

// Sign and Verify agree with the official Standard Webhooks library in both
// directions, for whsec and plain secrets.
func TestAgreesWithTheOfficialVerifier(t *testing.T) {
	t.Parallel()
	now := time.Now()
	official, err := standardwebhooks.NewWebhook(whsec)
	require.NoError(t, err)
	h := receiver.Sign([]string{whsec}, "msg_1", now, body)
	require.NoError(t, official.Verify(body, h), "official verifier on our signature")

	sig, err := official.Sign("msg_2", now, body)
	require.NoError(t, err)
	h = http.Header{}
	h.Set("webhook-id", "msg_2")
	h.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
	h.Set("webhook-signature", sig)
	require.NoError(t, receiver.Verify(whsec, h, body), "our verifier on the official signature")

	raw, err := standardwebhooks.NewWebhookRaw([]byte("plain-secret"))
	require.NoError(t, err)
	require.NoError(t, raw.Verify(body, receiver.Sign([]string{"plain-secret"}, "msg_3", now, body)))
}

func FuzzVerify(f *testing.F) {
	h := receiver.Sign([]string{"k"}, "o1", t0, body)
	f.Add("o1", "1900000000", h.Get(receiver.HeaderWebhookSignature), body)
	f.Add("", "", "", []byte(nil))
	f.Add("x", "-1", "v1, v1,=", []byte("{"))
	f.Fuzz(func(t *testing.T, id, ts, sig string, b []byte) {
		hdr := http.Header{}
		hdr.Set(receiver.HeaderWebhookID, id)
		hdr.Set(receiver.HeaderWebhookTimestamp, ts)
		hdr.Set(receiver.HeaderWebhookSignature, sig)
		if receiver.NewVerifier([]string{"k"}, at(t0)).Verify(hdr, b) != nil {
			return
		}
		// Accepted: the timestamp is an integer near t0 and one of the
		// signatures is the right one for exactly this id, time and body.
		sec, err := strconv.ParseInt(ts, 10, 64)
		if err != nil {
			t.Fatalf("accepted a non-integer timestamp %q", ts)
		}
		want := receiver.Sign([]string{"k"}, id, time.Unix(sec, 0), b).Get(receiver.HeaderWebhookSignature)
		if !slices.Contains(strings.Fields(sig), want) {
			t.Fatalf("accepted a request it did not sign: id=%q ts=%q sig=%q", id, ts, sig)
		}
	})
}
