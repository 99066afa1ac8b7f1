// Package events says what a change to an event is: the decoded body of a
// create or an edit and the rules it must keep (Validator), and the values
// the events service (internal/lifecycle) and its callers exchange. It holds
// no storage: the API depends on it without reaching a database driver.
package events

import (
	"errors"
	"time"

	"github.com/qhronos/qhronos/internal/model"
)

// IdempotencyTTL is how long an Idempotency-Key replays its first answer.
const IdempotencyTTL = 24 * time.Hour

// Once makes a write answer once per Idempotency-Key: the first answer is
// stored per principal in the write's own transaction, so a retried request
// — even a concurrent one — gets it replayed instead of a second write; the
// same key with a different request is 409. Without a key the write still
// runs in one transaction, with the history entry that records it.
type Once struct {
	Key         string
	Principal   string
	RequestHash string
	// Render turns the write's result into the answer stored and sent.
	Render func(result any) (status int, body []byte, err error)
}

// Answer is a write's answer, fresh or replayed.
type Answer struct {
	Status   int
	Body     []byte
	Replayed bool
}

// Precondition checks the stored event before a change (the API's
// If-Match); nil means the change is unconditional.
type Precondition func(ev *model.Event) error

// Ack is a WebSocket client's acknowledgement of a delivery.
type Ack struct {
	OccurrenceID string
	EventID      string // optional; must match when sent
	ClientName   string // the connection's client name
	// CanRead is the connection's token's read right over event tags.
	CanRead func(tags []string) bool
}

// Errors of an acknowledgement.
var (
	// ErrUnknownOccurrence answers an ack the listener may not make:
	// unknown, unreadable by its token, or never sent to its client name.
	// Answering them alike reveals nothing about other tenants.
	ErrUnknownOccurrence = errors.New("unknown occurrence")
	// ErrNotAwaitingAck: the occurrence is the listener's but no longer
	// awaits an acknowledgement.
	ErrNotAwaitingAck = errors.New("not awaiting acknowledgement")
)

// MaxBatch is the most events one batch create (POST /events/batch) takes.
const MaxBatch = 1000

// Batch is a batch create: its items in input order, and how to tell an
// item's own fault (answered in that item's result, e.g. a 400 naming the
// field) from a failure of the server, which fails the whole batch.
type Batch struct {
	Items     []BatchItem
	ItemFault func(error) bool
}

// BatchItem is one item of a batch: its decoded input, or why it could not
// be decoded.
type BatchItem struct {
	Input *Input
	Err   error
}

// BatchResult is one item's outcome: the event created, or why not.
type BatchResult struct {
	Event *model.Event
	Err   error
}
