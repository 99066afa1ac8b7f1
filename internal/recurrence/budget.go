package recurrence

import (
	"context"
	"fmt"
)

// budget counts the candidates one Expand call examines — periods, days,
// period starts and readings, wherever the iteration spends work — so that
// no rule, however sparse, can make a call unbounded; and it stops the work
// when the caller's context ends (checked every ctxEvery candidates).
type budget struct {
	left, total int
	ctx         context.Context // nil: none
	ticks       int
	// field and freq name the rule in the error ("rrule", "SECONDLY").
	field, freq string
	// beforeWindow is true while a COUNT rule still walks from DTSTART
	// towards the window: running out there is the window's fault (field
	// "after"), not the rule's.
	beforeWindow bool
}

const ctxEvery = 1024

func newBudget(n int) *budget { return &budget{left: n, total: n} }

// spend takes one candidate from the budget; an error means stop: the
// budget is exhausted (a *FieldError wrapping ErrIterationBudget) or the
// context ended (wrapping its error).
func (b *budget) spend() error {
	if b.left <= 0 {
		return b.err()
	}
	b.left--
	if b.ctx != nil {
		if b.ticks++; b.ticks%ctxEvery == 0 {
			if err := b.ctx.Err(); err != nil {
				b.left = 0
				return fmt.Errorf("expand: %w", err)
			}
		}
	}
	return nil
}

func (b *budget) err() error {
	if b.ctx != nil && b.ctx.Err() != nil {
		return fmt.Errorf("expand: %w", b.ctx.Err())
	}
	if b.beforeWindow || b.field == "" {
		return &FieldError{Field: "after", err: ErrIterationBudget, Reason: fmt.Sprintf(
			"the series reaches no further instant within the computation budget (%d candidates) from this time; "+
				"choose an earlier after, a smaller count or a simpler rule", b.total)}
	}
	what := "too sparse"
	if b.freq != "" {
		what += " for FREQ=" + b.freq
	}
	return &FieldError{Field: b.field, err: ErrIterationBudget, Reason: fmt.Sprintf(
		"%s: its instants need more than %d candidates to compute; use a coarser FREQ, fewer BYxxx limits "+
			"or ask for fewer instants", what, b.total)}
}
