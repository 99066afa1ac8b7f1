package model

import "time"

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

// ArchivedOccurrence is an occurrence row in the archive.
type ArchivedOccurrence struct {
	Occurrence
	ArchivedAt time.Time `db:"archived_at"`
}
