package scheduler

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/qhronos/qhronos/internal/startstop"
)

// Start runs the dispatcher (Run) until ctx ends or Stop is called; Stop
// returns once it has drained (Close).
func (d *Dispatcher) Start(ctx context.Context) error {
	ctx, shouldStart, stopped := d.StartInit(ctx)
	if !shouldStart {
		return nil
	}
	go func() {
		defer stopped()
		d.Run(ctx, &d.runStatus)
	}()
	return nil
}

// Run claims and fires until ctx ends, then shuts down gracefully: it stops
// claiming, releases claimed rows not yet started so another instance picks
// them up at once, lets in-flight attempts finish within the drain timeout,
// writes their outcomes and returns. status, if not nil, observes each claim.
func (d *Dispatcher) Run(ctx context.Context, status *LoopStatus) {
	var wake <-chan time.Time
	if d.wakeups != nil {
		wake = d.wakeups.Subscribe(ctx)
	}
	for ctx.Err() == nil {
		start := time.Now()
		n, err := d.RunOnce(ctx)
		// Idle claims are not recorded (the counts would say nothing), but
		// the first success after a failure is: it clears the error.
		if status != nil && (n > 0 || err != nil || status.failing()) {
			status.record(start, time.Since(start), n, err)
		}
		if err != nil && ctx.Err() == nil {
			d.log.Warn("claim due occurrences", zap.Error(err))
		}
		if err == nil && n > 0 && n >= d.cfg.ClaimBatch {
			continue // a full batch: more is probably due
		}
		// After a failure, wait max_sleep: a batch released because its
		// follow-up read failed is due at once, and claiming it again in a
		// tight loop would hammer a database that is failing.
		wake = d.sleep(ctx, wake, err != nil)
	}
	d.Close()
}

// sleep waits until the earliest due instant minus claim-ahead, a wake-up,
// freed capacity or max_sleep, whichever comes first. When the database or
// the bus is away, or the last claim failed, it simply polls at max_sleep.
// It returns the wake-up channel, nil once it closed.
func (d *Dispatcher) sleep(ctx context.Context, wake <-chan time.Time, failed bool) <-chan time.Time {
	wait := d.cfg.MaxSleep
	// While busy, rows already due must wait for room too: claiming the
	// few freed slots at once made a burst into hundreds of tiny claims.
	if _, busy := d.room(); !busy && !failed {
		next, err := d.nextDue(ctx)
		if err == nil && next != nil {
			wait = min(wait, d.untilRead(*next))
		}
	}
	if wait <= 0 {
		return wake
	}
	deadline := d.clock.Now().Add(wait)
	timeout := d.clock.After(wait)
	for {
		// While busy, wait for room for a worthwhile claim, not for the
		// first freed slot.
		changed, busy := d.room()
		if !busy {
			changed = nil
		}
		select {
		case <-ctx.Done():
		case <-timeout:
		case <-d.wakeNow:
			// A signal whose instant an earlier one already took is stale.
			if at := d.takeAnnounced(); at.IsZero() || d.notYetDue(at, &deadline, &timeout) {
				continue
			}
		case <-changed:
			if _, busy := d.room(); busy {
				continue
			}
		case at, ok := <-wake:
			if !ok {
				return nil
			}
			d.forgetDueAfter() // a row created elsewhere may lie behind it
			if d.notYetDue(at, &deadline, &timeout) {
				continue
			}
		}
		return wake
	}
}

// nextDue is the earliest instant of a waiting row of the slots this
// instance owns, rows in flight left out (they are still waiting in the
// database), or nil when it owns none. The last read's answer serves when
// it saw its whole window (#36: asked apart, this walked past every row in
// flight along the due index, as often as the read itself). A row that
// comes back to waiting after that read (a retry, an outcome not written, a
// row deferred or let go) wakes the loop for its instant itself (Wake), and
// max_sleep bounds any other.
func (d *Dispatcher) nextDue(ctx context.Context) (*time.Time, error) {
	if at, ok := d.takeReadNext(); ok {
		return at, nil
	}
	owned := d.own.Owned()
	if len(owned) == 0 {
		return nil, nil
	}
	slots := make([]int, 0, len(owned))
	for sl := range owned {
		slots = append(slots, sl)
	}
	if after := d.peekDueAfter(owned, d.clock.Now()); after != nil {
		return d.store.NextDueIn(ctx, slots, nil, after)
	}
	return d.store.NextDueIn(ctx, slots, d.inflight.ids(), nil)
}

// notYetDue reports whether an announced instant is not due yet (minus
// claim-ahead); such an instant only shortens the sleep to it, so a burst
// of creates does not become a burst of claims.
func (d *Dispatcher) notYetDue(at time.Time, deadline *time.Time, timeout *<-chan time.Time) bool {
	wait := d.untilRead(at)
	if wait <= 0 {
		return false
	}
	if due := d.clock.Now().Add(wait); due.Before(*deadline) {
		*deadline, *timeout = due, d.clock.After(wait)
	}
	return true
}

// untilRead is how long to wait before reading a row due at at: until a
// fifth of claim-ahead after the row enters the read window (claim-ahead
// before its instant), so it is read at least four fifths of claim-ahead
// ahead, and under steady load one read takes every row that entered the
// window meanwhile. Waking as each instant entered made a read every
// millisecond at 1,500 instants a second (#36), each walking past every row
// already held.
func (d *Dispatcher) untilRead(at time.Time) time.Duration {
	return max(0, at.Sub(d.clock.Now())-d.cfg.ClaimAhead+d.cfg.ClaimAhead/5)
}

// room reports whether the dispatcher is too busy for a worthwhile claim,
// and the channel that signals the next freed slot.
func (d *Dispatcher) room() (changed <-chan struct{}, busy bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.changed, d.capacityLocked() < d.minClaim()
}

var _ startstop.Service = (*Dispatcher)(nil)

// Close stops claiming work: holders release rows not yet started, in-flight
// attempts get the drain timeout to finish (then their context is
// cancelled), and the outcome writer stops after writing what is queued.
// Run calls it when its context ends; tests that only use RunOnce call it
// when done.
func (d *Dispatcher) Close() {
	d.closeOnce.Do(func() {
		d.stopOnce.Do(func() { close(d.stopping) })
		d.holders.Wait()
		drain, cancel := context.WithTimeout(context.Background(), d.cfg.DrainTimeout)
		err := d.Wait(drain)
		cancel()
		if err != nil {
			d.log.Warn("drain timeout passed; cancelling attempts in flight", zap.Error(err))
			d.cancelAttempt()
			grace, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			err = d.Wait(grace)
			cancel()
		}
		d.cancelAttempt()
		if err == nil {
			d.attempters.Wait() // each ends at stopping once its attempt did
		}
		close(d.heartbeatStop)
		<-d.heartbeatDone
		d.rec.Stop()
		d.releases.Wait()          // started by the last outcomes
		booksErr := d.books.Stop() // after the recorder: it writes what the last outcomes noted
		if err != nil {
			// An action ignored its context: the slots are not handed
			// over, their leases expire and the next owner sends what is
			// still due (its late outcome finds the writer stopped).
			d.log.Error("attempts still running at exit", zap.Error(err))
			return
		}
		if !d.active.Load() {
			return
		}
		// Everything read is settled: the slots go to the other instances
		// at once instead of after their leases. The registration goes
		// too, unless the last bookkeeping was not written: lapsing, it
		// has the rescuers repair it (Rescuer.repair).
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		hand := d.own.Stop
		if booksErr != nil {
			hand = d.own.Release
		}
		if err := hand(ctx); err != nil {
			d.log.Warn("hand the bucket slots over; they go when their leases expire", zap.Error(err))
		}
	})
}
