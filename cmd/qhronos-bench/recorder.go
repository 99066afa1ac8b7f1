package main

import (
	"strings"
	"sync"
	"time"
)

// Receipt is one webhook request as the receiver saw it.
type Receipt struct {
	// DeliveryID identifies the occurrence across retries: the webhook-id
	// header, else the body's occurrence_id, else event_id|scheduled_at (the
	// original Qhronos sends neither).
	DeliveryID  string
	EventID     string
	ScheduledAt time.Time
	ReceivedAt  time.Time
	// SignatureChecked is set when --verify-signature is on; SignatureOK
	// then says whether X-Qhronos-Signature matched.
	SignatureChecked bool
	SignatureOK      bool
}

// Recorder accounts for deliveries: it counts every receipt, keeps the
// lateness of each occurrence's first receipt, and notices duplicates (the
// same delivery id twice), extra occurrences (two delivery ids for one
// one-time event) and losses (created events never received). It is safe
// for concurrent use by the receivers and the creator.
type Recorder struct {
	mu sync.Mutex
	// One map per kind of id, so that a receipt costs one lookup and one
	// store per id: the receivers share the CPU with the server measured.
	events        map[string]eventTally
	deliveries    map[string]string // delivery id → event id of its first receipt
	expected      int               // events created by this run
	perEvent      int               // deliveries each event makes (its topic's subscriptions; 1 for a webhook)
	lateness      []time.Duration
	receipts      int
	duplicates    int
	badSignatures int
	unexpected    int
	receivedExp   int // distinct expected events received
	first, last   time.Time
	sealed        bool
	done          chan struct{}
	doneClosed    bool
}

// eventTally is what a Recorder knows of one event id.
type eventTally struct {
	expected   bool // created by this run
	deliveries int  // distinct delivery ids received
	receipts   int  // duplicates included
}

// NewRecorder returns an empty Recorder sized for the planned number of
// events, so that receipts do not pay for growing its maps mid-run.
func NewRecorder(planned int) *Recorder { return NewFanoutRecorder(planned, 1) }

// NewFanoutRecorder is NewRecorder for events that each make perEvent
// deliveries (a topic's subscriptions), each its own delivery id.
func NewFanoutRecorder(planned, perEvent int) *Recorder {
	return &Recorder{
		perEvent:   max(perEvent, 1),
		events:     make(map[string]eventTally, planned),
		deliveries: make(map[string]string, planned),
		lateness:   make([]time.Duration, 0, planned),
		done:       make(chan struct{}),
	}
}

// Expect registers an event created by this run. A delivery that arrived
// before its create answer was read is matched here.
func (r *Recorder) Expect(eventID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.events[eventID]
	if e.expected {
		return
	}
	e.expected = true
	r.events[eventID] = e
	r.expected++
	if e.deliveries >= r.perEvent {
		r.receivedExp++
		r.unexpected -= e.receipts
	}
	r.maybeDone()
}

// Seal says no more events will be expected; Done closes once every
// expected event has been received.
func (r *Recorder) Seal() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sealed = true
	r.maybeDone()
}

// Done is closed when the recorder is sealed and every expected event has
// been received at least once.
func (r *Recorder) Done() <-chan struct{} { return r.done }

// Record accounts for one receipt.
func (r *Recorder) Record(rc Receipt) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.receipts++
	if r.first.IsZero() || rc.ReceivedAt.Before(r.first) {
		r.first = rc.ReceivedAt
	}
	if rc.ReceivedAt.After(r.last) {
		r.last = rc.ReceivedAt
	}
	if rc.SignatureChecked && !rc.SignatureOK {
		r.badSignatures++
	}
	e := r.events[rc.EventID]
	e.receipts++
	if !e.expected {
		r.unexpected++
	}
	if _, seen := r.deliveries[rc.DeliveryID]; seen {
		r.duplicates++
	} else {
		r.deliveries[rc.DeliveryID] = rc.EventID
		r.lateness = append(r.lateness, rc.ReceivedAt.Sub(rc.ScheduledAt))
		e.deliveries++
		if e.deliveries == r.perEvent && e.expected {
			r.receivedExp++
			r.maybeDone()
		}
	}
	r.events[rc.EventID] = e
}

func (r *Recorder) maybeDone() {
	if r.sealed && !r.doneClosed && r.receivedExp == r.expected {
		close(r.done)
		r.doneClosed = true
	}
}

// Tally is a snapshot of a Recorder's accounting.
type Tally struct {
	Expected         int // events created by this run
	Receipts         int // every webhook request received, duplicates included
	Occurrences      int // distinct delivery ids received
	Duplicates       int // receipts of a delivery id already received
	ExtraOccurrences int // distinct delivery ids beyond one per event
	Lost             int // created events never received
	Unexpected       int // receipts for events this run did not create
	BadSignatures    int
	First, Last      time.Time
	Lateness         Summary // over the first receipt of each occurrence
	DeliveryIDs      []string
}

// Tally returns the accounting so far; sample bounds DeliveryIDs.
func (r *Recorder) Tally(sample int) Tally {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := Tally{
		Expected:      r.expected,
		Receipts:      r.receipts,
		Occurrences:   len(r.deliveries),
		Duplicates:    r.duplicates,
		Lost:          r.expected - r.receivedExp,
		Unexpected:    r.unexpected,
		BadSignatures: r.badSignatures,
		First:         r.first,
		Last:          r.last,
		Lateness:      summarize(r.lateness),
	}
	for _, e := range r.events {
		t.ExtraOccurrences += max(e.deliveries-r.perEvent, 0)
	}
	for id, ev := range r.deliveries {
		if len(t.DeliveryIDs) >= sample {
			break
		}
		if r.events[ev].expected {
			id, _, _ = strings.Cut(id, "#") // a fan-out delivery's occurrence
			t.DeliveryIDs = append(t.DeliveryIDs, id)
		}
	}
	return t
}
