package receiver

import (
	"encoding/json"
	"fmt"
	"time"
)

// Delivery is the JSON body of a webhook (and of a forwarded client-hook
// frame, an API call or a broker message). Metadata is the event's
// metadata, verbatim. Run is set only when the event completes by callback:
// the delivery starts a run that the receiver ends with Run.Complete.
type Delivery struct {
	EventID      string          `json:"event_id"`
	OccurrenceID string          `json:"occurrence_id"`
	Attempt      int             `json:"attempt"`
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	ScheduledAt  time.Time       `json:"scheduled_at"`
	DispatchedAt time.Time       `json:"dispatched_at"`
	Metadata     json.RawMessage `json:"metadata"`
	Tags         []string        `json:"tags"`
	Run          *RunInfo        `json:"run,omitempty"`
}

// ParseDelivery decodes a verified body.
func ParseDelivery(body []byte) (Delivery, error) {
	var d Delivery
	if err := json.Unmarshal(body, &d); err != nil {
		return Delivery{}, fmt.Errorf("decode delivery: %w", err)
	}
	return d, nil
}
