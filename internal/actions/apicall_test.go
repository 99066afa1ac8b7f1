package actions_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/actions"
)

func TestAPICallSendsExactlyWhatWasConfigured(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name            string
		params          map[string]any
		wantMethod      string
		wantBody        string
		wantContentType string
		wantHeaders     map[string]string
	}{
		{
			name: "JSON object body, lower-case method",
			params: map[string]any{"method": "post", "body": map[string]any{"amount": 42, "note": "hi there"},
				"headers": map[string]string{"Authorization": "Bearer t0k", "X-Custom": "a b"}},
			wantMethod: "POST", wantBody: `{"amount":42,"note":"hi there"}`, wantContentType: "application/json",
			wantHeaders: map[string]string{"Authorization": "Bearer t0k", "X-Custom": "a b"},
		},
		{
			name:       "string body sent as-is",
			params:     map[string]any{"method": "PUT", "body": "name=acme&x=1", "headers": map[string]string{"Content-Type": "application/x-www-form-urlencoded"}},
			wantMethod: "PUT", wantBody: "name=acme&x=1", wantContentType: "application/x-www-form-urlencoded",
		},
		{
			name:       "string body without content type",
			params:     map[string]any{"method": "PATCH", "body": `{"raw":true}`},
			wantMethod: "PATCH", wantBody: `{"raw":true}`, wantContentType: "",
		},
		{
			name:       "JSON body keeps a user content type",
			params:     map[string]any{"method": "POST", "body": []int{1, 2}, "headers": map[string]string{"content-type": "application/vnd.api+json"}},
			wantMethod: "POST", wantBody: `[1,2]`, wantContentType: "application/vnd.api+json",
		},
		{
			name:       "GET without body",
			params:     map[string]any{"method": "Get"},
			wantMethod: "GET", wantBody: "",
		},
		{
			name:       "DELETE",
			params:     map[string]any{"method": "DELETE", "headers": map[string]string{"User-Agent": "billing-bot/2"}},
			wantMethod: "DELETE", wantHeaders: map[string]string{"User-Agent": "billing-bot/2"},
		},
		{
			name:       "HEAD",
			params:     map[string]any{"method": "head"},
			wantMethod: "HEAD",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, got := recorder(t, http.StatusOK)
			tc.params["url"] = srv.URL + "/api/v1/charge"
			ac := actions.NewAPICall(testConfig(t, nil))
			req := baseRequest()

			out := prepare(t, ac, tc.params).Execute(context.Background(), req)
			require.NoError(t, out.Err)
			r := next(t, got)
			if r.Method != tc.wantMethod || r.Path != "/api/v1/charge" {
				t.Errorf("request = %s %s, want %s /api/v1/charge", r.Method, r.Path, tc.wantMethod)
			}
			if string(r.Body) != tc.wantBody {
				t.Errorf("body = %q, want %q", r.Body, tc.wantBody)
			}
			if got := r.Header.Get("Content-Type"); got != tc.wantContentType {
				t.Errorf("Content-Type = %q, want %q", got, tc.wantContentType)
			}
			if got := r.Header.Get("Idempotency-Key"); got != req.OccurrenceID {
				t.Errorf("Idempotency-Key = %q, want %q", got, req.OccurrenceID)
			}
			for k, want := range tc.wantHeaders {
				if got := r.Header.Get(k); got != want {
					t.Errorf("header %s = %q, want %q", k, got, want)
				}
			}
			if tc.wantHeaders["User-Agent"] == "" && r.Header.Get("User-Agent") != "Qhronos/1.2.3" {
				t.Errorf("User-Agent = %q, want Qhronos/1.2.3", r.Header.Get("User-Agent"))
			}
			if r.Header.Get("webhook-signature") != "" || r.Header.Get("X-Qhronos-Signature") != "" {
				t.Errorf("unsigned apicall carried signature headers")
			}
		})
	}
}

func TestAPICallSigned(t *testing.T) {
	t.Parallel()
	srv, got := recorder(t, http.StatusAccepted)
	ac := actions.NewAPICall(testConfig(t, nil))
	d := prepare(t, ac, map[string]any{"method": "POST", "url": srv.URL, "body": map[string]int{"x": 1}, "sign": true})
	req := baseRequest()
	req.Secrets = []string{rotatedSecret}
	out := d.Execute(context.Background(), req)
	require.NoError(t, out.Err)
	r := next(t, got)
	v, err := standardwebhooks.NewWebhook(rotatedSecret)
	require.NoError(t, err)
	if err := v.Verify(r.Body, r.Header); err != nil {
		t.Errorf("Standard Webhooks verify: %v", err)
	}
	if got, want := r.Header.Get("X-Qhronos-Signature"), actions.QhronosSignature(rotatedSecret, []byte(`{"x":1}`)); got != want {
		t.Errorf("X-Qhronos-Signature = %q, want %q", got, want)
	}
}

func TestAPICallValidate(t *testing.T) {
	t.Parallel()
	ac := actions.NewAPICall(testConfig(t, func(c *actions.HTTPConfig) { c.Outbound.AllowCIDRs = nil }))
	const u = `"url":"https://api.example.com/v1"`
	tests := []struct {
		name      string
		params    string
		wantParam string // "" = valid
		wantText  string
	}{
		{"minimal", `{"method":"post",` + u + `}`, "", ""},
		{"full", `{"method":"PUT",` + u + `,"headers":{"Authorization":"Bearer x"},"body":{"a":[1]},"sign":true}`, "", ""},
		{"missing method", `{` + u + `}`, "method", "required"},
		{"bad method", `{"method":"TRACE",` + u + `}`, "method", "one of"},
		{"missing url", `{"method":"GET"}`, "url", "required"},
		{"gopher url", `{"method":"GET","url":"gopher://x.example/"}`, "url", "scheme"},
		{"private literal", `{"method":"GET","url":"http://10.0.0.1/"}`, "url", "outbound.allow_cidrs"},
		{"Host header", `{"method":"GET",` + u + `,"headers":{"Host":"internal"}}`, "headers.Host", "not allowed"},
		{"content-length header", `{"method":"GET",` + u + `,"headers":{"content-length":"5"}}`, "headers.content-length", "not allowed"},
		{"Transfer-Encoding", `{"method":"GET",` + u + `,"headers":{"Transfer-Encoding":"chunked"}}`, "headers.Transfer-Encoding", "not allowed"},
		{"Connection", `{"method":"GET",` + u + `,"headers":{"Connection":"close"}}`, "headers.Connection", "not allowed"},
		{"Keep-Alive", `{"method":"GET",` + u + `,"headers":{"Keep-Alive":"1"}}`, "headers.Keep-Alive", "not allowed"},
		{"Proxy-Authorization", `{"method":"GET",` + u + `,"headers":{"Proxy-Authorization":"x"}}`, "headers.Proxy-Authorization", "not allowed"},
		{"TE", `{"method":"GET",` + u + `,"headers":{"TE":"trailers"}}`, "headers.TE", "not allowed"},
		{"Trailer", `{"method":"GET",` + u + `,"headers":{"Trailer":"x"}}`, "headers.Trailer", "not allowed"},
		{"Upgrade", `{"method":"GET",` + u + `,"headers":{"Upgrade":"websocket"}}`, "headers.Upgrade", "not allowed"},
		{"CRLF in value", `{"method":"GET",` + u + `,"headers":{"X-A":"1\r\nX-Injected: 1"}}`, "headers.X-A", "CR, LF or NUL"},
		{"LF in name", `{"method":"GET",` + u + `,"headers":{"X-A\nB":"1"}}`, "headers.X-A\nB", "CR, LF or NUL"},
		{"NUL in value", `{"method":"GET",` + u + `,"headers":{"X-A":"a\u0000b"}}`, "headers.X-A", "CR, LF or NUL"},
		{"space in name", `{"method":"GET",` + u + `,"headers":{"X A":"1"}}`, "headers.X A", "invalid header name"},
		{"empty name", `{"method":"GET",` + u + `,"headers":{"":"1"}}`, "headers.", "invalid header name"},
		{"idempotency key reserved", `{"method":"GET",` + u + `,"headers":{"Idempotency-Key":"x"}}`, "headers.Idempotency-Key", "set by Qhronos"},
		{"signature reserved", `{"method":"GET",` + u + `,"headers":{"Webhook-Signature":"v1,x"}}`, "headers.Webhook-Signature", "set by Qhronos"},
		{"header value not string", `{"method":"GET",` + u + `,"headers":{"X-A":1}}`, "headers", "string"},
		{"sign not bool", `{"method":"GET",` + u + `,"sign":"yes"}`, "sign", "boolean"},
		{"HEAD with body", `{"method":"HEAD",` + u + `,"body":"x"}`, "body", "HEAD"},
		{"same header twice", `{"method":"GET",` + u + `,"headers":{"X-A":"1","x-a":"2"}}`, "headers.*", "given twice"},
		{"unknown param", `{"method":"GET",` + u + `,"timeout":"5s"}`, "timeout", "unknown"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ac.Prepare(json.RawMessage(tc.params))
			if tc.wantParam == "" {
				if err != nil {
					t.Errorf("Prepare(%s) = %v, want nil", tc.params, err)
				}
				return
			}
			var pe *actions.ParamError
			require.ErrorAs(t, err, &pe, "Prepare(%s)", tc.params)
			paramOK := pe.Param == tc.wantParam
			if prefix, ok := strings.CutSuffix(tc.wantParam, "*"); ok {
				paramOK = strings.HasPrefix(pe.Param, prefix)
			}
			if !paramOK || !strings.Contains(pe.Reason, tc.wantText) {
				t.Errorf("Prepare(%s) = %v, want param %q with %q", tc.params, err, tc.wantParam, tc.wantText)
			}
		})
	}
}
