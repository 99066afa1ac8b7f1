package events

import "time"

// MaxBackfill bounds the instants of one backfill.
const MaxBackfill = 10_000

// Backfill is a backfill as sent: POST /events/{id}/backfill.
type Backfill struct {
	From, To When
	// RespectExceptions applies the event's exceptions and calendars (the
	// default); without it every reading of the rule fires.
	RespectExceptions bool
}

// BackfillResult is a backfill's answer: Instants = Created + Skipped +
// Existing.
type BackfillResult struct {
	EventID  string    `json:"event_id"`
	From     time.Time `json:"from"`
	To       time.Time `json:"to"`
	Instants int       `json:"instants"`
	Created  int       `json:"created"`
	Skipped  int       `json:"skipped"`
	Existing int       `json:"existing"`
}
