package actions

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/qhronos/qhronos/internal/outbound"
	"github.com/qhronos/qhronos/internal/redact"
)

// APICall sends an arbitrary HTTP request: a method, URL, headers and body
// chosen by the event's author, optionally signed like a webhook. Every call
// carries Idempotency-Key = occurrence id, stable across retries. It goes to
// params.url or to the endpoint params.endpoint_id names.
type APICall struct {
	cfg HTTPConfig
}

// The build fails here, not in main's registry, if APICall drifts from Action.
var _ Action = (*APICall)(nil)

// NewAPICall returns the apicall action.
func NewAPICall(cfg HTTPConfig) *APICall { return &APICall{cfg: cfg.withDefaults()} }

type apiCallParams struct {
	Method     string            `json:"method"`
	URL        string            `json:"url"`
	EndpointID string            `json:"endpoint_id"`
	Headers    map[string]string `json:"headers"`
	Body       json.RawMessage   `json:"body"`
	Sign       bool              `json:"sign"`
}

var apiCallMethods = map[string]bool{
	http.MethodGet: true, http.MethodPost: true, http.MethodPut: true,
	http.MethodPatch: true, http.MethodDelete: true, http.MethodHead: true,
}

// Type implements Action.
func (a *APICall) Type() string { return "apicall" }

// Prepare implements Action.
func (a *APICall) Prepare(params json.RawMessage) (Delivery, error) {
	p, err := a.parse(params)
	if err != nil {
		return nil, err
	}
	body, isJSON, err := requestBody(p.Body)
	if err != nil {
		return nil, &ParamError{Param: "body", Reason: "must be valid JSON"}
	}
	d := &apiCallDelivery{cfg: a.cfg, params: p, body: body, isJSON: isJSON}
	if p.EndpointID != "" {
		return &endpointDelivery{endpointID: p.EndpointID, sender: d, client: a.cfg.Client}, nil
	}
	if d.dest, err = outbound.Destination(p.URL); err != nil {
		return nil, &ParamError{Param: "url", Reason: "must be a valid URL"}
	}
	return d, nil
}

// parse decodes and checks params, normalizing the method to upper case and
// endpoint_id to its canonical form.
func (a *APICall) parse(params json.RawMessage) (apiCallParams, error) {
	var p apiCallParams
	if err := decodeParams(params, &p); err != nil {
		return p, err
	}
	if p.Method == "" {
		return p, &ParamError{Param: "method", Reason: "is required"}
	}
	p.Method = strings.ToUpper(p.Method)
	if !apiCallMethods[p.Method] {
		return p, &ParamError{Param: "method", Reason: "must be one of GET, POST, PUT, PATCH, DELETE, HEAD"}
	}
	endpointID, err := destinationParam(p.URL, p.EndpointID, a.cfg.Outbound)
	if err != nil {
		return p, err
	}
	p.EndpointID = endpointID
	if err := ValidateHeaders(p.Headers); err != nil {
		return p, err
	}
	if p.Method == http.MethodHead && hasBody(p.Body) {
		return p, &ParamError{Param: "body", Reason: "not allowed with HEAD"}
	}
	return p, nil
}

func hasBody(b json.RawMessage) bool {
	t := bytes.TrimSpace(b)
	return len(t) > 0 && !bytes.Equal(t, []byte("null"))
}

// requestBody turns the body param into bytes: a JSON string is sent as its
// content, any other JSON value as compact JSON. isJSON says which.
func requestBody(b json.RawMessage) (body []byte, isJSON bool, err error) {
	if !hasBody(b) {
		return nil, false, nil
	}
	t := bytes.TrimSpace(b)
	if t[0] == '"' {
		var s string
		if err := json.Unmarshal(t, &s); err != nil {
			return nil, false, fmt.Errorf("decode body string: %w", err)
		}
		return []byte(s), false, nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, t); err != nil {
		return nil, false, fmt.Errorf("compact body: %w", err)
	}
	return buf.Bytes(), true, nil
}

// apiCallDelivery is an apicall's prepared params (dest is empty when it
// sends to an endpoint). Its headers map and body are only read: attempts
// share them.
type apiCallDelivery struct {
	cfg    HTTPConfig
	params apiCallParams
	dest   string
	body   []byte
	isJSON bool
	// shownURL is params.URL as attempts record it (see recordHints).
	shownURL atomic.Pointer[string]
}

// Prepare returns it as a Delivery.
var _ Delivery = (*apiCallDelivery)(nil)

// Destination implements Delivery.
func (d *apiCallDelivery) Destination() string { return d.dest }

// AckTimeout implements Delivery: an API call never waits for an ack.
func (d *apiCallDelivery) AckTimeout() time.Duration { return 0 }

// Execute implements Delivery.
func (d *apiCallDelivery) Execute(ctx context.Context, req Request) Outcome {
	return d.send(ctx, req, httpTarget{url: d.params.URL, client: d.cfg.Client, shownURL: &d.shownURL})
}

// send implements httpSender. The event's own headers win over an
// endpoint's.
func (d *apiCallDelivery) send(ctx context.Context, req Request, to httpTarget) Outcome {
	p := d.params
	hints := recordHints{body: d.body, configured: []map[string]string{to.headers, p.Headers}, paramsBody: true,
		shownURL: to.shownURL}
	return d.cfg.deliver(ctx, req, to.client, hints, func(ctx context.Context) (*http.Request, error) {
		var rd io.Reader
		if d.body != nil {
			rd = bytes.NewReader(d.body)
		}
		r, err := http.NewRequestWithContext(ctx, p.Method, to.url, rd)
		if err != nil {
			return nil, fmt.Errorf("build apicall request: %w", redact.URLError(err))
		}
		setEndpointHeaders(r.Header, to.headers)
		for k, v := range p.Headers {
			r.Header.Set(k, v)
		}
		if d.isJSON && r.Header.Get("Content-Type") == "" {
			r.Header.Set("Content-Type", "application/json")
		}
		if r.Header.Get("User-Agent") == "" {
			r.Header.Set("User-Agent", d.cfg.userAgent())
		}
		if r.Header.Get("Accept-Encoding") == "" {
			r.Header.Set("Accept-Encoding", "gzip")
		}
		r.Header.Set("Idempotency-Key", req.OccurrenceID)
		if p.Sign {
			SignHeaders(r.Header, req.Secrets, req.OccurrenceID, d.cfg.Now(), d.body)
		}
		return r, nil
	})
}
