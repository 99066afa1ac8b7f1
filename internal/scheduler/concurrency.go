package scheduler

import (
	"context"
	"errors"
	"time"

	"go.uber.org/zap"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
)

// A concurrency key (#37) spans events in many buckets, owned by different
// instances: its state lives in the database (repository.AcquireConcurrency).
// An occurrence of an event with a key takes a slot right before it fires,
// after its overlap policy let it; without one it waits, pending with reason
// concurrency_wait, due again concurrencyRecheck later. A slot is freed when
// its occurrence ends; the freeing makes the key's oldest waiters due at
// once and announces it to every instance. The rescuer frees the slots of
// occurrences that ended another way (SweepConcurrency).

// concurrencyRecheck is how long a row waiting for its key's slot waits
// before it asks again, if no end released it first.
const concurrencyRecheck = 15 * time.Second

// admitConcurrency takes a slot of jb's concurrency key; it reports whether
// jb fires now. Otherwise its row was parked to wait for one, or let go for
// the next read when the database could not answer.
func (d *Dispatcher) admitConcurrency(jb *job) bool {
	c := jb.ev.Concurrency
	if c == nil {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	now := d.clock.Now()
	waiting := jb.occ.Reason != nil && *jb.occ.Reason == model.ReasonConcurrencyWait
	ok, err := d.store.AcquireConcurrency(ctx, repository.ConcurrencyRequest{Key: c.Key, OccurrenceID: jb.occ.ID,
		EventID: jb.ev.ID, ScheduledAt: jb.occ.ScheduledAt, Waiting: waiting, Slot: jb.custody.slot,
		Epoch: jb.custody.epoch, Seen: jb.custody.seen, Recheck: now.Add(concurrencyRecheck), Now: now,
		Note: "waiting: concurrency key " + c.Key + " is at its limit or paused"})
	switch {
	case err == nil && ok:
		if waiting { // the row took back the reason it had before (backfill) or none
			jb.occ.Reason = nil
		}
		return true
	case err == nil:
		d.settled(jb.occ.ID)
		d.Wake(now.Add(concurrencyRecheck))
	case errors.Is(err, repository.ErrConcurrencyFenced):
		d.settled(jb.occ.ID) // another owner's now, or changed meanwhile
	default:
		d.log.Warn("take a concurrency slot", zap.String("event_id", jb.ev.ID), zap.Error(err))
		d.releaseIDs(jb.occ.ID)
	}
	return false
}

// concurrencyEnded frees the slot of an occurrence of ev whose outcome
// ended its run, off the outcome writer's goroutine, and announces the
// waiters it made due to every instance.
func (d *Dispatcher) concurrencyEnded(ev *model.Event, occurrenceID string, status model.OccurrenceStatus) {
	if ev.Concurrency == nil || status.In(model.InProgress) {
		return
	}
	d.releases.Add(1)
	go func() {
		defer d.releases.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		now := d.clock.Now()
		released, err := d.store.ReleaseConcurrency(ctx, []string{occurrenceID}, now)
		switch {
		case err != nil:
			d.log.Warn("free a concurrency slot", zap.String("occurrence_id", occurrenceID), zap.Error(err))
		case released:
			d.announce(ctx, now)
		}
	}()
}

// announce wakes this dispatcher and, through the bus when there is one,
// every other instance's: rows due at at may lie in their buckets.
func (d *Dispatcher) announce(ctx context.Context, at time.Time) {
	d.Wake(at)
	if n, ok := d.wakeups.(interface {
		Notify(ctx context.Context, at time.Time) error
	}); ok {
		if err := n.Notify(ctx, at); err != nil {
			d.log.Debug("announce wakeup", zap.Error(err))
		}
	}
}
