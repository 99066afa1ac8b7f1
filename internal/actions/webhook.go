package actions

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/qhronos/qhronos/internal/outbound"
	"github.com/qhronos/qhronos/internal/redact"
)

// Webhook POSTs the occurrence payload as signed JSON to params.url, or to
// the endpoint params.endpoint_id names.
type Webhook struct {
	cfg HTTPConfig
}

// The build fails here, not in main's registry, if Webhook drifts from Action.
var _ Action = (*Webhook)(nil)

// NewWebhook returns the webhook action.
func NewWebhook(cfg HTTPConfig) *Webhook { return &Webhook{cfg: cfg.withDefaults()} }

type webhookParams struct {
	URL        string `json:"url"`
	EndpointID string `json:"endpoint_id"`
	// EncryptionJWK is the receiver's public key: each body is then a
	// compact JWE to it (see Encryption).
	EncryptionJWK json.RawMessage `json:"encryption_jwk"`
}

// Type implements Action.
func (w *Webhook) Type() string { return "webhook" }

// Prepare implements Action: params must be {"url": <allowed http(s) URL>}
// or {"endpoint_id": <UUID>}.
func (w *Webhook) Prepare(params json.RawMessage) (Delivery, error) {
	var p webhookParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	endpointID, err := destinationParam(p.URL, p.EndpointID, w.cfg.Outbound)
	if err != nil {
		return nil, err
	}
	var enc *Encryption
	if len(p.EncryptionJWK) > 0 && string(p.EncryptionJWK) != "null" {
		if enc, err = ParseEncryptionJWK(p.EncryptionJWK); err != nil {
			return nil, &ParamError{Param: "encryption_jwk", Reason: err.Error()}
		}
	}
	if endpointID != "" {
		return &endpointDelivery{endpointID: endpointID, sender: &webhookDelivery{cfg: w.cfg, encrypt: enc}, client: w.cfg.Client}, nil
	}
	dest, err := outbound.Destination(p.URL)
	if err != nil {
		return nil, &ParamError{Param: "url", Reason: "must be a valid URL"}
	}
	return &webhookDelivery{cfg: w.cfg, url: p.URL, dest: dest, encrypt: enc}, nil
}

// webhookDelivery is a webhook's prepared params: url and dest are empty
// when it sends to an endpoint.
type webhookDelivery struct {
	cfg     HTTPConfig
	url     string
	dest    string
	encrypt *Encryption // nil: plain JSON
	// shownURL is url as attempts record it (see recordHints).
	shownURL atomic.Pointer[string]
}

// Prepare returns it as a Delivery.
var _ Delivery = (*webhookDelivery)(nil)

// Destination implements Delivery.
func (d *webhookDelivery) Destination() string { return d.dest }

// AckTimeout implements Delivery: a webhook never waits for an ack.
func (d *webhookDelivery) AckTimeout() time.Duration { return 0 }

// Execute implements Delivery. The body and its signatures are computed per
// attempt (attempt and webhook-timestamp change); webhook-id stays the
// occurrence id so receivers can deduplicate retries.
func (d *webhookDelivery) Execute(ctx context.Context, req Request) Outcome {
	return d.send(ctx, req, httpTarget{url: d.url, client: d.cfg.Client, shownURL: &d.shownURL})
}

// send implements httpSender. An endpoint's headers go first; the body's
// Content-Type and the signatures are always Qhronos's own.
func (d *webhookDelivery) send(ctx context.Context, req Request, to httpTarget) Outcome {
	body, err := NewPayload(req).Marshal()
	if err != nil {
		return Outcome{Err: fmt.Errorf("webhook payload: %w", err)}
	}
	contentType := "application/json"
	if d.encrypt != nil {
		// The signatures cover the bytes sent: a receiver verifies before
		// it decrypts, and no proxy on the way sees the payload.
		if body, err = d.encrypt.Seal(body); err != nil {
			return Outcome{Err: fmt.Errorf("webhook payload: %w", err)}
		}
		contentType = ContentTypeJOSE
	}
	hints := recordHints{body: body, configured: []map[string]string{to.headers}, shownURL: to.shownURL}
	return d.cfg.deliver(ctx, req, to.client, hints, func(ctx context.Context) (*http.Request, error) {
		r, err := http.NewRequestWithContext(ctx, http.MethodPost, to.url, bytes.NewReader(body))
		if err != nil {
			return nil, fmt.Errorf("build webhook request: %w", redact.URLError(err))
		}
		setEndpointHeaders(r.Header, to.headers)
		r.Header.Set("Content-Type", contentType)
		if r.Header.Get("User-Agent") == "" {
			r.Header.Set("User-Agent", d.cfg.userAgent())
		}
		if r.Header.Get("Accept-Encoding") == "" {
			r.Header.Set("Accept-Encoding", "gzip")
		}
		SignHeaders(r.Header, req.Secrets, req.OccurrenceID, d.cfg.Now(), body)
		return r, nil
	})
}
