package model

import (
	"encoding/json"
	"time"
)

// Occurrence is one instant of an event, materialized as a row before it can
// fire. (event_id, scheduled_at) is unique.
type Occurrence struct {
	ID          string           `db:"id"`
	EventID     string           `db:"event_id"`
	ScheduledAt time.Time        `db:"scheduled_at"`
	Status      OccurrenceStatus `db:"status"`
	Manual      bool             `db:"manual"`
	// ManualRetry marks an operator's re-delivery request: the next attempt
	// is recorded as manual and may exceed the retry limit.
	ManualRetry  bool `db:"manual_retry"`
	AttemptCount int  `db:"attempt_count"`
	// Lapses counts the claims (within AttemptCount) whose lease lapsed
	// with nothing recorded: not charged to the retry budget.
	Lapses         int        `db:"lapses"`
	NextAttemptAt  time.Time  `db:"next_attempt_at"`
	LeaseToken     *string    `db:"lease_token"`
	LeaseOwner     *string    `db:"lease_owner"`
	LeaseExpiresAt *time.Time `db:"lease_expires_at"`
	StatusCode     *int       `db:"status_code"`
	ResponseBody   *string    `db:"response_body"`
	ErrorMessage   *string    `db:"error_message"`
	StartedAt      *time.Time `db:"started_at"`
	CompletedAt    *time.Time `db:"completed_at"`
	AckedAt        *time.Time `db:"acked_at"` // a client acknowledged the delivery
	// The run of a callback event: what its receiver reported (RunSucceeded
	// or RunFailed), its output (JSON), when, and its last heartbeat. A
	// report kept while the delivery was in flight decides the row when
	// the delivery is recorded.
	RunStatus     *string    `db:"run_status"`
	RunOutput     *string    `db:"run_output"`
	RunReportedAt *time.Time `db:"run_reported_at"`
	HeartbeatAt   *time.Time `db:"heartbeat_at"`
	// Reason says why a skipped, missed or cancelled row did not fire.
	Reason *string `db:"reason"`
	// OriginalScheduledAt is the planned instant of a row that was moved
	// (or rolled by a calendar) to ScheduledAt.
	OriginalScheduledAt *time.Time `db:"original_scheduled_at"`
	// Fanout is the fan-out document of an occurrence of an event that
	// targets a topic (Fanout as JSON), nil before its first round.
	Fanout    *string   `db:"fanout_json"`
	CreatedAt time.Time `db:"created_at"`
	UpdatedAt time.Time `db:"updated_at"`
}

// Attempt is one try at delivering an occurrence.
type Attempt struct {
	ID              string    `db:"id"`
	OccurrenceID    string    `db:"occurrence_id"`
	EventID         string    `db:"event_id"`
	Attempt         int       `db:"attempt"`
	Manual          bool      `db:"manual"`
	StartedAt       time.Time `db:"started_at"`
	DurationMS      int64     `db:"duration_ms"`
	StatusCode      *int      `db:"status_code"`
	Outcome         string    `db:"outcome"` // completed | retrying | failed | awaiting_ack | running
	Error           *string   `db:"error"`
	ResponseExcerpt *string   `db:"response_excerpt"`
	Truncated       bool      `db:"truncated"`
	LatenessMS      int64     `db:"lateness_ms"` // started_at − scheduled_at
	EndpointID      *string   `db:"endpoint_id"` // the endpoint it went to, if the action names one
	// ScheduledAt is its occurrence's instant: on PostgreSQL the partition
	// key, so an occurrence and its attempts share one time slice.
	ScheduledAt time.Time `db:"scheduled_at"`
	// RequestJSON is the request the attempt sent, secrets already redacted
	// (actions.SentRequest as JSON); nil when recording was off or the
	// attempt predates it.
	RequestJSON *string `db:"request_json"`
	// SubscriptionID is the subscription a fan-out delivery went to (nil
	// for an event's own action).
	SubscriptionID *string `db:"subscription_id"`
}

// Token is a minted JWT's server-side record; its ID is the JWT's jti.
type Token struct {
	ID        string     `db:"id"`
	Subject   string     `db:"subject"`
	Access    Access     `db:"access"`
	Scope     []string   `db:"-"` // stored as JSON in scope_json
	ExpiresAt time.Time  `db:"expires_at"`
	RevokedAt *time.Time `db:"revoked_at"`
	CreatedBy string     `db:"created_by"`
	CreatedAt time.Time  `db:"created_at"`
}

// IdempotencyRecord remembers the first answer to a request carrying an
// Idempotency-Key, per principal.
type IdempotencyRecord struct {
	Principal   string    `db:"principal"`
	Key         string    `db:"key"`
	RequestHash string    `db:"request_hash"`
	StatusCode  int       `db:"status_code"`
	Body        []byte    `db:"body"`
	CreatedAt   time.Time `db:"created_at"`
	ExpiresAt   time.Time `db:"expires_at"`
}

// ArchivedOccurrence is an occurrence row in the archive.
type ArchivedOccurrence struct {
	Occurrence
	ArchivedAt time.Time `db:"archived_at"`
}

// The actions of an exception.
const (
	ExceptionSkip = "skip"
	ExceptionMove = "move"
)

// Exception changes one planned instant of an event: skip it, or move it to
// To. It is keyed by the instant as planned (after DST, calendar and jitter)
// and honoured whenever the planner reaches that instant.
type Exception struct {
	EventID   string     `db:"event_id" json:"-"`
	At        time.Time  `db:"at" json:"at"`
	Action    string     `db:"action" json:"action"`
	To        *time.Time `db:"to_at" json:"to,omitempty"`
	Reason    string     `db:"reason" json:"reason,omitempty"`
	CreatedBy string     `db:"created_by" json:"created_by"`
	CreatedAt time.Time  `db:"created_at" json:"created_at"`
}

// Planned is one row the planner wants for an event: it fires at At
// (pending), or is recorded skipped with Reason. Original is the instant a
// moved or rolled row was planned at before.
type Planned struct {
	At       time.Time
	Original *time.Time
	Status   OccurrenceStatus // pending or skipped
	Reason   string
	Note     string // a skipped row's error_message: why, in words
}

// Calendar is a shared set of days on which events that honour it do not
// fire: single dates, inclusive date ranges and RRULEs (weekends), read in
// its time zone.
type Calendar struct {
	ID        string
	Name      string
	Timezone  string
	Dates     []string    // YYYY-MM-DD
	Ranges    []DateRange // inclusive
	RRules    []string    // e.g. FREQ=WEEKLY;BYDAY=SA,SU
	Tags      []string    // scope, like an event's
	Version   int64
	CreatedBy string
	CreatedAt time.Time
	UpdatedAt time.Time
	// ReplanRequestedAt is set while the events that use the calendar still
	// have to be re-planned after an edit.
	ReplanRequestedAt *time.Time
}

// DateRange is an inclusive range of days, YYYY-MM-DD.
type DateRange struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// HistoryEntry is one change in an event's audit log.
type HistoryEntry struct {
	ID      string    `db:"id" json:"id"`
	EventID string    `db:"event_id" json:"event_id"`
	At      time.Time `db:"at" json:"at"`
	Subject string    `db:"subject" json:"subject"`
	Channel string    `db:"channel" json:"channel"` // api, console, cli, scheduler
	Action  string    `db:"action" json:"action"`
	Reason  string    `db:"reason" json:"reason,omitempty"`
	// Changes is a JSON object of changed fields, each {"from", "to"};
	// sensitive values appear as fingerprints (internal/redact).
	Changes json.RawMessage `db:"-" json:"changes,omitempty"`
}

// ChargedAttempts is the attempt count the retry policy sees: the claims
// minus those that lapsed with nothing recorded (an instance cut from the
// database, stopped or killed is not the receiver's failure).
func (o *Occurrence) ChargedAttempts() int { return o.AttemptCount - o.Lapses }
