package scheduler

import (
	"context"
	"fmt"

	"github.com/qhronos/qhronos/internal/repository"
)

// Rescuer returns expired leases (a worker died or stalled) and unacknowledged
// deliveries to retry, and settles events whose series ended once their last
// occurrence is terminal (e.g. finished by an acknowledgement).
type Rescuer struct {
	store *repository.Store
	clock Clock
	batch int
	// wake, when set, is told that rescued rows are due now.
	wake func()
}

// NewRescuer returns a rescuer over store.
func NewRescuer(cfg Config, store *repository.Store, clock Clock, wake func()) *Rescuer {
	cfg = cfg.withDefaults()
	if clock == nil {
		clock = SystemClock{}
	}
	return &Rescuer{store: store, clock: clock, batch: cfg.RescueBatch, wake: wake}
}

// RunOnce rescues every expired lease (in bounded statements) and returns how
// many rows went back to retry.
func (r *Rescuer) RunOnce(ctx context.Context) (int, error) {
	now := r.clock.Now()
	total := 0
	for {
		n, err := r.store.RescueExpired(ctx, now, r.batch)
		total += n
		if err != nil {
			return total, err
		}
		if n < r.batch {
			break
		}
	}
	if total > 0 && r.wake != nil {
		r.wake()
	}
	if _, err := r.store.SettleEndedEvents(ctx, now, r.batch); err != nil {
		return total, fmt.Errorf("settle ended events: %w", err)
	}
	return total, nil
}
