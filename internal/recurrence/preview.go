package recurrence

import (
	"fmt"
	"time"
)

// PreviewInstant is one upcoming instant, in UTC and as the event's zone
// shows it. Skipped is set only by PreviewInstants, for a reading the DST
// policy drops.
type PreviewInstant struct {
	UTC     time.Time `json:"utc"`
	Local   string    `json:"local"` // RFC 3339 with the zone's offset
	Skipped bool      `json:"skipped,omitempty"`
}

const (
	defaultPreviewCount = 10
	maxPreviewCount     = 1000
)

// Preview returns the next n instants strictly after after (n ≤ 0 means 10;
// more than 1000 is capped at 1000).
func Preview(r *Rule, after time.Time, n int) ([]PreviewInstant, error) {
	return preview(r, after, n, false)
}

// PreviewInstants is Preview with the readings the DST policy skips as well
// (Skipped true, as ExpandInstants returns them); n counts both kinds.
func PreviewInstants(r *Rule, after time.Time, n int) ([]PreviewInstant, error) {
	return preview(r, after, n, true)
}

func preview(r *Rule, after time.Time, n int, skips bool) ([]PreviewInstant, error) {
	if n <= 0 {
		n = defaultPreviewCount
	}
	n = min(n, maxPreviewCount)
	from := after.Add(time.Nanosecond)
	var instants []Instant
	var err error
	if skips {
		instants, err = ExpandInstants(r, from, maxInstant, n)
	} else {
		var times []time.Time
		times, err = Expand(r, from, maxInstant, n)
		instants = make([]Instant, 0, len(times))
		for _, t := range times {
			instants = append(instants, Instant{At: t})
		}
	}
	if err != nil {
		return nil, fmt.Errorf("preview: %w", err)
	}
	out := make([]PreviewInstant, len(instants))
	for i, in := range instants {
		out[i] = PreviewInstant{UTC: in.At, Local: in.At.In(r.loc).Format(time.RFC3339Nano), Skipped: in.Skipped}
	}
	return out, nil
}
