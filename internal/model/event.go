package model

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/qhronos/qhronos/internal/recurrence"
)

// Event is a scheduled thing — a one-time moment or a recurrence — and the
// action to run at each occurrence. Its JSON members (action, retry,
// schedule, metadata) are decoded once, when it is read or validated.
type Event struct {
	ID          string
	Name        string
	Description string
	StartTime   time.Time
	Timezone    string
	RRule       *string
	Schedule    *Schedule // the Qhronos schedule object, or nil
	Cron        *string
	Action      Action
	// EndpointID is the endpoint the action names (action.params.endpoint_id),
	// or nil for an inline URL; kept in its own column to find an endpoint's
	// events.
	EndpointID *string
	// NoTracePropagation keeps traceparent out of the event's deliveries
	// (the API's trace_propagation: false).
	NoTracePropagation bool
	// Key is the client's name for the event (PUT /events/by-key/{key}),
	// unique among live events of its KeyScope: the tag scope of the
	// principal that created it ("*" for the master token). Empty: no key.
	Key, KeyScope string
	// Debounce: each upsert by key moves the pending occurrence to
	// Debounce after it; MaxWait (0: unbounded) caps that at MaxWait after
	// DebounceSince, the first upsert of the burst.
	Debounce, MaxWait time.Duration
	DebounceSince     *time.Time
	Webhook           string // legacy field, echoed back
	// HMACSecret and PreviousSecret hold AES-GCM ciphertext; never plaintext.
	HMACSecret            []byte
	PreviousSecret        []byte
	PreviousSecretExpires *time.Time
	Tags                  []string
	Metadata              json.RawMessage // the client's document, opaque; JSON null when cleared
	Retry                 *Retry          // nil: the server's defaults
	CatchUp               string          // all | latest | none
	TimeoutMS             int64           // 0 = server default
	// Completion is CompletionCallback when a 2xx starts a run that the
	// receiver completes later (within MaxRuntime, 0: DefaultMaxRuntime);
	// "" or CompletionResponse when the 2xx completes the occurrence.
	Completion string
	MaxRuntime time.Duration
	// Overlap is what an instant does while a run of the event is still in
	// progress (OverlapAllow, the default, when ""); see Overlap*.
	Overlap string
	// Concurrency, when set, shares a limit of occurrences in flight with
	// every event naming the same key.
	Concurrency *Concurrency
	Status      EventStatus
	LastStatus  string
	// The pause in force: when it began, when it ends by itself (nil: until
	// resumed), why, by whom, and what happens to the instants inside it on
	// resume (PauseSkip or PauseFire).
	PausedAt     *time.Time
	PausedUntil  *time.Time
	PauseReason  string
	PausedBy     string
	PauseCatchUp string
	// The event's time policy: DST choices, and a deterministic spread of
	// each instant inside [instant, instant+Jitter).
	DST    DST
	Jitter time.Duration
	// Calendars are the exclusion calendars the event honours, in order.
	Calendars     []CalendarRef
	CreatedBy     string
	CreatedVia    string
	Version       int64
	ExpandedUntil *time.Time // expander cursor: instants before it are materialized
	NextRunAt     *time.Time
	LastRunAt     *time.Time
	CreatedAt     time.Time
	UpdatedAt     time.Time
	DeletedAt     *time.Time
}

// Spec is the event's input to the recurrence engine — the one conversion
// from an event to a rule's source.
func (e *Event) Spec() recurrence.Spec {
	spec := recurrence.Spec{StartTime: e.StartTime, Timezone: e.Timezone,
		DST: recurrence.DST{Gap: e.DST.Gap, Repeat: e.DST.Repeat}}
	if e.RRule != nil {
		spec.RRule = *e.RRule
	}
	if e.Cron != nil {
		spec.Cron = *e.Cron
	}
	if e.Schedule != nil {
		sched := e.Schedule.Rule
		spec.Schedule = &sched
	}
	return spec
}

// OneTime reports whether the event fires once: it has no recurrence rule,
// so its one non-manual occurrence is its whole series.
func (e *Event) OneTime() bool { return e.RRule == nil && e.Schedule == nil && e.Cron == nil }

// Compile compiles the event's recurrence rule.
func (e *Event) Compile(limits recurrence.Limits) (*recurrence.Rule, error) {
	return recurrence.Compile(e.Spec(), limits)
}

// SameSchedule reports whether a and b plan the same instants.
func SameSchedule(a, b *Event) bool {
	return a.StartTime.Equal(b.StartTime) && a.Timezone == b.Timezone && eqPtr(a.RRule, b.RRule) &&
		eqPtr(a.Cron, b.Cron) && string(a.Schedule.EchoJSON()) == string(b.Schedule.EchoJSON()) &&
		a.DST == b.DST && a.Jitter == b.Jitter && slices.Equal(a.Calendars, b.Calendars)
}

func eqPtr(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// How an event's occurrence completes.
const (
	CompletionResponse = "response" // the receiver's 2xx completes it (the default)
	CompletionCallback = "callback" // the 2xx starts a run; the receiver completes it by callback
)

// The bounds of an event's max_runtime, and its default.
const (
	DefaultMaxRuntime = time.Hour
	MaxMaxRuntime     = 7 * 24 * time.Hour
)

// Callback reports whether the event's runs complete by callback.
func (e *Event) Callback() bool { return e.Completion == CompletionCallback }

// RunDeadline is how long a run of the event may go without a completion
// or a heartbeat.
func (e *Event) RunDeadline() time.Duration {
	if e.MaxRuntime <= 0 {
		return DefaultMaxRuntime
	}
	return e.MaxRuntime
}

// An event's overlap policies: what an instant does when it comes while an
// earlier occurrence of the event is still in progress (dispatching,
// awaiting its acknowledgement, running or retrying).
const (
	OverlapAllow          = "allow"           // fire anyway (the default)
	OverlapSkip           = "skip"            // skip the instant, reason overlap
	OverlapBufferOne      = "buffer_one"      // one instant waits for the run to end; later ones are skipped
	OverlapBufferAll      = "buffer_all"      // every instant waits, and they fire one after another
	OverlapCancelPrevious = "cancel_previous" // cancel the run in progress, then fire
)

// Overlaps lists the overlap policies (validation and docs).
var Overlaps = []string{OverlapAllow, OverlapSkip, OverlapBufferOne, OverlapBufferAll, OverlapCancelPrevious}

// OverlapPolicy is the event's overlap policy, OverlapAllow when unset.
func (e *Event) OverlapPolicy() string {
	if e.Overlap == "" {
		return OverlapAllow
	}
	return e.Overlap
}

// Buffers reports whether instants of the event wait for a run in progress.
func (e *Event) Buffers() bool {
	return e.Overlap == OverlapBufferOne || e.Overlap == OverlapBufferAll
}

// Concurrency is an event's concurrency key: at most Limit occurrences of
// the events naming Key are in flight (being delivered, awaiting an ack,
// running or retrying) at once, installation-wide; the others wait, oldest
// instant first. A key's limit is the smallest its active events name.
type Concurrency struct {
	Key   string `json:"key"`
	Limit int    `json:"limit"`
}

// MaxConcurrencyLimit bounds a concurrency key's limit (its key follows
// the rules of an event key).
const MaxConcurrencyLimit = 1000

// What a pause does with the instants inside it when the event resumes.
const (
	PauseSkip = "skip" // record them skipped, reason paused (the default)
	PauseFire = "fire" // make them due: the event's catch_up decides
)

// DST is an event's policy for local times that do not exist (gap: "shift"
// or "skip") or occur twice (repeat: "first", "last" or "both"); empty
// members keep the recurrence source's documented default.
type DST struct {
	Gap    string `json:"gap,omitempty"`
	Repeat string `json:"repeat,omitempty"`
}

// IsZero reports whether no policy was chosen.
func (d DST) IsZero() bool { return d == DST{} }

// The policies of an event's calendar.
const (
	CalendarSkip         = "skip"          // a blocked instant is skipped, reason calendar
	CalendarRollForward  = "roll_forward"  // moved to the next allowed day, same wall-clock time
	CalendarRollBackward = "roll_backward" // moved to the previous allowed day, same wall-clock time
)

// CalendarRef is one calendar an event honours and what a blocked instant
// becomes.
type CalendarRef struct {
	ID     string `json:"id"`
	Policy string `json:"policy"`
}

// Action is what runs at each occurrence: a registered kind and its
// parameters, validated by that kind.
type Action struct {
	Type   string          `json:"type"`
	Params json.RawMessage `json:"params"`
}

// Retry is an event's own retry policy, overriding the server's defaults
// member by member. Durations keep the text the client sent (validated when
// the event was written).
type Retry struct {
	MaxAttempts    *int   `json:"max_attempts,omitempty"`
	InitialBackoff string `json:"initial_backoff,omitempty"`
	MaxBackoff     string `json:"max_backoff,omitempty"`
	Retry4xx       *bool  `json:"retry_4xx,omitempty"`
}

// Schedule is the schedule object: decoded for the recurrence engine, and
// kept as the client sent it (interval filled in) so that it echoes back
// unchanged.
type Schedule struct {
	Rule recurrence.Schedule
	Echo json.RawMessage
}

// DecodeSchedule decodes a stored or validated schedule object.
func DecodeSchedule(raw json.RawMessage) (*Schedule, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	s := &Schedule{Echo: append(json.RawMessage(nil), raw...)}
	if err := json.Unmarshal(raw, &s.Rule); err != nil {
		return nil, fmt.Errorf("decode schedule: %w", err)
	}
	return s, nil
}

// MarshalJSON emits the schedule as sent.
func (s *Schedule) MarshalJSON() ([]byte, error) {
	if s == nil || len(s.Echo) == 0 {
		return []byte("null"), nil
	}
	return s.Echo, nil
}

// EchoJSON is the schedule as sent, or nil.
func (s *Schedule) EchoJSON() json.RawMessage {
	if s == nil {
		return nil
	}
	return s.Echo
}
