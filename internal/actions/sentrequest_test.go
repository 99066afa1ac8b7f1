package actions_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/actions"
	"github.com/qhronos/qhronos/internal/actions/brokertest"
	"github.com/qhronos/qhronos/internal/redact"
)

// assertRecordedAsReceived: every header the receiver got is recorded
// with the value it got, except those in hidden (recorded as want there),
// and the recorded body is the received one.
func assertRecordedAsReceived(t *testing.T, sent *actions.SentRequest, got received, hidden map[string]string) {
	t.Helper()
	require.NotNil(t, sent, "the attempt's request is recorded")
	require.Equal(t, got.Method, sent.Method)
	for name, values := range got.Header {
		want := strings.Join(values, ", ")
		if h, ok := hidden[name]; ok {
			want = h
		}
		if sent.Headers[name] != want {
			t.Errorf("recorded %s = %q, want %q", name, sent.Headers[name], want)
		}
	}
	for name := range sent.Headers {
		if _, ok := got.Header[name]; !ok {
			t.Errorf("recorded header %s was not received", name)
		}
	}
}

// TestWebhookRecordsTheRequestItSent: a webhook attempt's recorded request
// is what a loopback receiver got (URL, every header, the exact body), with
// the signatures hidden.
func TestWebhookRecordsTheRequestItSent(t *testing.T) {
	t.Parallel()
	srv, got := recorder(t, http.StatusOK)
	red := redact.New([]byte("fingerprint-key"))
	wh := actions.NewWebhook(testConfig(t, func(c *actions.HTTPConfig) { c.Redactor = red }))
	out := prepare(t, wh, map[string]any{"url": srv.URL + "/hook"}).Execute(context.Background(), baseRequest())
	require.NoError(t, out.Err)
	r := next(t, got)
	require.NotNil(t, out.Request)
	require.Equal(t, srv.URL+"/hook", out.Request.URL)
	assertRecordedAsReceived(t, out.Request, r, map[string]string{
		"Webhook-Signature": actions.Redacted, "X-Qhronos-Signature": actions.Redacted})
	require.Equal(t, string(r.Body), out.Request.Body, "the exact body")
	require.False(t, out.Request.BodyTruncated)
	b, err := json.Marshal(out.Request)
	require.NoError(t, err)
	require.NotContains(t, string(b), r.Header.Get("webhook-signature"))
	require.NotContains(t, string(b), r.Header.Get("X-Qhronos-Signature"))
}

// TestAPICallRecordsTheRequestItSent: an API call's configured header
// values, credential-named members of its body and the URL's query values
// are recorded as the event's page shows them (fingerprints); everything
// else as the receiver got it.
func TestAPICallRecordsTheRequestItSent(t *testing.T) {
	t.Parallel()
	srv, got := recorder(t, http.StatusOK)
	red := redact.New([]byte("fingerprint-key"))
	ac := actions.NewAPICall(testConfig(t, func(c *actions.HTTPConfig) { c.Redactor = red }))
	d := prepare(t, ac, map[string]any{"method": "POST", "url": srv.URL + "/charge?token=QUERY-SECRET&region=eu",
		"headers": map[string]string{"X-Api-Key": "HEADER-SECRET", "X-Tenant": "acme"},
		"body":    map[string]any{"amount": 42, "password": "BODY-SECRET"}, "sign": true})
	out := d.Execute(context.Background(), baseRequest())
	require.NoError(t, out.Err)
	r := next(t, got)
	shown := srv.URL + "/charge?token=" + red.Fingerprint("QUERY-SECRET") + "&region=" + red.Fingerprint("eu")
	require.Equal(t, shown, out.Request.URL)
	// The next attempt of the same delivery records the URL as the first
	// did (remembered, not parsed again).
	again := d.Execute(context.Background(), baseRequest())
	require.NoError(t, again.Err)
	next(t, got)
	require.Equal(t, shown, again.Request.URL)
	assertRecordedAsReceived(t, out.Request, r, map[string]string{
		"Webhook-Signature": actions.Redacted, "X-Qhronos-Signature": actions.Redacted,
		"X-Api-Key": red.Fingerprint("HEADER-SECRET"), "X-Tenant": red.Fingerprint("acme")})
	require.JSONEq(t, `{"amount":42,"password":"`+red.Fingerprint("BODY-SECRET")+`"}`, out.Request.Body)
	b, err := json.Marshal(out.Request)
	require.NoError(t, err)
	for _, secret := range []string{"QUERY-SECRET", "HEADER-SECRET", "BODY-SECRET", r.Header.Get("webhook-signature")} {
		require.NotContains(t, string(b), secret)
	}

	// A body without credentials is kept byte for byte.
	d = prepare(t, ac, map[string]any{"method": "PUT", "url": srv.URL + "/x", "body": "name=acme&x=1"})
	out = d.Execute(context.Background(), baseRequest())
	require.NoError(t, out.Err)
	r = next(t, got)
	require.Equal(t, string(r.Body), out.Request.Body)
	assertRecordedAsReceived(t, out.Request, r, nil)
}

// TestRecordedBodyIsCut: a body over 64 KiB is kept up to the limit, at a
// character boundary, and flagged.
func TestRecordedBodyIsCut(t *testing.T) {
	t.Parallel()
	srv, got := recorder(t, http.StatusOK)
	ac := actions.NewAPICall(testConfig(t, nil))
	long := "a" + strings.Repeat("é", actions.RequestBodyLimit) // 2-byte characters: the cut falls inside one
	out := prepare(t, ac, map[string]any{"method": "POST", "url": srv.URL, "body": long}).Execute(context.Background(), baseRequest())
	require.NoError(t, out.Err)
	r := next(t, got)
	require.Equal(t, long, string(r.Body), "the whole body is sent")
	require.True(t, out.Request.BodyTruncated)
	require.Equal(t, actions.RequestBodyLimit-1, len(out.Request.Body), "cut before the character the limit falls in")
	require.True(t, strings.HasPrefix(long, out.Request.Body))
	require.Equal(t, "131073", out.Request.Headers["Content-Length"])
}

// TestRequestRecordingOff: with outbound.record_requests off nothing is
// kept.
func TestRequestRecordingOff(t *testing.T) {
	t.Parallel()
	srv, got := recorder(t, http.StatusOK)
	wh := actions.NewWebhook(testConfig(t, func(c *actions.HTTPConfig) { c.OmitRequests = true }))
	out := prepare(t, wh, map[string]any{"url": srv.URL}).Execute(context.Background(), baseRequest())
	require.NoError(t, out.Err)
	next(t, got)
	require.Nil(t, out.Request)
}

// TestBrokerAttemptRecordsItsMessage: a broker attempt records PUBLISH to
// the broker URL (its password as a fingerprint), the message's headers
// as the consumer reads them (signatures hidden) and its exact body.
func TestBrokerAttemptRecordsItsMessage(t *testing.T) {
	t.Parallel()
	srv := brokertest.Redis(t)
	red := redact.New([]byte("fingerprint-key"))
	cfg := brokerConfig(t)
	cfg.Redactor = red
	u := redisURL(srv, "redis-secret")
	d := prepareJSON(t, actions.NewRedisStream(cfg), `{"url":"`+u+`","stream":"sent"}`)
	out := d.Execute(context.Background(), brokerRequest())
	require.NoError(t, out.Err)
	msgs := readStream(t, srv, "sent")
	require.Len(t, msgs, 1)
	h, body := entry(msgs[0])
	require.NotNil(t, out.Request)
	require.Equal(t, actions.MethodPublish, out.Request.Method)
	require.Equal(t, red.URL(u), out.Request.URL)
	require.NotContains(t, out.Request.URL, "redis-secret")
	require.Equal(t, string(body), out.Request.Body)
	require.Len(t, out.Request.Headers, len(h))
	for name, v := range h {
		want := v
		if name == "webhook-signature" || name == "x-qhronos-signature" {
			want = actions.Redacted
		}
		require.Equal(t, want, out.Request.Headers[name], "header %s", name)
	}
}
