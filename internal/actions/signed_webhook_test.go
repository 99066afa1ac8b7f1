package actions_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/actions"
)

func frameRequest(secrets ...string) actions.Request {
	return actions.Request{EventID: "e1", OccurrenceID: "o1", Attempt: 2,
		ScheduledAt: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC), DispatchedAt: time.Date(2030, 1, 2, 3, 4, 6, 0, time.UTC),
		Name: "n <&>", Description: "d", Tags: []string{"t"}, Metadata: json.RawMessage(`{"k":"<v>"}`), Secrets: secrets}
}

// A client-hook frame keeps every field of the original frame and adds the
// signed webhook request: its body is exactly the webhook body, and the
// official Standard Webhooks verifier and X-Qhronos-Signature accept it.
func TestClientFrameCarriesTheSignedWebhook(t *testing.T) {
	t.Parallel()
	req := frameRequest("plain-secret")
	now := time.Now()
	b, err := actions.ClientFrame(req, true, now)
	require.NoError(t, err)

	var got, original map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &got))
	require.NoError(t, json.Unmarshal(actions.EventFrame(req), &original))
	for k, v := range original {
		require.JSONEq(t, string(v), string(got[k]), "field %s must be unchanged", k)
	}
	require.JSONEq(t, `true`, string(got["require_ack"]))

	var wh actions.SignedWebhook
	require.NoError(t, json.Unmarshal(got["webhook"], &wh))
	wantBody, err := actions.NewPayload(req).Marshal()
	require.NoError(t, err)
	if wh.Body != string(wantBody) {
		t.Errorf("webhook body:\n got %s\nwant %s", wh.Body, wantBody)
	}
	h := http.Header{}
	for k, v := range wh.Headers {
		h.Set(k, v)
	}
	if got, want := h.Get("Content-Type"), "application/json"; got != want {
		t.Errorf("Content-Type = %q, want %q", got, want)
	}
	if got, want := h.Get("webhook-id"), "o1"; got != want {
		t.Errorf("webhook-id = %q, want %q", got, want)
	}
	v, err := standardwebhooks.NewWebhookRaw([]byte("plain-secret"))
	require.NoError(t, err)
	require.NoError(t, v.Verify([]byte(wh.Body), h), "official verifier")
	if got, want := h.Get(actions.HeaderQhronosSignature), actions.QhronosSignature("plain-secret", []byte(wh.Body)); got != want {
		t.Errorf("X-Qhronos-Signature = %q, want %q", got, want)
	}
}

// During a rotation the frame's webhook is signed with both secrets, like a
// webhook: a receiver holding either verifies it.
func TestClientFrameDuringRotation(t *testing.T) {
	t.Parallel()
	b, err := actions.ClientFrame(frameRequest("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "previous"), false, time.Now())
	require.NoError(t, err)
	var f struct {
		RequireAck bool                  `json:"require_ack"`
		Webhook    actions.SignedWebhook `json:"webhook"`
	}
	require.NoError(t, json.Unmarshal(b, &f))
	require.False(t, f.RequireAck)
	h := http.Header{}
	for k, v := range f.Webhook.Headers {
		h.Set(k, v)
	}
	newV, err := standardwebhooks.NewWebhook("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	require.NoError(t, err)
	oldV, err := standardwebhooks.NewWebhookRaw([]byte("previous"))
	require.NoError(t, err)
	require.NoError(t, newV.Verify([]byte(f.Webhook.Body), h), "new secret")
	require.NoError(t, oldV.Verify([]byte(f.Webhook.Body), h), "previous secret")
}
