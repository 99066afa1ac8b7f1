package recurrence

import "fmt"

// budget counts the candidate instants one Expand call examines, so that no
// rule, however pathological, can make a call unbounded.
type budget struct {
	left, total int
}

func newBudget(n int) *budget { return &budget{left: n, total: n} }

// spend takes one candidate from the budget; false means it is exhausted.
func (b *budget) spend() bool {
	if b.left <= 0 {
		return false
	}
	b.left--
	return true
}

func (b *budget) err() error {
	return fmt.Errorf("expand after %d candidates: %w", b.total, ErrIterationBudget)
}
