package notify

import (
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
)

// message is what a channel sends: one notice or a digest of failures,
// rendered once for every channel.
type message struct {
	// ID is the webhook-id of the notice: unique per notice, the same on
	// every retry.
	ID      string
	Kind    Kind
	At      time.Time
	Subject string
	Text    string
	// Data is the webhook payload's data member.
	Data any
}

// noticeData is a single notice in a webhook payload.
type noticeData struct {
	Title        string `json:"title"`
	Text         string `json:"text"`
	EndpointID   string `json:"endpoint_id,omitempty"`
	EventID      string `json:"event_id,omitempty"`
	OccurrenceID string `json:"occurrence_id,omitempty"`
	// Tags are the event's or endpoint's: a receiver can route on them.
	Tags   []string          `json:"tags,omitempty"`
	Fields map[string]string `json:"fields,omitempty"`
}

func noticeMessage(n Notice) message {
	return message{ID: "ntf_" + uuid.NewString(), Kind: n.Kind, At: n.At.UTC(), Subject: n.Title,
		Text: n.Text, Data: noticeData{Title: n.Title, Text: n.Text, EndpointID: n.EndpointID, EventID: n.EventID,
			OccurrenceID: n.OccurrenceID, Tags: n.Tags, Fields: n.Fields}}
}

// digestListed is how many failures a digest lists; the rest are counted.
const digestListed = 20

// failure is one failed delivery in a digest.
type failure struct {
	EventID      string    `json:"event_id"`
	EventName    string    `json:"event_name,omitempty"`
	OccurrenceID string    `json:"occurrence_id"`
	EndpointID   string    `json:"endpoint_id,omitempty"`
	Error        string    `json:"error"`
	At           time.Time `json:"at"`
}

// digestData is a digest in a webhook payload.
type digestData struct {
	Title    string    `json:"title"`
	Text     string    `json:"text"`
	Count    int       `json:"count"`
	Failures []failure `json:"failures"`
	More     int       `json:"more"`
	Since    time.Time `json:"since"`
}

// digest collects one channel's failed deliveries until it is sent.
type digest struct {
	since  time.Time
	count  int
	listed []failure
}

func (d *digest) add(n Notice) {
	d.count++
	if len(d.listed) < digestListed {
		d.listed = append(d.listed, failure{EventID: n.EventID, EventName: n.Fields["event_name"],
			OccurrenceID: n.OccurrenceID, EndpointID: n.EndpointID, Error: n.Fields["error"], At: n.At.UTC()})
	}
}

func (d *digest) message(now time.Time) message {
	title := fmt.Sprintf("%d deliveries failed after their last retry", d.count)
	if d.count == 1 {
		title = "1 delivery failed after its last retry"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s since %s.\n\n", title, d.since.UTC().Format(time.RFC3339))
	for _, f := range d.listed {
		name := f.EventID
		if f.EventName != "" {
			name = fmt.Sprintf("%s (%s)", f.EventName, f.EventID)
		}
		fmt.Fprintf(&b, "- event %s, occurrence %s at %s: %s\n", name, f.OccurrenceID,
			f.At.Format(time.RFC3339), orNone(f.Error))
	}
	more := d.count - len(d.listed)
	if more > 0 {
		fmt.Fprintf(&b, "… and %d more\n", more)
	}
	return message{ID: "ntf_" + uuid.NewString(), Kind: DeliveryFailed, At: now.UTC(), Subject: title,
		Text: b.String(), Data: digestData{Title: title, Text: b.String(), Count: d.count, Failures: d.listed,
			More: more, Since: d.since.UTC()}}
}

func orNone(s string) string {
	if s == "" {
		return "no error recorded"
	}
	return s
}
