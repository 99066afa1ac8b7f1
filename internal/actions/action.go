// Package actions delivers occurrences to the world. The dispatcher hands each
// occurrence to the Registry and knows nothing about the action types.
package actions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"
)

// Action is the extension point: one implementation per action type.
type Action interface {
	// Type is the name used in an event's action.type ("webhook", …).
	Type() string
	// Validate checks params at event create/update. Errors should be
	// *ParamError so the API can name the bad param.
	Validate(params json.RawMessage) error
	// Execute performs one attempt. It honours ctx's deadline and never
	// returns a nil Outcome error for a failed delivery: failure is reported
	// in the Outcome, not as a Go error.
	Execute(ctx context.Context, req Request) Outcome
}

// Request is everything an action needs to perform one attempt.
type Request struct {
	EventID      string
	OccurrenceID string // also the delivery id (webhook-id), stable across retries
	Attempt      int    // 1-based
	Manual       bool
	ScheduledAt  time.Time
	DispatchedAt time.Time
	Name         string
	Description  string
	Tags         []string
	Metadata     json.RawMessage
	Params       json.RawMessage
	// Secrets are plaintext signing secrets, newest first; during a rotation
	// grace period the previous one follows. Never logged.
	Secrets []string
	Timeout time.Duration
}

// Outcome is the structured result of one attempt.
type Outcome struct {
	StatusCode int           // 0 when no HTTP answer was received
	Duration   time.Duration // wall time of the attempt
	Excerpt    string        // bounded, decoded excerpt of the response body
	Truncated  bool          // the response body was longer than the excerpt
	Err        error         // nil on success
	// Retryable says whether a later attempt may succeed (408, 429, 5xx,
	// 3xx, network errors, no WebSocket client). Ignored when Err is nil.
	Retryable bool
	// RetryAfter is the receiver's Retry-After, when it sent one.
	RetryAfter time.Duration
	// Gone is set on 410: the event should be paused.
	Gone bool
	// AwaitingAck is set when delivery succeeded but completion waits for a
	// client acknowledgement (websocket with require_ack).
	AwaitingAck bool
	// AckTimeout overrides the default acknowledgement deadline (zero =
	// the dispatcher's default).
	AckTimeout time.Duration
}

// OK reports whether the attempt succeeded.
func (o Outcome) OK() bool { return o.Err == nil }

// ParamError names the action param that failed validation.
type ParamError struct {
	Param  string // e.g. "url", "headers.Host"
	Reason string
}

func (e *ParamError) Error() string { return fmt.Sprintf("action.params.%s: %s", e.Param, e.Reason) }

// ErrUnknownType is returned for an action type with no registered Action.
var ErrUnknownType = errors.New("unknown action type")

// Registry maps action types to actions. It is a value built in main.
type Registry struct {
	actions map[string]Action
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{actions: map[string]Action{}} }

// Register adds an action; registering a type twice is an error.
func (r *Registry) Register(a Action) error {
	if _, dup := r.actions[a.Type()]; dup {
		return fmt.Errorf("register action %q: already registered", a.Type())
	}
	r.actions[a.Type()] = a
	return nil
}

// Get returns the action for typ.
func (r *Registry) Get(typ string) (Action, error) {
	a, ok := r.actions[typ]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownType, typ)
	}
	return a, nil
}

// Types lists the registered types, sorted.
func (r *Registry) Types() []string {
	out := make([]string, 0, len(r.actions))
	for t := range r.actions {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// Validate checks an action's params with its registered type.
func (r *Registry) Validate(typ string, params json.RawMessage) error {
	a, err := r.Get(typ)
	if err != nil {
		return err
	}
	return a.Validate(params)
}
