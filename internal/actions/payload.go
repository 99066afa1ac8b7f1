package actions

import (
	"bytes"
	"encoding/json"
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
	return Payload{
		EventID:      req.EventID,
		OccurrenceID: req.OccurrenceID,
		Attempt:      req.Attempt,
		Name:         req.Name,
		Description:  req.Description,
		ScheduledAt:  formatInstant(req.ScheduledAt),
		DispatchedAt: formatInstant(req.DispatchedAt),
		Metadata:     meta,
		Tags:         tags,
	}
}

func formatInstant(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
