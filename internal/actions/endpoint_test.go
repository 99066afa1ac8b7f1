package actions_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/actions"
	"github.com/qhronos/qhronos/internal/outbound"
)

const endpointID = "5f1c2d3e-4b5a-4c6d-8e7f-901234567890"

// strictConfig's own client refuses loopback, so a delivery that reaches a
// loopback receiver went through the Target's client.
func strictConfig(t *testing.T) actions.HTTPConfig {
	t.Helper()
	return testConfig(t, func(c *actions.HTTPConfig) {
		c.Client = outbound.NewClient(outbound.Options{})
	})
}

// endpointTarget is a resolved endpoint at url whose client authenticates
// with basic credentials.
func endpointTarget(t *testing.T, url string, headers map[string]string) *actions.Target {
	t.Helper()
	client, err := outbound.NewAuthClient(outbound.Options{AllowLoopback: true},
		outbound.Auth{Type: outbound.AuthBasic, Username: "ep-user", Password: "ep-pass"})
	require.NoError(t, err)
	t.Cleanup(client.CloseIdleConnections)
	return &actions.Target{EndpointID: endpointID, URL: url, Headers: headers, Client: client}
}

func endpointRequest(target *actions.Target) actions.Request {
	req := baseRequest()
	req.Secrets = []string{rotatedSecret, "endpoint-previous-secret"}
	req.Target = target
	return req
}

func requireBasicAuth(t *testing.T, r received) {
	t.Helper()
	hr := &http.Request{Header: r.Header}
	if u, p, ok := hr.BasicAuth(); !ok || u != "ep-user" || p != "ep-pass" {
		t.Errorf("receiver saw basic auth %q/%q (%v), want the endpoint client's ep-user/ep-pass", u, p, ok)
	}
}

func TestWebhookToEndpoint(t *testing.T) {
	t.Parallel()
	srv, got := recorder(t, http.StatusAccepted)
	d := prepare(t, actions.NewWebhook(strictConfig(t)), map[string]string{"endpoint_id": endpointID})
	if got := actions.EndpointOf(d); got != endpointID {
		t.Errorf("EndpointOf = %q, want %q", got, endpointID)
	}
	if got := d.Destination(); got != "" {
		t.Errorf("Destination = %q, want \"\" (the dispatcher derives it from the target)", got)
	}
	req := endpointRequest(endpointTarget(t, srv.URL+"/ep/hook?x=1", map[string]string{
		"X-Tenant":          "acme",
		"Webhook-Signature": "v1,forged", // a stored reserved header never reaches the wire
	}))

	out := d.Execute(context.Background(), req)
	require.NoError(t, out.Err)
	if out.StatusCode != http.StatusAccepted {
		t.Errorf("status = %d, want 202", out.StatusCode)
	}
	r := next(t, got)
	if r.Method != http.MethodPost || r.Path != "/ep/hook?x=1" {
		t.Errorf("request = %s %s, want POST /ep/hook?x=1", r.Method, r.Path)
	}
	requireBasicAuth(t, r)
	for name, want := range map[string]string{"X-Tenant": "acme", "Content-Type": "application/json", "webhook-id": req.OccurrenceID} {
		if got := r.Header.Get(name); got != want {
			t.Errorf("header %s = %q, want %q", name, got, want)
		}
	}
	// Signed with the endpoint's secrets, both during its rotation.
	for _, secret := range req.Secrets {
		v, err := standardwebhooks.NewWebhookRaw([]byte(secret))
		if secret == rotatedSecret {
			v, err = standardwebhooks.NewWebhook(secret)
		}
		require.NoError(t, err)
		if err := v.Verify(r.Body, r.Header); err != nil {
			t.Errorf("verify with %s: %v", secret, err)
		}
	}
	var p actions.Payload
	require.NoError(t, json.Unmarshal(r.Body, &p))
	if p.OccurrenceID != req.OccurrenceID || p.EventID != req.EventID {
		t.Errorf("payload = %+v, want the occurrence's", p)
	}
}

func TestAPICallToEndpoint(t *testing.T) {
	t.Parallel()
	srv, got := recorder(t, http.StatusOK)
	d := prepare(t, actions.NewAPICall(strictConfig(t)), map[string]any{
		"method": "put", "endpoint_id": endpointID, "sign": true, "body": map[string]int{"n": 1},
		"headers": map[string]string{"X-Tenant": "from-event", "X-Event": "e"},
	})
	if got := actions.EndpointOf(d); got != endpointID {
		t.Errorf("EndpointOf = %q, want %q", got, endpointID)
	}
	if got := d.Destination(); got != "" {
		t.Errorf("Destination = %q, want \"\"", got)
	}
	req := endpointRequest(endpointTarget(t, srv.URL+"/api/items", map[string]string{
		"x-tenant": "from-endpoint", "X-Endpoint": "ep", "Idempotency-Key": "forged",
	}))

	require.NoError(t, d.Execute(context.Background(), req).Err)
	r := next(t, got)
	if r.Method != http.MethodPut || r.Path != "/api/items" || string(r.Body) != `{"n":1}` {
		t.Errorf("request = %s %s %s, want PUT /api/items {\"n\":1}", r.Method, r.Path, r.Body)
	}
	requireBasicAuth(t, r)
	for name, want := range map[string]string{
		"X-Tenant": "from-event", "X-Event": "e", "X-Endpoint": "ep",
		"Idempotency-Key": req.OccurrenceID, "Content-Type": "application/json",
	} {
		if got := r.Header.Values(name); len(got) != 1 || got[0] != want {
			t.Errorf("header %s = %q, want [%q]", name, got, want)
		}
	}
	v, err := standardwebhooks.NewWebhook(rotatedSecret)
	require.NoError(t, err)
	if err := v.Verify(r.Body, r.Header); err != nil {
		t.Errorf("verify with the endpoint's secret: %v", err)
	}
}

func TestEndpointDeliveryWithoutTarget(t *testing.T) {
	t.Parallel()
	srv, got := recorder(t, http.StatusOK)
	deliveries := map[string]actions.Delivery{
		"webhook": prepare(t, actions.NewWebhook(testConfig(t, nil)), map[string]string{"endpoint_id": endpointID}),
		"apicall": prepare(t, actions.NewAPICall(testConfig(t, nil)), map[string]string{"method": "GET", "endpoint_id": endpointID}),
	}
	other := &actions.Target{EndpointID: "00000000-0000-4000-8000-000000000000", URL: srv.URL}
	for name, d := range deliveries {
		for what, target := range map[string]*actions.Target{"nil target": nil, "empty URL": {EndpointID: endpointID}, "another endpoint": other} {
			out := d.Execute(context.Background(), endpointRequest(target))
			if !errors.Is(out.Err, actions.ErrEndpointNotResolved) || !out.Retryable {
				t.Errorf("%s, %s: outcome = %+v, want a retryable ErrEndpointNotResolved", name, what, out)
			}
		}
	}
	select {
	case r := <-got:
		t.Errorf("receiver got %s %s, want nothing sent", r.Method, r.Path)
	default:
	}
}

// Without a client in the Target, the action's own client sends.
func TestEndpointDeliveryFallsBackToConfiguredClient(t *testing.T) {
	t.Parallel()
	srv, got := recorder(t, http.StatusNoContent)
	d := prepare(t, actions.NewWebhook(testConfig(t, nil)), map[string]string{"endpoint_id": endpointID})
	out := d.Execute(context.Background(), endpointRequest(&actions.Target{EndpointID: endpointID, URL: srv.URL + "/fallback"}))
	require.NoError(t, out.Err)
	if r := next(t, got); r.Path != "/fallback" || r.Header.Get("Authorization") != "" {
		t.Errorf("receiver saw %s with Authorization %q, want /fallback unauthenticated", r.Path, r.Header.Get("Authorization"))
	}
}

// Answers are classified exactly as for inline URLs.
func TestEndpointDeliveryClassification(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status     int
		retryAfter string
		wantOK     bool
		wantRetry  bool
		wantGone   bool
		wantAfter  time.Duration
	}{
		{status: http.StatusOK, wantOK: true},
		{status: http.StatusServiceUnavailable, retryAfter: "7", wantRetry: true, wantAfter: 7 * time.Second},
		{status: http.StatusTooManyRequests, wantRetry: true},
		{status: http.StatusGone, wantGone: true},
		{status: http.StatusUnauthorized},
		{status: http.StatusFound, wantRetry: true},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.retryAfter != "" {
					w.Header().Set("Retry-After", tc.retryAfter)
				}
				if tc.status == http.StatusFound {
					w.Header().Set("Location", "http://169.254.169.254/")
				}
				w.WriteHeader(tc.status)
				fmt.Fprint(w, "answer body")
			}))
			t.Cleanup(srv.Close)
			d := prepare(t, actions.NewWebhook(strictConfig(t)), map[string]string{"endpoint_id": endpointID})
			out := d.Execute(context.Background(), endpointRequest(endpointTarget(t, srv.URL, nil)))
			if out.OK() != tc.wantOK || out.Retryable != tc.wantRetry || out.Gone != tc.wantGone ||
				out.RetryAfter != tc.wantAfter || out.StatusCode != tc.status || out.Excerpt != "answer body" {
				t.Errorf("outcome = %+v, want ok=%v retryable=%v gone=%v retry_after=%s status=%d excerpt %q",
					out, tc.wantOK, tc.wantRetry, tc.wantGone, tc.wantAfter, tc.status, "answer body")
			}
		})
	}
}

// A token endpoint that fails makes the attempt fail retryably, without the
// client secret in the recorded error.
func TestEndpointOAuth2TokenFailureIsRetryable(t *testing.T) {
	t.Parallel()
	const secret = "client-secret-value"
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, `{"error":"temporarily_unavailable","error_description":"%s"}`, secret)
	}))
	t.Cleanup(tokens.Close)
	srv, got := recorder(t, http.StatusOK)
	client, err := outbound.NewAuthClient(outbound.Options{AllowLoopback: true}, outbound.Auth{
		Type: outbound.AuthOAuth2ClientCredentials, TokenURL: tokens.URL, ClientID: "id", ClientSecret: secret,
	})
	require.NoError(t, err)
	t.Cleanup(client.CloseIdleConnections)

	d := prepare(t, actions.NewAPICall(strictConfig(t)), map[string]string{"method": "POST", "endpoint_id": endpointID})
	out := d.Execute(context.Background(), endpointRequest(&actions.Target{EndpointID: endpointID, URL: srv.URL, Client: client}))
	if out.OK() || !out.Retryable || out.StatusCode != 0 {
		t.Errorf("outcome = %+v, want a retryable transport failure", out)
	}
	if out.Err != nil && strings.Contains(out.Err.Error(), secret) {
		t.Errorf("error %q contains the client secret", out.Err)
	}
	select {
	case r := <-got:
		t.Errorf("receiver got %s %s without a token", r.Method, r.Path)
	default:
	}
}

func TestEndpointParams(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, func(c *actions.HTTPConfig) { c.Outbound.AllowCIDRs = nil })
	webhook, apicall := actions.NewWebhook(cfg), actions.NewAPICall(cfg)
	tests := []struct {
		name         string
		action       actions.Action
		params       string
		wantParam    string // "" = valid
		wantText     string
		wantEndpoint string
	}{
		{"webhook endpoint", webhook, `{"endpoint_id":"` + endpointID + `"}`, "", "", endpointID},
		{"webhook endpoint upper case", webhook, `{"endpoint_id":"` + strings.ToUpper(endpointID) + `"}`, "", "", endpointID},
		{"webhook url", webhook, `{"url":"https://hooks.example.com/q"}`, "", "", ""},
		{"webhook neither", webhook, `{}`, "url", "required", ""},
		{"webhook empty endpoint", webhook, `{"endpoint_id":""}`, "url", "required", ""},
		{"webhook both", webhook, `{"url":"https://hooks.example.com/q","endpoint_id":"` + endpointID + `"}`, "endpoint_id", "url", ""},
		{"webhook endpoint not a uuid", webhook, `{"endpoint_id":"billing"}`, "endpoint_id", "UUID", ""},
		{"webhook endpoint in braces", webhook, `{"endpoint_id":"{` + endpointID + `}"}`, "endpoint_id", "UUID", ""},
		{"webhook endpoint urn", webhook, `{"endpoint_id":"urn:uuid:` + endpointID + `"}`, "endpoint_id", "UUID", ""},
		{"webhook endpoint not a string", webhook, `{"endpoint_id":42}`, "endpoint_id", "string", ""},
		{"webhook url still checked", webhook, `{"url":"http://169.254.169.254/"}`, "url", "outbound.allow_cidrs", ""},
		{"apicall endpoint", apicall, `{"method":"POST","endpoint_id":"` + endpointID + `","headers":{"X-A":"b"},"body":{"a":1}}`, "", "", endpointID},
		{"apicall url", apicall, `{"method":"GET","url":"https://api.example.com/x"}`, "", "", ""},
		{"apicall neither", apicall, `{"method":"GET"}`, "url", "required", ""},
		{"apicall both", apicall, `{"method":"GET","url":"https://api.example.com/x","endpoint_id":"` + endpointID + `"}`, "endpoint_id", "url", ""},
		{"apicall endpoint not a uuid", apicall, `{"method":"GET","endpoint_id":"` + endpointID + `0"}`, "endpoint_id", "UUID", ""},
		{"apicall endpoint, bad header", apicall, `{"method":"GET","endpoint_id":"` + endpointID + `","headers":{"Host":"x"}}`, "headers.Host", "not allowed", ""},
		{"apicall endpoint, HEAD with body", apicall, `{"method":"HEAD","endpoint_id":"` + endpointID + `","body":"x"}`, "body", "HEAD", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d, err := tc.action.Prepare(json.RawMessage(tc.params))
			if tc.wantParam == "" {
				require.NoError(t, err, "Prepare(%s)", tc.params)
				if got := actions.EndpointOf(d); got != tc.wantEndpoint {
					t.Errorf("EndpointOf = %q, want %q", got, tc.wantEndpoint)
				}
				return
			}
			var pe *actions.ParamError
			require.ErrorAs(t, err, &pe, "Prepare(%s)", tc.params)
			if pe.Param != tc.wantParam || !strings.Contains(pe.Reason, tc.wantText) || d != nil {
				t.Errorf("Prepare(%s) = %v, %v; want no delivery and param %q with %q", tc.params, d, err, tc.wantParam, tc.wantText)
			}
		})
	}
}

// A 401 to an endpoint whose client refreshes its OAuth2 token is worth
// another attempt; to any other endpoint it stays permanent.
func TestEndpointUnauthorizedIsRetryableWithOAuth2(t *testing.T) {
	t.Parallel()
	srv, _ := recorder(t, http.StatusUnauthorized)
	d := prepare(t, actions.NewWebhook(strictConfig(t)), map[string]string{"endpoint_id": endpointID})
	for _, refreshes := range []bool{false, true} {
		target := endpointTarget(t, srv.URL, nil)
		target.RetryUnauthorized = refreshes
		out := d.Execute(context.Background(), endpointRequest(target))
		require.Equal(t, http.StatusUnauthorized, out.StatusCode)
		require.Error(t, out.Err)
		require.Equal(t, refreshes, out.Retryable, "retryable when the client refreshes its token: %v", refreshes)
	}
}
