// Package harness runs qhronosd instances as hosts of their own (Linux
// network namespaces joined to the host by veth pairs) behind Toxiproxy
// links to PostgreSQL, Redis and the receivers, breaks those links, and
// checks the history of a run: what each receiver got, what the database
// recorded and what each instance says it sent. Imported only by tests.
package harness

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// History is everything a run leaves to check.
type History struct {
	Scenario string
	// Fault is when the fault began and when it healed (the last heal of
	// a flapping link).
	FaultStart, Healed time.Time
	// Takeover, when set, is the longest a lease that lapsed with its send
	// unrecorded may keep the occurrence from being sent again.
	Takeover time.Duration
	// Due is every occurrence the load made due, one per event created.
	Due []Due
	// Receipts is every request a receiver processed.
	Receipts []Receipt
	// Attempts is every attempt row the database holds.
	Attempts []Attempt
	// Sends is every "delivery sending" line of every instance.
	Sends []Send
}

// Due is one occurrence the run expects delivered. OccurrenceID and
// Status are empty when the database has no row for the event.
type Due struct {
	Key          string // the event's name, also the last element of its webhook path
	EventID      string
	OccurrenceID string
	ScheduledAt  time.Time
	Status       string // its status at the end
}

// Receipt is one request a receiver processed.
type Receipt struct {
	Key       string // from the URL path: which event it was meant for
	WebhookID string
	Attempt   int
	At        time.Time
}

// Attempt is one attempt row.
type Attempt struct {
	OccurrenceID string
	Attempt      int
	StartedAt    time.Time
	Outcome      string
}

// Send is what an instance logged right before a delivery left: the
// custody it sent under (its bucket slot's epoch: instance/slot/epoch) and
// how long it held that slot by its own clock.
type Send struct {
	Instance     string
	OccurrenceID string
	Attempt      int
	Claim        string
	LeaseUntil   time.Time
	SentAt       time.Time
}

// sendLine is the JSON of the dispatcher's "delivery sending" line.
type sendLine struct {
	Msg          string `json:"msg"`
	OccurrenceID string `json:"occurrence_id"`
	Attempt      int    `json:"attempt"`
	Slot         *int   `json:"slot"`
	Epoch        int64  `json:"epoch"`
	LeaseUntil   string `json:"lease_until"`
	SentAt       string `json:"sent_at"`
}

// ParseSends reads the "delivery sending" lines of one instance's JSON log.
// A line that does not parse is skipped unless it is a send line; those
// come back as bad, to be reported.
func ParseSends(instance, log string) (sends []Send, bad []string) {
	sc := bufio.NewScanner(strings.NewReader(log))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, `"delivery sending"`) {
			continue
		}
		var l sendLine
		if err := json.Unmarshal([]byte(line), &l); err != nil || l.Msg != "delivery sending" {
			bad = append(bad, line)
			continue
		}
		until, err1 := time.Parse(time.RFC3339Nano, l.LeaseUntil)
		at, err2 := time.Parse(time.RFC3339Nano, l.SentAt)
		if err1 != nil || err2 != nil {
			bad = append(bad, line)
			continue
		}
		if l.Slot == nil {
			bad = append(bad, line)
			continue
		}
		claim := fmt.Sprintf("%s/%d/%d", instance, *l.Slot, l.Epoch)
		sends = append(sends, Send{Instance: instance, OccurrenceID: l.OccurrenceID, Attempt: l.Attempt, Claim: claim,
			LeaseUntil: until, SentAt: at})
	}
	return sends, bad
}
