package scheduler

import (
	"context"
	"fmt"
	"time"

	"github.com/qhronos/qhronos/internal/model"
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
	// self is this instance, lease the registrations' lease; exclusive:
	// no other process can use the database (the embedded server), so
	// every other member is departed, lapsed or not.
	self      string
	lease     time.Duration
	exclusive bool
	// repairs are the departed members whose forgotten bookkeeping is
	// being repaired, by instance id, each with what is left of its window.
	repairs map[string]*repairWindow
}

// repairWindow is what is left to check of a departure's window:
// occurrences finished in [from, to). expires is the registration's end
// it was opened for (a member that came back and left again gets a new
// window).
type repairWindow struct{ expires, from, to time.Time }

// Repairing bookkeeping a crash forgot (repository.RepairEventRuns). Only a
// process that died, was cut off or could not write its last bookkeeping
// forgets runs: a live one's bookkeeper keeps a failed write and tries it
// again, and a clean stop leaves the dispatch group only once it wrote
// everything. So a repair follows a departure: a member whose registration
// lapsed (repository.DepartedMembers), or for the embedded server, alone on
// its data directory, any other member at all (its killed predecessor). It
// checks the occurrences that finished from repairLookback before the last
// renewal (the registration's end minus the lease) to the moment the
// departure was seen, in pages of repairPage, at most repairPages a run,
// then forgets the member. A departed process's unwritten runs are younger
// than that: an outcome is committed at most recordRetryFor after it was
// made (its updated_at), noted at once, and written within
// BookkeepingMaxWait unless the database refuses. An event whose
// bookkeeping a kill -9 lost is right again within the lease (10 s) plus a
// rescue interval or two once the pages are done. (Every rescuer checked every
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
		self:        cfg.InstanceID, lease: cfg.Lease, exclusive: cfg.Exclusive,
		repairs: map[string]*repairWindow{}}
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
	by := now
	if r.exclusive {
		by = model.SeriesEnd // a predecessor's registration, however long its lease
	}
	all, err := r.store.DepartedMembers(ctx, by)
	if err != nil {
		return err
	}
	// The windows under way, kept for the members still departed (one
	// another rescuer finished and forgot is dropped).
	gone, windows := all[:0], make(map[string]*repairWindow, len(all))
	for _, m := range all {
		if m.InstanceID == r.self {
			continue
		}
		gone = append(gone, m)
		// The registration ends a lease after its last renewal.
		// Up to now included (the window is half-open; the database keeps
		// microseconds).
		from, to := m.ExpiresAt.Add(-r.lease-repairLookback), now.Add(time.Microsecond)
		w, ok := r.repairs[m.InstanceID]
		switch {
		case !ok:
			w = &repairWindow{expires: m.ExpiresAt, from: from, to: to}
		case !w.expires.Equal(m.ExpiresAt): // it came back and left again: what is left, then on to now
			w.expires, w.from, w.to = m.ExpiresAt, minTime(w.from, from), to
		}
		windows[m.InstanceID] = w
	}
	r.repairs = windows
	pages := repairPages
	for _, m := range gone {
		w := r.repairs[m.InstanceID]
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
		delete(r.repairs, m.InstanceID)
	}
	return nil
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
