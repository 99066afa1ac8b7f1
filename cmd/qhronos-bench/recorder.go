package main

import (
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
	mu            sync.Mutex
	expected      map[string]bool // event id → created by this run
	eventIDs      map[string]int  // event id → distinct delivery ids received
	deliveries    map[string]int  // delivery id → receipts
	deliveryEvent map[string]string
	eventReceipts map[string]int // event id → receipts, duplicates included
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

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder {
	return &Recorder{
		expected:      make(map[string]bool),
		eventIDs:      make(map[string]int),
		deliveries:    make(map[string]int),
		deliveryEvent: make(map[string]string),
		eventReceipts: make(map[string]int),
		done:          make(chan struct{}),
	}
}

// Expect registers an event created by this run. A delivery that arrived
// before its create answer was read is matched here.
func (r *Recorder) Expect(eventID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.expected[eventID] {
		return
	}
	r.expected[eventID] = true
	if r.eventIDs[eventID] > 0 {
		r.receivedExp++
		r.unexpected -= r.eventReceipts[eventID]
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
	r.eventReceipts[rc.EventID]++
	if !r.expected[rc.EventID] {
		r.unexpected++
	}
	n := r.deliveries[rc.DeliveryID]
	r.deliveries[rc.DeliveryID] = n + 1
	if n > 0 {
		r.duplicates++
		return
	}
	r.deliveryEvent[rc.DeliveryID] = rc.EventID
	r.lateness = append(r.lateness, rc.ReceivedAt.Sub(rc.ScheduledAt))
	r.eventIDs[rc.EventID]++
	if r.eventIDs[rc.EventID] == 1 && r.expected[rc.EventID] {
		r.receivedExp++
		r.maybeDone()
	}
}

func (r *Recorder) maybeDone() {
	if r.sealed && !r.doneClosed && r.receivedExp == len(r.expected) {
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
		Expected:      len(r.expected),
		Receipts:      r.receipts,
		Occurrences:   len(r.deliveries),
		Duplicates:    r.duplicates,
		Lost:          len(r.expected) - r.receivedExp,
		Unexpected:    r.unexpected,
		BadSignatures: r.badSignatures,
		First:         r.first,
		Last:          r.last,
		Lateness:      summarize(r.lateness),
	}
	for _, n := range r.eventIDs {
		t.ExtraOccurrences += n - 1
	}
	for id, ev := range r.deliveryEvent {
		if len(t.DeliveryIDs) >= sample {
			break
		}
		if r.expected[ev] {
			t.DeliveryIDs = append(t.DeliveryIDs, id)
		}
	}
	return t
}
