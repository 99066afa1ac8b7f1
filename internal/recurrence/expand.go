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
	out, err := r.expand(from, to, limit, false)
	if out == nil {
		return nil, err
	}
	return out.times, err
}

// Instant is one planned instant of a series. Skipped marks a local time
// that does not exist (spring-forward gap) which the rule's DST policy drops:
// it does not fire, and At is where it would have been read with the offset
// before the gap.
type Instant struct {
	At      time.Time
	Skipped bool
}

// ExpandInstants is Expand that also returns the readings the DST policy
// skipped (Skipped true), in order, all inside [from, to); limit counts both
// kinds. No two share an At: where a skipped reading would fall on an instant
// that fires, only the firing one is returned. The product records skipped
// readings in its ledger, so a DST gap is visible rather than silent.
func ExpandInstants(r *Rule, from, to time.Time, limit int) ([]Instant, error) {
	out, err := r.expand(from, to, limit, true)
	if out == nil {
		return nil, err
	}
	return out.all, err
}

// expand runs the rule's source; a nil series means no window to expand.
func (r *Rule) expand(from, to time.Time, limit int, skips bool) (*series, error) {
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
	// Passed to an interface method, both escape: one allocation holds them.
	run := &struct {
		out series
		b   budget
	}{newSeries(from, to, limit, skips), budget{left: r.limits.MaxIterations, total: r.limits.MaxIterations, ctx: r.ctx}}
	return &run.out, r.src.expand(&run.out, &run.b)
}
