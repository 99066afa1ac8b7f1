package recurrence

import (
	"errors"
	"time"
)

// Expand returns the rule's instants in [from, to): UTC, microsecond
// precision, sorted, unique, at most limit of them. It is a pure function of
// its arguments, and expanding [a, b) then [b, c) gives the same instants as
// [a, c). If the window needs more than Limits.MaxIterations candidates the
// instants found so far are returned with an error wrapping
// ErrIterationBudget; a caller may continue after the last one.
func Expand(r *Rule, from, to time.Time, limit int) ([]time.Time, error) {
	if r == nil {
		return nil, errors.New("expand: nil rule")
	}
	if limit < 1 {
		return nil, errors.New("expand: limit must be positive")
	}
	from, to = from.UTC(), to.UTC()
	if !from.Before(to) {
		return nil, nil
	}
	return r.src.expand(from, to, limit, newBudget(r.limits.MaxIterations))
}
