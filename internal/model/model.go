// Package model holds what Qhronos is about — events, occurrences, attempts,
// tokens — as decoded values with their states and rules, free of storage
// and transport. Every other package speaks these types; none of them
// imports a database driver.
package model

import (
	"errors"
	"time"
)

// Errors the store maps driver errors to; nothing above it sees
// sql.ErrNoRows or a driver error code.
var (
	ErrNotFound = errors.New("not found")
	ErrConflict = errors.New("conflict")
	// ErrStaleVersion is returned by optimistic updates whose expected version
	// no longer matches.
	ErrStaleVersion = errors.New("stale version")
	// ErrLeaseLost is returned when an outcome is recorded with a lease token
	// the occurrence no longer carries (fencing).
	ErrLeaseLost = errors.New("lease lost")
	// ErrUnavailable means the database could not be reached or answered
	// with a connection failure; the request may succeed when retried.
	ErrUnavailable = errors.New("database unavailable")
	// ErrStorageFull means the database could not write because its storage
	// is full (SQLite's SQLITE_FULL, PostgreSQL's disk_full); writes succeed
	// again once space returns.
	ErrStorageFull = errors.New("storage is full")
)

// RoundUp truncates t to the stored precision (microseconds), rounding up so
// that nothing is ever scheduled earlier than asked.
func RoundUp(t time.Time) time.Time {
	r := t.Truncate(time.Microsecond)
	if r.Before(t) {
		r = r.Add(time.Microsecond)
	}
	return r.UTC()
}

// SeriesEnd is the expander cursor of an event whose series has no instant
// left (a one-time event past its moment, a finished RRULE). An active event
// whose cursor is SeriesEnd and that has nothing unfinished is settled to
// inactive.
var SeriesEnd = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)
