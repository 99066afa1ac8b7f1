package actions_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/actions"
)

const rotatedSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

func TestWebhookDeliversSignedPayload(t *testing.T) {
	t.Parallel()
	srv, got := recorder(t, http.StatusNoContent)
	wh := actions.NewWebhook(testConfig(t, nil))
	req := baseRequest()

	out := prepare(t, wh, map[string]string{"url": srv.URL + "/hooks/q?src=qhronos"}).Execute(context.Background(), req)
	require.NoError(t, out.Err)
	if out.StatusCode != http.StatusNoContent {
		t.Errorf("status = %d, want 204", out.StatusCode)
	}
	r := next(t, got)

	if r.Method != http.MethodPost || r.Path != "/hooks/q?src=qhronos" {
		t.Errorf("request = %s %s, want POST /hooks/q?src=qhronos", r.Method, r.Path)
	}
	for name, want := range map[string]string{
		"Content-Type": "application/json",
		"User-Agent":   "Qhronos/1.2.3",
		"webhook-id":   req.OccurrenceID,
	} {
		if got := r.Header.Get(name); got != want {
			t.Errorf("header %s = %q, want %q", name, got, want)
		}
	}
	if got, want := r.Header.Get("X-Qhronos-Signature"), actions.QhronosSignature(req.Secrets[0], r.Body); got != want {
		t.Errorf("X-Qhronos-Signature = %q, want %q", got, want)
	}

	var body map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(r.Body, &body))
	wantFields := map[string]string{
		"event_id":      `"` + req.EventID + `"`,
		"occurrence_id": `"` + req.OccurrenceID + `"`,
		"attempt":       `1`,
		"name":          `"daily report"`,
		"description":   `"sends <the> report & more"`,
		"scheduled_at":  `"2026-03-01T08:00:00Z"`,
		"dispatched_at": `"2026-03-01T08:00:00.25Z"`,
		"metadata":      `{"customer":"acme","n":1}`,
		"tags":          `["billing"]`,
	}
	for k, want := range wantFields {
		if got := string(body[k]); got != want {
			t.Errorf("payload %s = %s, want %s", k, got, want)
		}
	}
	if len(body) != len(wantFields) {
		t.Errorf("payload has %d fields, want %d: %s", len(body), len(wantFields), r.Body)
	}

	v, err := standardwebhooks.NewWebhookRaw([]byte(req.Secrets[0]))
	require.NoError(t, err)
	if err := v.Verify(r.Body, r.Header); err != nil {
		t.Errorf("Standard Webhooks verify: %v", err)
	}
}

func TestWebhookEmptyMetadataAndTags(t *testing.T) {
	t.Parallel()
	srv, got := recorder(t, http.StatusOK)
	wh := actions.NewWebhook(testConfig(t, nil))
	req := baseRequest()
	req.Metadata, req.Tags = nil, nil
	require.NoError(t, prepare(t, wh, map[string]string{"url": srv.URL}).Execute(context.Background(), req).Err)
	var body map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(next(t, got).Body, &body))
	if got, want := string(body["metadata"]), "{}"; got != want {
		t.Errorf("metadata = %s, want %s", got, want)
	}
	if got, want := string(body["tags"]), "[]"; got != want {
		t.Errorf("tags = %s, want %s", got, want)
	}
}

func TestWebhookRotationSendsBothSignatures(t *testing.T) {
	t.Parallel()
	srv, got := recorder(t, http.StatusOK)
	wh := actions.NewWebhook(testConfig(t, nil))
	req := baseRequest()
	req.Secrets = []string{rotatedSecret, "previous-plain-secret"}
	require.NoError(t, prepare(t, wh, map[string]string{"url": srv.URL}).Execute(context.Background(), req).Err)
	r := next(t, got)

	sigs := strings.Fields(r.Header.Get("webhook-signature"))
	require.Len(t, sigs, 2, "webhook-signature during rotation")
	newV, err := standardwebhooks.NewWebhook(rotatedSecret)
	require.NoError(t, err)
	oldV, err := standardwebhooks.NewWebhookRaw([]byte("previous-plain-secret"))
	require.NoError(t, err)
	for i, sig := range sigs {
		h := r.Header.Clone()
		h.Set("webhook-signature", sig)
		verifier := []*standardwebhooks.Webhook{newV, oldV}[i]
		if err := verifier.Verify(r.Body, h); err != nil {
			t.Errorf("signature %d (%s) does not verify with its secret: %v", i, sig, err)
		}
	}
	// Receivers that know only one secret verify the full header too.
	for name, v := range map[string]*standardwebhooks.Webhook{"new": newV, "old": oldV} {
		if err := v.Verify(r.Body, r.Header); err != nil {
			t.Errorf("%s-secret receiver: %v", name, err)
		}
	}
	// A receiver of the original API still holds the previous secret.
	if got, want := r.Header.Get("X-Qhronos-Signature"), actions.QhronosSignature("previous-plain-secret", r.Body); got != want {
		t.Errorf("X-Qhronos-Signature = %q, want the previous secret's %q", got, want)
	}
	if got, want := r.Header.Get("X-Qhronos-Signature-New"), actions.QhronosSignature(rotatedSecret, r.Body); got != want {
		t.Errorf("X-Qhronos-Signature-New = %q, want the new secret's %q", got, want)
	}
}

func TestWebhookOldTimestampIsRejectedByVerifier(t *testing.T) {
	t.Parallel()
	srv, got := recorder(t, http.StatusOK)
	sixMinutesAgo := time.Now().Add(-6 * time.Minute)
	wh := actions.NewWebhook(testConfig(t, func(c *actions.HTTPConfig) {
		c.Now = func() time.Time { return sixMinutesAgo }
	}))
	req := baseRequest()
	require.NoError(t, prepare(t, wh, map[string]string{"url": srv.URL}).Execute(context.Background(), req).Err)
	r := next(t, got)

	if got, want := r.Header.Get("webhook-timestamp"), strconv.FormatInt(sixMinutesAgo.Unix(), 10); got != want {
		t.Errorf("webhook-timestamp = %s, want %s", got, want)
	}
	v, err := standardwebhooks.NewWebhookRaw([]byte(req.Secrets[0]))
	require.NoError(t, err)
	if err := v.Verify(r.Body, r.Header); !errors.Is(err, standardwebhooks.ErrMessageTooOld) {
		t.Errorf("Verify of a 6-minute-old delivery = %v, want ErrMessageTooOld", err)
	}
	if err := v.VerifyIgnoringTimestamp(r.Body, r.Header); err != nil {
		t.Errorf("signature itself must still be valid: %v", err)
	}
}

func TestWebhookRetryKeepsDeliveryIDAndChangesTimestamp(t *testing.T) {
	t.Parallel()
	srv, got := recorder(t, http.StatusOK)
	clock := time.Now()
	wh := actions.NewWebhook(testConfig(t, func(c *actions.HTTPConfig) {
		c.Now = func() time.Time { return clock }
	}))
	d := prepare(t, wh, map[string]string{"url": srv.URL}) // one delivery runs both attempts
	req := baseRequest()
	require.NoError(t, d.Execute(context.Background(), req).Err)
	first := next(t, got)
	clock = clock.Add(90 * time.Second)
	req.Attempt = 2
	require.NoError(t, d.Execute(context.Background(), req).Err)
	second := next(t, got)

	if a, b := first.Header.Get("webhook-id"), second.Header.Get("webhook-id"); a != b || a != req.OccurrenceID {
		t.Errorf("webhook-id = %q then %q, want both %q", a, b, req.OccurrenceID)
	}
	if a, b := first.Header.Get("webhook-timestamp"), second.Header.Get("webhook-timestamp"); a == b {
		t.Errorf("webhook-timestamp = %s on both attempts, want a fresh one per attempt", a)
	}
	var p struct{ Attempt int }
	require.NoError(t, json.Unmarshal(second.Body, &p))
	if p.Attempt != 2 {
		t.Errorf("payload attempt = %d, want 2", p.Attempt)
	}
}

func TestWebhookValidate(t *testing.T) {
	t.Parallel()
	wh := actions.NewWebhook(testConfig(t, func(c *actions.HTTPConfig) { c.Outbound.AllowCIDRs = nil }))
	tests := []struct {
		name      string
		params    string
		wantParam string // "" = valid
		wantText  string
	}{
		{"valid", `{"url":"https://hooks.example.com/q"}`, "", ""},
		{"missing url", `{}`, "url", "required"},
		{"null params", `null`, "url", "required"},
		{"not an object", `"https://x"`, "params", "object"},
		{"url not a string", `{"url":5}`, "url", "string"},
		{"unknown param", `{"url":"https://a.example","ulr":"x"}`, "ulr", "unknown"},
		{"file url", `{"url":"file:///etc/passwd"}`, "url", "scheme"},
		{"loopback literal", `{"url":"http://127.0.0.1:8080/"}`, "url", "outbound.allow_cidrs"},
		{"metadata literal", `{"url":"http://169.254.169.254/"}`, "url", "outbound.allow_cidrs"},
		{"blocked port", `{"url":"http://hooks.example.com:25/"}`, "url", "port 25"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := wh.Prepare(json.RawMessage(tc.params))
			if tc.wantParam == "" {
				if err != nil {
					t.Errorf("Prepare(%s) = %v, want nil", tc.params, err)
				}
				return
			}
			var pe *actions.ParamError
			require.ErrorAs(t, err, &pe, "Prepare(%s)", tc.params)
			if pe.Param != tc.wantParam || !strings.Contains(pe.Reason, tc.wantText) {
				t.Errorf("Prepare(%s) = %v, want param %q with %q", tc.params, err, tc.wantParam, tc.wantText)
			}
		})
	}
}
