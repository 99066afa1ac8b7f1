package actions

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"time"
)

// ClientSender pushes a frame to every connection of a client-hook, on every
// instance, that may read an event with tags, and reports how many received
// it (the hub).
type ClientSender interface {
	SendToClient(ctx context.Context, clientName string, tags []string, frame []byte, wait time.Duration) (int, error)
}

// WebSocket delivers occurrences to connected client-hooks of /ws.
type WebSocket struct {
	sender     ClientSender
	replyWait  time.Duration
	ackTimeout time.Duration
}

var _ Action = (*WebSocket)(nil)

// NewWebSocket builds the action; ackTimeout is the default time a
// require_ack delivery may wait for its acknowledgement.
func NewWebSocket(sender ClientSender, ackTimeout time.Duration) *WebSocket {
	if ackTimeout <= 0 {
		ackTimeout = 30 * time.Second
	}
	return &WebSocket{sender: sender, replyWait: 2 * time.Second, ackTimeout: ackTimeout}
}

// Type implements Action.
func (w *WebSocket) Type() string { return "websocket" }

type websocketParams struct {
	ClientName string `json:"client_name"`
	RequireAck bool   `json:"require_ack"`
	AckTimeout string `json:"ack_timeout"`
}

var clientNamePattern = regexp.MustCompile(`^[A-Za-z0-9._:@-]{1,255}$`)

func (w *WebSocket) params(raw json.RawMessage) (websocketParams, time.Duration, error) {
	var p websocketParams
	if err := decodeParams(raw, &p); err != nil {
		return p, 0, err
	}
	if !clientNamePattern.MatchString(p.ClientName) {
		return p, 0, &ParamError{Param: "client_name", Reason: "required: 1-255 letters, digits or ._:@-"}
	}
	timeout := w.ackTimeout
	if p.AckTimeout != "" {
		d, err := time.ParseDuration(p.AckTimeout)
		if err != nil || d < time.Second || d > 24*time.Hour {
			return p, 0, &ParamError{Param: "ack_timeout", Reason: "must be a duration between 1s and 24h"}
		}
		timeout = d
	}
	return p, timeout, nil
}

// Validate implements Action.
func (w *WebSocket) Validate(params json.RawMessage) error {
	_, _, err := w.params(params)
	return err
}

// Execute pushes the event frame. With no client connected anywhere the
// attempt fails and is retried; with require_ack it completes only when the
// client acknowledges.
func (w *WebSocket) Execute(ctx context.Context, req Request) Outcome {
	start := time.Now()
	p, ackTimeout, err := w.params(req.Params)
	if err != nil {
		return Outcome{Err: err, Duration: time.Since(start)}
	}
	frame, err := ClientFrame(req, p.RequireAck, time.Now())
	if err != nil {
		return Outcome{Err: err, Duration: time.Since(start)}
	}
	n, err := w.sender.SendToClient(ctx, p.ClientName, req.Tags, frame, w.replyWait)
	out := Outcome{Duration: time.Since(start)}
	switch {
	case err != nil:
		out.Err, out.Retryable = err, true
	case n == 0:
		// Connected clients whose token may not read the event count as
		// none: the occurrence retries like any undelivered one.
		out.Err, out.Retryable = errors.New("no websocket client connected for "+p.ClientName), true
	case p.RequireAck:
		out.AwaitingAck, out.AckTimeout = true, ackTimeout
	}
	return out
}

// EventFrame is the frame WebSocket listeners receive for an occurrence.
// payload repeats metadata for clients of the original protocol.
func EventFrame(req Request) []byte {
	meta := req.Metadata
	if len(meta) == 0 {
		meta = json.RawMessage("null")
	}
	tags := req.Tags
	if tags == nil {
		tags = []string{}
	}
	b, _ := json.Marshal(struct {
		Type         string          `json:"type"`
		EventID      string          `json:"event_id"`
		OccurrenceID string          `json:"occurrence_id"`
		ScheduledAt  time.Time       `json:"scheduled_at"`
		Attempt      int             `json:"attempt"`
		Name         string          `json:"name"`
		Description  string          `json:"description"`
		Tags         []string        `json:"tags"`
		Metadata     json.RawMessage `json:"metadata"`
		Payload      json.RawMessage `json:"payload"`
	}{"event", req.EventID, req.OccurrenceID, req.ScheduledAt.UTC(), req.Attempt, req.Name, req.Description, tags,
		meta, meta})
	return b
}
