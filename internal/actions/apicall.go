package actions

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// APICall sends an arbitrary HTTP request: a method, URL, headers and body
// chosen by the event's author, optionally signed like a webhook. Every call
// carries Idempotency-Key = occurrence id, stable across retries.
type APICall struct {
	cfg HTTPConfig
}

var _ Action = (*APICall)(nil)

// NewAPICall returns the apicall action.
func NewAPICall(cfg HTTPConfig) *APICall { return &APICall{cfg: cfg.withDefaults()} }

type apiCallParams struct {
	Method  string            `json:"method"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	Body    json.RawMessage   `json:"body"`
	Sign    bool              `json:"sign"`
}

var apiCallMethods = map[string]bool{
	http.MethodGet: true, http.MethodPost: true, http.MethodPut: true,
	http.MethodPatch: true, http.MethodDelete: true, http.MethodHead: true,
}

// Type implements Action.
func (a *APICall) Type() string { return "apicall" }

// Validate implements Action.
func (a *APICall) Validate(params json.RawMessage) error {
	_, err := a.parse(params)
	return err
}

// parse decodes and checks params, normalizing the method to upper case.
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
	if err := validateURL("url", p.URL, a.cfg.Outbound); err != nil {
		return p, err
	}
	if err := validateHeaders(p.Headers); err != nil {
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

// Execute implements Action.
func (a *APICall) Execute(ctx context.Context, req Request) Outcome {
	p, err := a.parse(req.Params)
	if err != nil {
		return Outcome{Err: fmt.Errorf("apicall params: %w", err)}
	}
	body, isJSON, err := requestBody(p.Body)
	if err != nil {
		return Outcome{Err: fmt.Errorf("apicall body: %w", err)}
	}
	return a.cfg.deliver(ctx, req, func(ctx context.Context) (*http.Request, error) {
		var rd io.Reader
		if body != nil {
			rd = bytes.NewReader(body)
		}
		r, err := http.NewRequestWithContext(ctx, p.Method, p.URL, rd)
		if err != nil {
			return nil, fmt.Errorf("build apicall request: %w", err)
		}
		for k, v := range p.Headers {
			r.Header.Set(k, v)
		}
		if isJSON && r.Header.Get("Content-Type") == "" {
			r.Header.Set("Content-Type", "application/json")
		}
		if r.Header.Get("User-Agent") == "" {
			r.Header.Set("User-Agent", a.cfg.userAgent())
		}
		if r.Header.Get("Accept-Encoding") == "" {
			r.Header.Set("Accept-Encoding", "gzip")
		}
		r.Header.Set("Idempotency-Key", req.OccurrenceID)
		if p.Sign {
			SignHeaders(r.Header, req.Secrets, req.OccurrenceID, a.cfg.Now(), body)
		}
		return r, nil
	})
}
