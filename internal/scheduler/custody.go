package scheduler

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/qhronos/qhronos/internal/model"
)

// custody is what this dispatcher holds a read row under (#36): the slot of
// its bucket, the epoch this process held the slot under when it read the
// row, and the attempt count it read (the row stays pending or retrying in
// the database: nothing is written until its outcome). The outcome is
// written under all three (repository.OutcomeRecord's fence).
type custody struct {
	slot  int
	epoch int64
	seen  int
}

// inFlight is every row this dispatcher read and has not settled (outcome
// written, dropped, or let go unstarted). The rows stay waiting in the
// database meanwhile, so every read of due work leaves them out, and a row
// settled while a read was under way is left out of that read's answer too:
// the read's snapshot may predate the outcome's commit.
type inFlight struct {
	mu      sync.Mutex
	rows    map[string]int // occurrence id → slot
	perSlot map[int]int
	reads   int             // reads under way
	settled map[string]bool // rows settled while a read was under way
}

func newInFlight() *inFlight {
	return &inFlight{rows: map[string]int{}, perSlot: map[int]int{}, settled: map[string]bool{}}
}

// beginRead starts a read of due work and, with list, returns the rows it
// must leave out (a read after a key leaves out nothing: see RunOnce).
func (f *inFlight) beginRead(list bool) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	if !list {
		return nil
	}
	ids := make([]string, 0, len(f.rows))
	for id := range f.rows {
		ids = append(ids, id)
	}
	return ids
}

// endRead ends a read and returns the rows of its answer this dispatcher may
// take: not in flight, not settled since the read began.
func (f *inFlight) endRead(occs []model.Occurrence) []model.Occurrence {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := occs[:0]
	for _, o := range occs {
		if _, held := f.rows[o.ID]; !held && !f.settled[o.ID] {
			out = append(out, o)
		}
	}
	if f.reads--; f.reads == 0 {
		clear(f.settled)
	}
	return out
}

// ids returns the rows in flight.
func (f *inFlight) ids() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	ids := make([]string, 0, len(f.rows))
	for id := range f.rows {
		ids = append(ids, id)
	}
	return ids
}

func (f *inFlight) add(id string, slot int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, held := f.rows[id]; !held {
		f.rows[id] = slot
		f.perSlot[slot]++
	}
}

// remove settles rows and returns how many were in flight.
func (f *inFlight) remove(ids ...string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, id := range ids {
		slot, held := f.rows[id]
		if !held {
			continue
		}
		n++
		delete(f.rows, id)
		if f.perSlot[slot]--; f.perSlot[slot] == 0 {
			delete(f.perSlot, slot)
		}
		if f.reads > 0 {
			f.settled[id] = true
		}
	}
	return n
}

// busy reports whether rows of a slot are in flight: the slot is handed to
// another instance only once they are settled.
func (f *inFlight) busy(slot int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.perSlot[slot] > 0
}

// custodyOf returns the custody under which this dispatcher may take a row
// read while it held owned (slot → epoch).
func custodyOf(occ *model.Occurrence, owned map[int]int64) (custody, bool) {
	slot := model.SlotOf(model.BucketOf(occ.EventID))
	epoch, ok := owned[slot]
	return custody{slot: slot, epoch: epoch, seen: occ.AttemptCount}, ok
}

// usable reports whether a job may still be sent: this process still holds
// its slot, under the epoch it read the row under, by its own clock (if it
// cannot renew, another instance may take the slot once the lease expires).
func (d *Dispatcher) usable(jb *job) bool {
	epoch, ok := d.own.Holds(model.BucketOf(jb.occ.EventID))
	return ok && epoch == jb.custody.epoch
}

// Renew is one ownership round (the heartbeat's): it renews this instance's
// membership and slots, hands over the slots the balance gives to another
// instance once their rows in flight are settled, and takes the free slots
// the balance gives to this one, waking the dispatcher for their due work.
func (d *Dispatcher) Renew(ctx context.Context) error {
	before := len(d.own.Owned())
	if err := d.own.Tick(ctx); err != nil {
		return err
	}
	if len(d.own.Owned()) > before {
		d.Wake(d.clock.Now())
	}
	return nil
}

// heartbeat runs an ownership round every renewal interval until stop
// closes. It runs on the local timer, like the other loops: only durations
// matter here, and each round reads the deployment clock for the expiries.
func (d *Dispatcher) heartbeat() {
	defer close(d.heartbeatDone)
	t := time.NewTicker(d.cfg.LeaseRenewInterval)
	defer t.Stop()
	var prune heldMark
	for {
		select {
		case <-d.heartbeatStop:
			return
		case <-t.C:
		}
		if !d.active.Load() {
			continue // an API-only instance (or one not started yet) takes no slot
		}
		// A round that outlives the lease is worthless; bound it.
		ctx, cancel := context.WithTimeout(context.Background(), d.cfg.Lease)
		err := d.Renew(ctx)
		if err != nil {
			d.log.Warn("renew bucket ownership", zap.Error(err))
		}
		d.pruneChanges(ctx, &prune)
		cancel()
	}
}
