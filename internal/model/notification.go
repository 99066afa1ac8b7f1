package model

import "time"

// Notification channel types.
const (
	ChannelWebhook = "webhook"
	ChannelEmail   = "email"
)

// NotificationChannel is an operator's channel for notices, managed through
// /notification-channels (channels in the configuration are not stored).
type NotificationChannel struct {
	ID   string
	Name string
	Type string // ChannelWebhook or ChannelEmail
	URL  string // webhook only
	// Secret is the sealed signing secret of a webhook (AES-GCM); never
	// plaintext, never shown.
	Secret []byte
	To     []string // email only
	// Kinds are the notice kinds wanted; empty means every kind.
	Kinds     []string
	CreatedBy string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// FailedOccurrence is an occurrence that failed after its last retry, as
// the notification scanner reports it.
type FailedOccurrence struct {
	ID           string    `db:"id"`
	EventID      string    `db:"event_id"`
	EventName    string    `db:"event_name"`
	EndpointID   *string   `db:"endpoint_id"`
	ScheduledAt  time.Time `db:"scheduled_at"`
	AttemptCount int       `db:"attempt_count"`
	StatusCode   *int      `db:"status_code"`
	Error        *string   `db:"error_message"`
	UpdatedAt    time.Time `db:"updated_at"`
}

// EndedEvent is an event whose series ended (it became inactive).
type EndedEvent struct {
	ID         string     `db:"id"`
	Name       string     `db:"name"`
	EndpointID *string    `db:"endpoint_id"`
	LastRunAt  *time.Time `db:"last_run_at"`
	UpdatedAt  time.Time  `db:"updated_at"`
}

// ScanCursor is how far a scan has read rows ordered by (updated_at, id).
type ScanCursor struct {
	At     time.Time
	LastID string
}
