package recurrence

import (
	"fmt"
	"time"
)

// PreviewInstant is one upcoming instant, in UTC and as the event's zone
// shows it.
type PreviewInstant struct {
	UTC   time.Time `json:"utc"`
	Local string    `json:"local"` // RFC 3339 with the zone's offset
}

const (
	defaultPreviewCount = 10
	maxPreviewCount     = 1000
)

// Preview returns the next n instants strictly after after (n ≤ 0 means 10;
// more than 1000 is capped at 1000).
func Preview(r *Rule, after time.Time, n int) ([]PreviewInstant, error) {
	if n <= 0 {
		n = defaultPreviewCount
	}
	n = min(n, maxPreviewCount)
	instants, err := Expand(r, after.Add(time.Nanosecond), maxInstant, n)
	if err != nil {
		return nil, fmt.Errorf("preview: %w", err)
	}
	out := make([]PreviewInstant, len(instants))
	for i, t := range instants {
		out[i] = PreviewInstant{UTC: t, Local: t.In(r.loc).Format(time.RFC3339Nano)}
	}
	return out, nil
}
