// Package recurrence is the pure recurrence engine: it compiles an event's
// timing (one-time start, RFC 5545 RRULE, the Qhronos schedule object, or cron)
// into an immutable Rule and expands it over explicit windows [from, to).
//
// Nothing here reads the clock or does I/O; every function is a function of
// its arguments, so the scheduler can expand any window on any instance and
// get the same instants. Recurrence is evaluated in wall-clock time of the
// event's IANA zone; the default DST behaviour per source and the per-event
// DST policy are documented in docs/recurrence.md and enforced by the tables
// in dst_test.go and dst_policy_test.go.
package recurrence

// Zone data is embedded so that a container without /usr/share/zoneinfo
// evaluates "Europe/Prague" exactly like a developer laptop.
import _ "time/tzdata"
