// Package actions delivers occurrences to the world. The dispatcher hands each
// occurrence to the Registry and knows nothing about the action types.
package actions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"time"
)

// Action is the extension point: one implementation per action type, built
// once in main and registered. As with a Caddy module, an event's params are
// provisioned once (Prepare) and the result runs every attempt of that
// version of the event.
type Action interface {
	// Type is the name used in an event's action.type ("webhook", …).
	Type() string
	// Prepare decodes and checks params (at event create/update, and once
	// per event version before delivering). It does no I/O. Errors should
	// be *ParamError so the API can name the bad param.
	Prepare(params json.RawMessage) (Delivery, error)
}

// Delivery is an event's action in its decoded, ready-to-run form. It is
// immutable: one Delivery runs concurrent attempts of many occurrences.
type Delivery interface {
	// Destination is the host:port the delivery sends to, the key of the
	// per-destination concurrency limit; "" when it has no single network
	// destination (websocket).
	Destination() string
	// AckTimeout bounds how long an attempt that reports AwaitingAck waits
	// for its acknowledgement; zero leaves it to the dispatcher's default.
	AckTimeout() time.Duration
	// Execute performs one attempt. It honours ctx's deadline and reports
	// failure in the Outcome, never as a Go error.
	Execute(ctx context.Context, req Request) Outcome
}

// Request is what changes from one attempt of a prepared Delivery to the
// next: the occurrence, the attempt and the event's current descriptive
// fields.
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
	// Secrets are plaintext signing secrets, newest first; during a rotation
	// grace period the previous one follows. Never logged.
	Secrets []string
	Timeout time.Duration
	// Target is the resolved endpoint of a delivery that names one
	// (EndpointDelivery); nil otherwise. Secrets are then the endpoint's.
	Target *Target
	// Run is set when the event completes by callback: the delivery
	// carries its token (HeaderRunToken) and the payload its links.
	Run *Run
	// Topic and SubscriptionID are set for a fan-out delivery: the topic the
	// event targets and the subscription it is delivered for.
	Topic, SubscriptionID string
}

// EndpointDelivery is a Delivery that sends to a shared endpoint
// (action.params.endpoint_id) instead of its own URL: the dispatcher
// resolves the endpoint, applies its state and limits, and passes it as
// Request.Target.
type EndpointDelivery interface {
	Delivery
	EndpointID() string
}

// EndpointOf returns the endpoint a delivery names, or "".
func EndpointOf(d Delivery) string {
	if ed, ok := d.(EndpointDelivery); ok {
		return ed.EndpointID()
	}
	return ""
}

// Target is where and how an endpoint delivery goes. It is built once per
// endpoint version and shared by concurrent attempts.
type Target struct {
	EndpointID string
	URL        string
	// Headers are the endpoint's own, added to every request (an apicall's
	// own headers win over them).
	Headers map[string]string
	// Client sends the requests: the outbound-guarded client carrying the
	// endpoint's authentication (basic, OAuth2 or a client certificate).
	Client *http.Client
	// RetryUnauthorized makes a 401 retryable: the client authenticates
	// with OAuth2 and fetches a new token after one is refused.
	RetryUnauthorized bool
	// Broker is set when the endpoint's URL is a message broker's (nats://,
	// amqp://, kafka://, redis://, or their TLS schemes): the credentials
	// and TLS settings broker actions connect with. Client is then unused.
	Broker *BrokerTarget
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
	// Request is the request the attempt sent, secrets redacted; nil when
	// nothing was sent or recording is off.
	Request *SentRequest
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

// Prepare returns the ready delivery of params for the registered type typ.
// Its attempts end at their deadline (see deadlined).
func (r *Registry) Prepare(typ string, params json.RawMessage) (Delivery, error) {
	a, err := r.Get(typ)
	if err != nil {
		return nil, err
	}
	d, err := a.Prepare(params)
	if err != nil {
		return nil, err
	}
	return &deadlined{d}, nil
}

// Validate checks an action's params with its registered type: they are
// valid when they prepare.
func (r *Registry) Validate(typ string, params json.RawMessage) error {
	_, err := r.Prepare(typ, params)
	return err
}
