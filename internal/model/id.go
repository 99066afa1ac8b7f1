package model

import "github.com/google/uuid"

// NewID returns the id of a new stored row (event, occurrence, attempt,
// calendar, endpoint, channel): a UUIDv7 (RFC 9562), which begins with its
// millisecond of creation. Rows written together then sit together in
// every index that leads with their id — the primary keys, the tags and
// history looked up by event, an event's occurrences — so a bulk create or
// a busy hot path appends near the right edge of each index instead of
// touching a random page of it per row (random v4 ids made a million-event
// import slow down as the indexes outgrew the cache). The 74 random bits
// keep ids unguessable; the creation time they reveal is public already
// (created_at).
func NewID() string { return uuid.Must(uuid.NewV7()).String() }
