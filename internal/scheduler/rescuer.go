package scheduler

import (
	"context"
	"fmt"
	"time"

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
	wake func(at time.Time)
	// startup is set until the first run of an exclusive rescuer.
	startup bool
	// settleFrom is where the next sweep for ended events resumes.
	settleFrom string
}

// settleScan is how many events with ended series one run examines: a
// page of 5,000 (each checked for unfinished occurrences) showed as a
// latency spike every rescuer run in a steady 5,000/s stream.
const settleScan = 1000

// NewRescuer returns a rescuer over store.
func NewRescuer(cfg Config, store *repository.Store, clock Clock, wake func(at time.Time)) *Rescuer {
	if clock == nil {
		clock = SystemClock{}
	}
	return &Rescuer{store: store, clock: clock, batch: cfg.RescueBatch, wake: wake, startup: cfg.Exclusive}
}

// RunOnce rescues every expired lease (in bounded statements) and returns how
// many rows went back to retry; one loop calls it, never two at once. The
// first run of an exclusive rescuer rescues every lease, expired or not.
func (r *Rescuer) RunOnce(ctx context.Context) (int, error) {
	now := r.clock.Now()
	total := 0
	if r.startup {
		n, err := r.store.RescueDispatching(ctx, now)
		if err != nil {
			return 0, err
		}
		r.startup, total = false, n
	}
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
		r.wake(now)
	}
	// A page per run: a full pass over n waiting events takes n/settleScan
	// runs, while the outcome writer settles the usual case at once.
	_, next, err := r.store.SettleEndedEvents(ctx, now, r.settleFrom, settleScan)
	if err != nil {
		return total, fmt.Errorf("settle ended events: %w", err)
	}
	r.settleFrom = next
	return total, nil
}
