// Package repository persists events, occurrences, attempts, tokens and
// idempotency keys. One Store serves both backends (SQLite and PostgreSQL);
// the dialect absorbs the few differences, and one contract test suite runs
// against both.
package repository

import (
	"errors"
	"time"
)

// Errors every store method maps driver errors to; nothing above this package
// sees sql.ErrNoRows or a driver error code.
var (
	ErrNotFound = errors.New("not found")
	ErrConflict = errors.New("conflict")
	// ErrStaleVersion is returned by optimistic updates whose expected version
	// no longer matches.
	ErrStaleVersion = errors.New("stale version")
	// ErrLeaseLost is returned when an outcome is recorded with a lease token
	// the occurrence no longer carries (fencing).
	ErrLeaseLost = errors.New("lease lost")
)

// EventStatus is the life-cycle state of an event.
type EventStatus string

const (
	EventActive   EventStatus = "active"
	EventPaused   EventStatus = "paused"
	EventInactive EventStatus = "inactive" // the series ended, or a one-time event fired
	EventDeleted  EventStatus = "deleted"  // soft-deleted; reads answer 404
)

// OccurrenceStatus is the life-cycle state of one occurrence.
type OccurrenceStatus string

const (
	OccurrencePending     OccurrenceStatus = "pending"
	OccurrenceDispatching OccurrenceStatus = "dispatching" // leased by a worker
	OccurrenceRetrying    OccurrenceStatus = "retrying"
	OccurrenceAwaitingAck OccurrenceStatus = "awaiting_ack"
	OccurrenceCompleted   OccurrenceStatus = "completed"
	OccurrenceFailed      OccurrenceStatus = "failed"
	OccurrenceMissed      OccurrenceStatus = "missed"
	OccurrenceCancelled   OccurrenceStatus = "cancelled"
)

// Terminal reports whether no further attempt will be made.
func (s OccurrenceStatus) Terminal() bool {
	switch s {
	case OccurrenceCompleted, OccurrenceFailed, OccurrenceMissed, OccurrenceCancelled:
		return true
	}
	return false
}

// Access is a token's access level: read < write < admin.
type Access string

const (
	AccessRead  Access = "read"
	AccessWrite Access = "write"
	AccessAdmin Access = "admin"
)

// Event is a scheduled thing: a one-time moment or a recurrence, plus the
// action to run at each occurrence.
type Event struct {
	ID          string    `db:"id"`
	Name        string    `db:"name"`
	Description string    `db:"description"`
	StartTime   time.Time `db:"start_time"`
	Timezone    string    `db:"timezone"`
	RRule       *string   `db:"rrule"`
	Schedule    JSON      `db:"schedule"` // the Qhronos schedule object as sent (interval filled in), or nil
	Cron        *string   `db:"cron"`
	ActionType  string    `db:"action_type"`
	Action      JSON      `db:"action"`  // {"type":…,"params":…}
	Webhook     string    `db:"webhook"` // legacy field, echoed back
	// HMACSecret and PreviousSecret hold AES-GCM ciphertext; never plaintext.
	HMACSecret            []byte      `db:"hmac_secret"`
	PreviousSecret        []byte      `db:"previous_secret"`
	PreviousSecretExpires *time.Time  `db:"previous_secret_expires_at"`
	Tags                  []string    `db:"-"` // stored in event_tags and events.tags_json
	Metadata              JSON        `db:"metadata"`
	Retry                 JSON        `db:"retry"`      // {max_attempts, initial_backoff, max_backoff, retry_4xx} or nil
	CatchUp               string      `db:"catch_up"`   // all | latest | none
	TimeoutMS             int64       `db:"timeout_ms"` // 0 = server default
	Status                EventStatus `db:"status"`
	LastStatus            string      `db:"last_status"`
	CreatedBy             string      `db:"created_by"`
	CreatedVia            string      `db:"created_via"`
	Version               int64       `db:"version"`
	ExpandedUntil         *time.Time  `db:"expanded_until"` // expander cursor: instants before it are materialized
	NextRunAt             *time.Time  `db:"next_run_at"`
	LastRunAt             *time.Time  `db:"last_run_at"`
	CreatedAt             time.Time   `db:"created_at"`
	UpdatedAt             time.Time   `db:"updated_at"`
	DeletedAt             *time.Time  `db:"deleted_at"`
}

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
	ManualRetry    bool       `db:"manual_retry"`
	AttemptCount   int        `db:"attempt_count"`
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
	CreatedAt      time.Time  `db:"created_at"`
	UpdatedAt      time.Time  `db:"updated_at"`
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
	Outcome         string    `db:"outcome"` // completed | retrying | failed | awaiting_ack
	Error           *string   `db:"error"`
	ResponseExcerpt *string   `db:"response_excerpt"`
	Truncated       bool      `db:"truncated"`
	LatenessMS      int64     `db:"lateness_ms"` // started_at − scheduled_at
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
