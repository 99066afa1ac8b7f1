package scheduler

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/qhronos/qhronos/internal/repository"
)

// Rescuer returns expired leases (a worker died or stalled) and unacknowledged
// deliveries to retry, ends runs past their deadline (timed_out), settles events whose series ended once their last
// occurrence is terminal (e.g. finished by an acknowledgement), and repairs
// event bookkeeping a crash forgot.
type Rescuer struct {
	store *repository.Store
	clock Clock
	batch int
	// wake, when set, is told that rescued rows are due now.
	wake func(at time.Time)
	// startup is set until the first run of an exclusive rescuer.
	startup bool
	// settleFrom is where the next sweep for ended events resumes;
	// settleGrace how long after its next run came due an event is left to
	// the bookkeeper, which settles it in the write that notes the run.
	settleFrom  string
	settleGrace time.Duration
	// repairs are the departed members whose forgotten bookkeeping is
	// being repaired, each with what is left of its window.
	repairs map[repository.DepartedMember]*repairWindow
}

// repairWindow is what is left to check of a departed member's window:
// occurrences finished in [from, to).
type repairWindow struct{ from, to time.Time }

// Repairing bookkeeping a crash forgot (repository.RepairEventRuns). Only a
// process that died, was cut off or could not write its last bookkeeping
// forgets runs: a live one's bookkeeper keeps a failed write and tries it
// again, and a clean stop leaves the dispatch group only once it wrote
// everything. So a repair follows a departure: a member whose registration
// lapsed (repository.DepartedMembers). It checks the occurrences that
// finished from repairLookback before the registration's end to the moment
// the departure was seen, in pages of repairPage, at most repairPages a
// run, then forgets the member. A departed process's unwritten runs are
// younger than that: an outcome is committed at most recordRetryFor after
// it was made (its updated_at), noted at once, and written within
// BookkeepingMaxWait unless the database refuses; the registration lapses
// at most a lease after the last renewal. An event whose bookkeeping a
// kill -9 lost is right again within the lease (10 s) plus a rescue
// interval or two once the pages are done. (Every rescuer checked every
// finished occurrence once before: a join per delivery, spikes of a
// quarter of a second every run in a steady 5,600/s stream, #36.)
const (
	repairLookback = recordRetryFor + BookkeepingMaxWait + time.Minute
	repairPage     = 1000
	repairPages    = 50
)

// settleScan is how many events with ended series one run examines: a
// page of 5,000 (each checked for unfinished occurrences) showed as a
// latency spike every rescuer run in a steady 5,000/s stream.
const settleScan = 1000

// minSettleGrace is the least a rescuer's settleGrace is: a few of the
// bookkeeper's intervals (0.5 s by default). While it drains a backlog the bookkeeper
// writes later; the sweep may then settle an event first, as it always
// did, and the acknowledged delivery of a one-time event still settles
// within seconds.
const minSettleGrace = 2 * time.Second

// NewRescuer returns a rescuer over store.
func NewRescuer(cfg Config, store *repository.Store, clock Clock, wake func(at time.Time)) *Rescuer {
	if clock == nil {
		clock = SystemClock{}
	}
	return &Rescuer{store: store, clock: clock, batch: cfg.RescueBatch, wake: wake, startup: cfg.Exclusive,
		settleGrace: max(minSettleGrace, 4*cfg.BookkeepingInterval),
		repairs:     map[repository.DepartedMember]*repairWindow{}}
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
	// Runs past their deadline end timed_out; they are not sent again (the
	// receiver may still be running them). An instant that waited for one
	// to end (overlap buffer_one or buffer_all) is due now.
	timedOut := 0
	for {
		n, err := r.store.TimeOutRuns(ctx, now, r.batch)
		if err != nil {
			return total, err
		}
		timedOut += n
		if n < r.batch {
			break
		}
	}
	// Slots of concurrency keys whose occurrence ended another way (a
	// cancellation, a skip, a release that failed) go to the keys' waiters.
	_, released, err := r.store.SweepConcurrency(ctx, now)
	if err != nil {
		return total, err
	}
	if (total+timedOut > 0 || released) && r.wake != nil {
		r.wake(now)
	}
	// A page per run: a full pass over n waiting events takes n/settleScan
	// runs, while the bookkeeper settles the usual case within an interval
	// (events due within settleGrace are its to settle).
	_, next, err := r.store.SettleEndedEvents(ctx, now, now.Add(-r.settleGrace), r.settleFrom, settleScan)
	if err != nil {
		return total, fmt.Errorf("settle ended events: %w", err)
	}
	r.settleFrom = next
	if err := r.repair(ctx, now); err != nil {
		return total, err
	}
	return total, nil
}

// repair rewrites the bookkeeping of events whose runs a departed member
// may have forgotten.
func (r *Rescuer) repair(ctx context.Context, now time.Time) error {
	gone, err := r.store.DepartedMembers(ctx, now)
	if err != nil {
		return err
	}
	for _, m := range gone {
		if _, ok := r.repairs[m]; !ok {
			r.repairs[m] = &repairWindow{from: m.ExpiresAt.Add(-repairLookback), to: now}
		}
	}
	pages := repairPages
	for _, m := range gone {
		w := r.repairs[m]
		for ; pages > 0 && w.from.Before(w.to); pages-- {
			_, next, err := r.store.RepairEventRuns(ctx, w.from, w.to, repairPage)
			if err != nil {
				return fmt.Errorf("repair event bookkeeping: %w", err)
			}
			w.from = next
		}
		if w.from.Before(w.to) {
			return nil // the next run goes on
		}
		if err := r.store.ForgetMember(ctx, m); err != nil {
			return err
		}
		delete(r.repairs, m)
	}
	// Another rescuer finished and forgot a member this one had begun.
	for m := range r.repairs {
		if !slices.Contains(gone, m) {
			delete(r.repairs, m)
		}
	}
	return nil
}
