package actions

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// SignedWebhook is the HTTP request a webhook delivery of an occurrence would
// carry: its exact body (a string, so the signed bytes survive any JSON
// decoder) and its headers, signatures included. Client-hook frames carry
// one, so a client such as `qhronos listen` can forward the delivery to a
// receiver that verifies it as it would verify a webhook. Signing needs no
// secret on the client's side: the server signs, as it does for webhooks.
type SignedWebhook struct {
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
}

// NewSignedWebhook builds the webhook request of req as it would be sent at
// now: the webhook body, Content-Type, webhook-id (the occurrence id),
// webhook-timestamp and, with at least one secret, the signature headers
// (SignHeaders decides which). Header names are in canonical form.
func NewSignedWebhook(req Request, now time.Time) (SignedWebhook, error) {
	body, err := NewPayload(req).Marshal()
	if err != nil {
		return SignedWebhook{}, err
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	SignHeaders(h, req.Secrets, req.OccurrenceID, now, body)
	headers := make(map[string]string, len(h))
	for name := range h {
		headers[name] = h.Get(name)
	}
	return SignedWebhook{Headers: headers, Body: string(body)}, nil
}

// ClientFrame is the frame a client-hook receives: every field of
// EventFrame, unchanged for clients of the original protocol, plus
// require_ack (whether the occurrence waits for this client's ack) and
// webhook (the signed request, see SignedWebhook).
func ClientFrame(req Request, requireAck bool, now time.Time) ([]byte, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(EventFrame(req), &fields); err != nil {
		return nil, fmt.Errorf("decode event frame: %w", err)
	}
	wh, err := NewSignedWebhook(req, now)
	if err != nil {
		return nil, fmt.Errorf("sign frame webhook: %w", err)
	}
	if fields["webhook"], err = json.Marshal(wh); err != nil {
		return nil, fmt.Errorf("encode frame webhook: %w", err)
	}
	fields["require_ack"], _ = json.Marshal(requireAck)
	b, err := json.Marshal(fields)
	if err != nil {
		return nil, fmt.Errorf("encode client frame: %w", err)
	}
	return b, nil
}
