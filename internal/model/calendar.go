package model

import "time"

// CalendarFilter selects calendars for listing; tags work as on events.
type CalendarFilter struct {
	AnyTags []string // at least one of these tags
	AllTags []string // every one of these tags
	// Scope restricts to calendars sharing a tag with it unless
	// Unrestricted.
	Scope        []string
	Unrestricted bool
	// After is the keyset cursor: rows strictly older than (CreatedAt, ID).
	After *CalendarCursor
	Limit int
}

// CalendarCursor is a keyset position in the newest-first listing.
type CalendarCursor struct {
	CreatedAt time.Time
	ID        string
}
