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
	Kinds []string
	// Tags scope the channel: with tags it takes only the notices about
	// events and endpoints that carry one of them; empty takes every
	// notice, installation-wide ones (a dependency down) included.
	Tags      []string
	CreatedBy string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// FailedOccurrence is an occurrence that failed after its last retry, or
// whose run failed or timed out, as the notification scanner reports it.
type FailedOccurrence struct {
	ID           string    `db:"id"`
	Status       string    `db:"status"`     // failed or timed_out
	RunStatus    *string   `db:"run_status"` // the run's report ("failed": the run failed, not its delivery)
	EventID      string    `db:"event_id"`
	EventName    string    `db:"event_name"`
	EndpointID   *string   `db:"endpoint_id"`
	ScheduledAt  time.Time `db:"scheduled_at"`
	AttemptCount int       `db:"attempt_count"`
	StatusCode   *int      `db:"status_code"`
	Error        *string   `db:"error_message"`
	UpdatedAt    time.Time `db:"updated_at"`
	Tags         []string  `db:"-"` // the event's
	TagsJSON     string    `db:"tags_json"`
}

// EndedEvent is an event whose series ended (it became inactive).
type EndedEvent struct {
	ID         string     `db:"id"`
	Name       string     `db:"name"`
	EndpointID *string    `db:"endpoint_id"`
	LastRunAt  *time.Time `db:"last_run_at"`
	UpdatedAt  time.Time  `db:"updated_at"`
	Tags       []string   `db:"-"`
	TagsJSON   string     `db:"tags_json"`
}

// UnfiredOccurrence is an instant that did not fire, as the notification
// scanner reports it: recorded `missed`, or still `pending` well past its
// instant (the dead man's switch).
type UnfiredOccurrence struct {
	ID          string    `db:"id"`
	Status      string    `db:"status"` // missed or pending
	Reason      *string   `db:"reason"`
	EventID     string    `db:"event_id"`
	EventName   string    `db:"event_name"`
	EndpointID  *string   `db:"endpoint_id"`
	ScheduledAt time.Time `db:"scheduled_at"`
	Error       *string   `db:"error_message"`
	UpdatedAt   time.Time `db:"updated_at"`
	Tags        []string  `db:"-"`
	TagsJSON    string    `db:"tags_json"`
}

// MissedAlert is an event whose operators were told that its instants did
// not fire; it stays until the event fires again, so an outage is told
// once.
type MissedAlert struct {
	EventID    string
	FirstAt    time.Time
	LastAt     time.Time
	Instants   int64
	NotifiedAt time.Time
}

// ScanCursor is how far a scan has read rows ordered by (updated_at, id).
type ScanCursor struct {
	At     time.Time
	LastID string
}

// Outcomes of a sent notice (SentNotice.Outcome).
const (
	NoticeDelivered = "delivered"
	NoticeFailed    = "failed"
)

// NoticesKeep is how many sent notices are kept per channel: the newest
// ones. Notices are rate-limited (min_interval, digests), so this spans
// weeks for a busy channel; the table stays small without a retention job.
const NoticesKeep = 200

// SentNotice is one notice sent to one stored channel.
type SentNotice struct {
	ID        string
	ChannelID string
	At        time.Time
	Kind      string
	Summary   string // the notice's title (the mail subject)
	Outcome   string // NoticeDelivered or NoticeFailed
	// Answer is the receiver's answer (HTTP status, mail server reply) or
	// the error that stopped the send.
	Answer string
	Test   bool
}
