package recurrence

import "time"

// Limits bound what a rule may ask of the engine. A zero field takes its
// default, so Limits{} is a valid value.
type Limits struct {
	// MinInterval rejects rules whose instants can come closer together
	// than this (default 1 s).
	MinInterval time.Duration
	// MaxCount caps an RRULE/schedule COUNT (default 100000); COUNT rules are
	// expanded from DTSTART, so this also bounds their cost.
	MaxCount int
	// MaxIterations caps the candidate instants one Expand call may examine
	// (default 1000000).
	MaxIterations int
}

const (
	defaultMinInterval   = time.Second
	defaultMaxCount      = 100000
	defaultMaxIterations = 1000000
	// maxTextLen caps every free-text input (rrule, cron, timezone, start_time).
	maxTextLen = 4096
	// maxListLen caps every list in a schedule object.
	maxListLen = 366
	// maxExdates caps schedule.exdates.
	maxExdates = 1000
	// maxInterval keeps INTERVAL arithmetic far from overflow.
	maxInterval = 1000000
)

// DefaultLimits returns the limits applied when a field of Limits is zero.
func DefaultLimits() Limits {
	return Limits{MinInterval: defaultMinInterval, MaxCount: defaultMaxCount, MaxIterations: defaultMaxIterations}
}

// withDefaults fills zero (or negative) fields with their defaults.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MinInterval <= 0 {
		l.MinInterval = d.MinInterval
	}
	if l.MaxCount <= 0 {
		l.MaxCount = d.MaxCount
	}
	if l.MaxIterations <= 0 {
		l.MaxIterations = d.MaxIterations
	}
	return l
}
