package model

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// Topic is an entry of the catalogue of what can fire: events target it by
// name, subscriptions name it (or a pattern of names). Schema, when set, is
// the JSON Schema the metadata of the events that target it follows.
type Topic struct {
	Name        string
	Description string
	Schema      json.RawMessage // nil: any metadata
	Version     int64
	CreatedBy   string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// Subscription asks for the firings of the topics its pattern names,
// delivered to one endpoint, when its filter (a CEL expression; empty: every
// firing) says so. Its tags scope it like every resource, and choose what it
// receives: with tags, the firings of events carrying one of them.
type Subscription struct {
	ID          string
	Topic       string // a topic's name or a pattern with * segments
	EndpointID  string
	Filter      string
	Description string
	Tags        []string
	Paused      bool
	Version     int64
	CreatedBy   string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// SubscriptionFilter selects subscriptions for a list.
type SubscriptionFilter struct {
	Topic        string // exactly this pattern
	EndpointID   string
	Paused       *bool
	AnyTags      []string
	AllTags      []string
	Scope        []string
	Unrestricted bool
	After        *PageCursor // created_at, id; newest first
	Limit        int
}

// ActionTopic is the action type of an event that targets a topic: its
// params are {"topic": name}. The API shows it as the event's "topic".
const ActionTopic = "topic"

// TopicParams are the params of a topic action.
type TopicParams struct {
	Topic string `json:"topic"`
}

// Topic is the topic the event targets, "" when it runs an action.
func (e *Event) Topic() string {
	if e.Action.Type != ActionTopic {
		return ""
	}
	var p TopicParams
	if json.Unmarshal(e.Action.Params, &p) != nil {
		return ""
	}
	return p.Topic
}

// TopicAction is the action of an event that targets topic.
func TopicAction(topic string) Action {
	params, _ := json.Marshal(TopicParams{Topic: topic})
	return Action{Type: ActionTopic, Params: params}
}

// Fanout is the fan-out of one occurrence of an event that targets a topic,
// written with the occurrence's outcome after each round of deliveries.
// The subscriptions that matched are fixed at the first round: one added
// later does not receive the occurrence. Delivered subscriptions are known
// by their completed attempt; the document keeps only the counts and the
// subscriptions whose delivery is not a success.
type Fanout struct {
	Subscriptions int `json:"subscriptions"` // matched at the first round, filtered out included
	Delivered     int `json:"delivered"`
	// Filtered are the subscriptions whose filter said no.
	Filtered []string `json:"filtered,omitempty"`
	// Failed are the subscriptions whose delivery failed for good, with why.
	Failed []FanoutFailure `json:"failed,omitempty"`
	// Pending are the deliveries still to make, by subscription: retries,
	// deliveries an endpoint deferred, replays.
	Pending map[string]FanoutPending `json:"pending,omitempty"`
}

// FanoutFailure is a subscription whose delivery failed for good.
type FanoutFailure struct {
	Subscription string `json:"subscription_id"`
	Error        string `json:"error"`
}

// FanoutPending is a delivery still to make: the attempts made so far
// (within the retry budget; a replay starts again at 0) and when the next
// one is due.
type FanoutPending struct {
	Attempts int       `json:"attempts"`
	NextAt   time.Time `json:"next_at"`
	Manual   bool      `json:"manual,omitempty"`
}

// FanoutSummary is what the API shows of a Fanout.
type FanoutSummary struct {
	Subscriptions int `json:"subscriptions"`
	Delivered     int `json:"delivered"`
	Failed        int `json:"failed"`
	Filtered      int `json:"filtered"`
	Pending       int `json:"pending"`
}

// Summary counts the fan-out's deliveries by state.
func (f *Fanout) Summary() FanoutSummary {
	return FanoutSummary{Subscriptions: f.Subscriptions, Delivered: f.Delivered, Failed: len(f.Failed),
		Filtered: len(f.Filtered), Pending: len(f.Pending)}
}

// DecodeFanout decodes an occurrence's fan-out document; nil for none.
func DecodeFanout(doc *string) (*Fanout, error) {
	if doc == nil || *doc == "" {
		return nil, nil
	}
	var f Fanout
	if err := json.Unmarshal([]byte(*doc), &f); err != nil {
		return nil, fmt.Errorf("decode fan-out: %w", err)
	}
	return &f, nil
}

// Encode is the document to store.
func (f *Fanout) Encode() *string {
	b, _ := json.Marshal(f)
	s := string(b)
	return &s
}

// The states of one subscription's delivery of an occurrence.
const (
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
	DeliveryPending   = "pending"
	DeliveryFiltered  = "filtered"
)

// Delivery is one subscription's delivery of an occurrence, for the API.
type Delivery struct {
	SubscriptionID string
	EndpointID     *string
	Status         string
	Error          string
	NextAttemptAt  *time.Time
	Attempts       []Attempt
}

// Settle records the result of one subscription's delivery in a round:
// status is completed, retrying (due again at next), pending (deferred by
// its endpoint to next, attempt uncounted) or failed (with why).
func (f *Fanout) Settle(sub string, status OccurrenceStatus, attempt int, manual bool, next time.Time, why string) {
	delete(f.Pending, sub)
	switch status {
	case OccurrenceCompleted:
		f.Delivered++
	case OccurrenceFailed:
		f.Failed = append(f.Failed, FanoutFailure{Subscription: sub, Error: why})
	default:
		if f.Pending == nil {
			f.Pending = map[string]FanoutPending{}
		}
		// A deferred manual delivery stays manual; a retry waits its backoff.
		f.Pending[sub] = FanoutPending{Attempts: attempt, NextAt: next.UTC(), Manual: manual && status == OccurrencePending}
	}
}

// Outcome is the occurrence's state after a round: retrying while a
// delivery is pending (due at the earliest), failed when one failed for
// good, completed otherwise.
func (f *Fanout) Outcome() (OccurrenceStatus, *time.Time, *string) {
	if len(f.Pending) > 0 {
		var next time.Time
		for _, p := range f.Pending {
			if next.IsZero() || p.NextAt.Before(next) {
				next = p.NextAt
			}
		}
		msg := fmt.Sprintf("%d of %d deliveries pending", len(f.Pending), f.Subscriptions-len(f.Filtered))
		return OccurrenceRetrying, &next, &msg
	}
	if len(f.Failed) > 0 {
		first := f.Failed[0]
		msg := fmt.Sprintf("%d of %d deliveries failed (subscription %s: %s)", len(f.Failed),
			f.Subscriptions-len(f.Filtered), first.Subscription, first.Error)
		return OccurrenceFailed, nil, &msg
	}
	return OccurrenceCompleted, nil, nil
}

// ReplayFailed makes every failed delivery due again at now, as an
// operator's replay (manual, a fresh retry budget).
func (f *Fanout) ReplayFailed(now time.Time) {
	for _, fl := range f.Failed {
		f.replay(fl.Subscription, now)
	}
	f.Failed = nil
}

// ReplayOne makes one subscription's delivery due again at now, whether it
// failed or was delivered; it reports false when the subscription had no
// delivery of this occurrence to replay (filtered out, or not matched).
func (f *Fanout) ReplayOne(sub string, delivered bool, now time.Time) bool {
	if i := slices.IndexFunc(f.Failed, func(fl FanoutFailure) bool { return fl.Subscription == sub }); i >= 0 {
		f.Failed = slices.Delete(f.Failed, i, i+1)
	} else if _, ok := f.Pending[sub]; ok {
		// already to be sent: sent now
	} else if delivered {
		f.Delivered--
	} else {
		return false
	}
	f.replay(sub, now)
	return true
}

func (f *Fanout) replay(sub string, now time.Time) {
	if f.Pending == nil {
		f.Pending = map[string]FanoutPending{}
	}
	f.Pending[sub] = FanoutPending{NextAt: now.UTC(), Manual: true}
}
