package actions

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// Payload is the JSON body of a webhook delivery (the original Qhronos body
// plus occurrence_id and attempt). The WebSocket action reuses it.
type Payload struct {
	EventID      string          `json:"event_id"`
	OccurrenceID string          `json:"occurrence_id"`
	Attempt      int             `json:"attempt"`
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	ScheduledAt  string          `json:"scheduled_at"`
	DispatchedAt string          `json:"dispatched_at"`
	Metadata     json.RawMessage `json:"metadata"`
	Tags         []string        `json:"tags"`
	// Run is present only for an event that completes by callback.
	Run *PayloadRun `json:"run,omitempty"`
	// Topic and SubscriptionID are present only in a fan-out delivery.
	Topic          string `json:"topic,omitempty"`
	SubscriptionID string `json:"subscription_id,omitempty"`
}

// PayloadRun is the payload's "run" member: how the receiver completes
// the run it starts, or says it is still alive, and by when.
type PayloadRun struct {
	Token        string `json:"token"`
	CompleteURL  string `json:"complete_url"`
	HeartbeatURL string `json:"heartbeat_url"`
	Deadline     string `json:"deadline"`
}

// NewPayload builds the payload of req. scheduled_at is the occurrence's own
// instant (the original sent the event's start time, a defect); instants are
// RFC 3339 in UTC; missing metadata becomes {} and missing tags [].
func NewPayload(req Request) Payload {
	meta := req.Metadata
	if len(bytes.TrimSpace(meta)) == 0 {
		meta = json.RawMessage(`{}`)
	}
	tags := req.Tags
	if tags == nil {
		tags = []string{}
	}
	var run *PayloadRun
	if req.Run != nil {
		run = &PayloadRun{Token: req.Run.Token, CompleteURL: req.Run.CompleteURL, HeartbeatURL: req.Run.HeartbeatURL,
			Deadline: formatInstant(req.Run.Deadline)}
	}
	return Payload{
		Run:            run,
		EventID:        req.EventID,
		OccurrenceID:   req.OccurrenceID,
		Attempt:        req.Attempt,
		Name:           req.Name,
		Description:    req.Description,
		ScheduledAt:    formatInstant(req.ScheduledAt),
		DispatchedAt:   formatInstant(req.DispatchedAt),
		Metadata:       meta,
		Tags:           tags,
		Topic:          req.Topic,
		SubscriptionID: req.SubscriptionID,
	}
}

// Marshal encodes the payload without HTML escaping, so metadata strings
// arrive as the client sent them.
func (p Payload) Marshal() ([]byte, error) {
	b := make([]byte, 0, 256+len(p.Name)+len(p.Description)+len(p.Metadata)+16*len(p.Tags))
	b = append(b, `{"event_id":`...)
	b = appendJSONString(b, p.EventID, false)
	b = append(b, `,"occurrence_id":`...)
	b = appendJSONString(b, p.OccurrenceID, false)
	b = append(b, `,"attempt":`...)
	b = strconv.AppendInt(b, int64(p.Attempt), 10)
	b = append(b, `,"name":`...)
	b = appendJSONString(b, p.Name, false)
	b = append(b, `,"description":`...)
	b = appendJSONString(b, p.Description, false)
	b = append(b, `,"scheduled_at":`...)
	b = appendJSONString(b, p.ScheduledAt, false)
	b = append(b, `,"dispatched_at":`...)
	b = appendJSONString(b, p.DispatchedAt, false)
	b = append(b, `,"metadata":`...)
	b, err := appendJSONRaw(b, p.Metadata)
	if err != nil {
		return nil, fmt.Errorf("encode payload: metadata: %w", err)
	}
	b = append(b, `,"tags":`...)
	b = appendJSONStrings(b, p.Tags, false)
	if r := p.Run; r != nil {
		b = append(b, `,"run":{"token":`...)
		b = appendJSONString(b, r.Token, false)
		b = append(b, `,"complete_url":`...)
		b = appendJSONString(b, r.CompleteURL, false)
		b = append(b, `,"heartbeat_url":`...)
		b = appendJSONString(b, r.HeartbeatURL, false)
		b = append(b, `,"deadline":`...)
		b = appendJSONString(b, r.Deadline, false)
		b = append(b, '}')
	}
	if p.Topic != "" {
		b = append(b, `,"topic":`...)
		b = appendJSONString(b, p.Topic, false)
		b = append(b, `,"subscription_id":`...)
		b = appendJSONString(b, p.SubscriptionID, false)
	}
	return append(b, '}'), nil
}

func formatInstant(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
