// Package notify tells operators what needs their attention — a circuit
// opened or closed, an endpoint disabled, deliveries that failed after
// their last retry, a series that ended, the database or Redis unreachable
// — through signed webhooks and email. Failed deliveries are sent as
// digests; every other notice goes out at once, the same one at most once
// per min_interval.
package notify

import (
	"fmt"
	"time"
)

// Kind names what a notice is about; channels filter on it.
type Kind string

// The notice kinds.
const (
	CircuitOpened    Kind = "circuit_opened"
	CircuitClosed    Kind = "circuit_closed"
	EndpointDisabled Kind = "endpoint_disabled"
	// DeliveryFailed: an occurrence failed after its last retry (digested).
	DeliveryFailed Kind = "delivery_failed"
	SeriesEnded    Kind = "series_ended"
	// RunFailed and RunTimedOut: a callback run reported failure, or
	// neither completed nor heartbeat within its max_runtime (its delivery
	// had succeeded: not a delivery failure). Sent at once, like a circuit.
	RunFailed   Kind = "run_failed"
	RunTimedOut Kind = "run_timed_out"
	// Missed: instants of an event did not fire — recorded missed, or
	// still pending notifications.missed_after past their time. Told once
	// per outage (a dead man's switch): again only after the event fired.
	Missed Kind = "missed"
	// DependencyUnreachable: the database or Redis unreachable longer than
	// a threshold; DependencyRecovered when it answers again.
	DependencyUnreachable Kind = "dependency_unreachable"
	DependencyRecovered   Kind = "dependency_recovered"
	// Test is what POST /notification-channels/{id}/test sends; no channel
	// filters it out.
	Test Kind = "test"
)

// Kinds lists every kind a channel may ask for.
var Kinds = []Kind{CircuitOpened, CircuitClosed, EndpointDisabled, DeliveryFailed, RunFailed, RunTimedOut,
	Missed, SeriesEnded, DependencyUnreachable, DependencyRecovered}

// Notice is one thing to tell operators.
type Notice struct {
	Kind  Kind
	At    time.Time
	Title string // one line, e.g. "Endpoint billing-api: circuit opened"
	Text  string // a few lines for humans
	// EndpointID, EventID and OccurrenceID are set when relevant.
	EndpointID, EventID, OccurrenceID string
	// Tags are those of the event or endpoint the notice is about; a
	// channel scoped by tags takes it when they share one. None: the
	// notice is installation-wide (a dependency), for unscoped channels.
	Tags []string
	// Fields are machine-readable extras (state, error, count …).
	Fields map[string]string
}

// ParseKinds checks a channel's kinds; the error names path[i].
func ParseKinds(path string, in []string) ([]Kind, error) {
	out := make([]Kind, 0, len(in))
	for i, s := range in {
		k := Kind(s)
		known := false
		for _, want := range Kinds {
			known = known || k == want
		}
		if !known {
			return nil, &KindError{Field: fmt.Sprintf("%s[%d]", path, i), Got: s}
		}
		out = append(out, k)
	}
	return out, nil
}

// KindError is an unknown notice kind.
type KindError struct {
	Field string
	Got   string
}

func (e *KindError) Error() string {
	return fmt.Sprintf("%s: unknown notice kind %q (want one of %v)", e.Field, e.Got, Kinds)
}
