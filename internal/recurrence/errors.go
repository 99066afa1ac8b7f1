package recurrence

import (
	"errors"
	"fmt"
)

// FieldError is a validation failure that names the offending input field
// (for example "rrule", "schedule.by_day", "timezone") so the API can answer
// 400 with a message the client can act on.
type FieldError struct {
	Field  string
	Reason string
	err    error // what it wraps (ErrIterationBudget for a rule too costly to expand)
}

// Unwrap lets errors.Is see ErrIterationBudget behind a budget error.
func (e *FieldError) Unwrap() error { return e.err }

// Error renders "field: reason", the house format for validation errors.
func (e *FieldError) Error() string { return e.Field + ": " + e.Reason }

func fieldErrorf(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// ErrIterationBudget is returned (wrapped) by Expand when a window needs more
// candidate instants than Limits.MaxIterations allows; the instants found so
// far are returned alongside it so a caller can resume after the last one.
var ErrIterationBudget = errors.New("recurrence iteration budget exhausted")
