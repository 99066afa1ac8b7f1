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

// The build fails here, not in main's registry, if WebSocket drifts from
// Action.
var _ Action = (*WebSocket)(nil)

// NewWebSocket builds the action; ackTimeout is how long a require_ack
// delivery without an ack_timeout param waits for its acknowledgement (zero:
// the dispatcher's default).
func NewWebSocket(sender ClientSender, ackTimeout time.Duration) *WebSocket {
	return &WebSocket{sender: sender, replyWait: 2 * time.Second, ackTimeout: max(ackTimeout, 0)}
}

// Type implements Action.
func (w *WebSocket) Type() string { return "websocket" }

type websocketParams struct {
	ClientName string `json:"client_name"`
	RequireAck bool   `json:"require_ack"`
	AckTimeout string `json:"ack_timeout"`
}

var clientNamePattern = regexp.MustCompile(`^[A-Za-z0-9._:@-]{1,255}$`)

// Prepare implements Action.
func (w *WebSocket) Prepare(raw json.RawMessage) (Delivery, error) {
	var p websocketParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	if !clientNamePattern.MatchString(p.ClientName) {
		return nil, &ParamError{Param: "client_name", Reason: "required: 1-255 letters, digits or ._:@-"}
	}
	d := &websocketDelivery{sender: w.sender, replyWait: w.replyWait, clientName: p.ClientName,
		requireAck: p.RequireAck, ackTimeout: w.ackTimeout}
	if p.AckTimeout != "" {
		v, err := time.ParseDuration(p.AckTimeout)
		if err != nil || v < time.Second || v > 24*time.Hour {
			return nil, &ParamError{Param: "ack_timeout", Reason: "must be a duration between 1s and 24h"}
		}
		d.ackTimeout = v
	}
	return d, nil
}

// websocketDelivery is a websocket action's prepared params.
type websocketDelivery struct {
	sender     ClientSender
	replyWait  time.Duration
	clientName string
	requireAck bool
	ackTimeout time.Duration // zero: the dispatcher's default
}

// Prepare returns it as a Delivery.
var _ Delivery = (*websocketDelivery)(nil)

// Destination implements Delivery: client-hooks are reached through the
// hub, not one network destination.
func (d *websocketDelivery) Destination() string { return "" }

// AckTimeout implements Delivery: the ack_timeout param, else the action's
// default.
func (d *websocketDelivery) AckTimeout() time.Duration { return d.ackTimeout }

// Execute pushes the event frame. With no client connected anywhere the
// attempt fails and is retried; with require_ack it completes only when the
// client acknowledges.
func (d *websocketDelivery) Execute(ctx context.Context, req Request) Outcome {
	start := time.Now()
	frame, err := ClientFrame(req, d.requireAck, time.Now())
	if err != nil {
		return Outcome{Err: err, Duration: time.Since(start)}
	}
	n, err := d.sender.SendToClient(ctx, d.clientName, req.Tags, frame, d.replyWait)
	out := Outcome{Duration: time.Since(start)}
	switch {
	case err != nil:
		out.Err, out.Retryable = err, true
	case n == 0:
		// Connected clients whose token may not read the event count as
		// none: the occurrence retries like any undelivered one.
		out.Err, out.Retryable = errors.New("no websocket client connected for "+d.clientName), true
	case d.requireAck:
		out.AwaitingAck = true
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
