package model

import (
	"encoding/json"
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
