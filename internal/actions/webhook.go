package actions

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
)

// Webhook POSTs the occurrence payload as signed JSON to params.url.
type Webhook struct {
	cfg HTTPConfig
}

var _ Action = (*Webhook)(nil)

// NewWebhook returns the webhook action.
func NewWebhook(cfg HTTPConfig) *Webhook { return &Webhook{cfg: cfg.withDefaults()} }

type webhookParams struct {
	URL string `json:"url"`
}

// Type implements Action.
func (w *Webhook) Type() string { return "webhook" }

// Validate implements Action: params must be {"url": <allowed http(s) URL>}.
func (w *Webhook) Validate(params json.RawMessage) error {
	_, err := w.parse(params)
	return err
}

func (w *Webhook) parse(params json.RawMessage) (webhookParams, error) {
	var p webhookParams
	if err := decodeParams(params, &p); err != nil {
		return p, err
	}
	return p, validateURL("url", p.URL, w.cfg.Outbound)
}

// Execute implements Action. The body and its signatures are computed per
// attempt (attempt and webhook-timestamp change); webhook-id stays the
// occurrence id so receivers can deduplicate retries.
func (w *Webhook) Execute(ctx context.Context, req Request) Outcome {
	p, err := w.parse(req.Params)
	if err != nil {
		return Outcome{Err: fmt.Errorf("webhook params: %w", err)}
	}
	body, err := NewPayload(req).Marshal()
	if err != nil {
		return Outcome{Err: fmt.Errorf("webhook payload: %w", err)}
	}
	return w.cfg.deliver(ctx, req, func(ctx context.Context) (*http.Request, error) {
		r, err := http.NewRequestWithContext(ctx, http.MethodPost, p.URL, bytes.NewReader(body))
		if err != nil {
			return nil, fmt.Errorf("build webhook request: %w", err)
		}
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("User-Agent", w.cfg.userAgent())
		r.Header.Set("Accept-Encoding", "gzip")
		SignHeaders(r.Header, req.Secrets, req.OccurrenceID, w.cfg.Now(), body)
		return r, nil
	})
}
