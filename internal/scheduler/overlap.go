package scheduler

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/qhronos/qhronos/internal/model"
)

// An event's overlap policy (#37) is applied by the dispatcher that owns
// the event's bucket, right before an instant fires. Every occurrence of an
// event lies in the event's bucket, so that one dispatcher sees all of the
// event's runs: the ones it is delivering (in memory: the rows stay pending
// in the database until their outcome) and the ones the database shows in
// progress (awaiting an ack, running, retrying). Memory is read before the
// database: a run that leaves memory had its outcome written first.
//
// An instant that must wait (buffer_one, buffer_all) is parked: due again
// overlapRecheck later, its attempt uncounted. When a run of the event ends
// (its outcome here, a completion or a timeout elsewhere), the earliest
// parked instant is made due at once (repository.ReleaseWaiting); the
// recheck is the safety net for ends that release nothing (a run cancelled
// by an operator, an outcome whose release failed).

// overlapRecheck is how long a parked instant waits before it looks again.
const overlapRecheck = 15 * time.Second

// The messages the ledger shows for an instant the policy did not fire now.
const (
	overlapSkipped  = "skipped: the previous run was still in progress (overlap: skip)"
	overlapOneWaits = "skipped: the previous run was still in progress and another instant already waits for it (overlap: buffer_one)"
)

// overlapAction is what an instant does under its event's policy.
type overlapAction int

const (
	overlapFire overlapAction = iota
	overlapSkip
	overlapPark
	overlapCancelPrevious // cancel the runs in progress and the waiting instants, then fire
)

// decideOverlap is the policy's answer for an instant that finds inProgress
// runs of its event and waiting earlier instants.
func decideOverlap(policy string, inProgress, waiting int) overlapAction {
	busy := inProgress > 0 || waiting > 0
	switch {
	case !busy || policy == model.OverlapAllow:
		return overlapFire
	case policy == model.OverlapSkip && inProgress > 0:
		return overlapSkip
	case policy == model.OverlapSkip: // instants parked under an earlier policy wait; this one goes
		return overlapFire
	case policy == model.OverlapBufferOne && waiting > 0:
		return overlapSkip
	case policy == model.OverlapBufferOne, policy == model.OverlapBufferAll:
		return overlapPark
	default: // cancel_previous
		return overlapCancelPrevious
	}
}

// weighsOverlap reports whether an instant goes through its event's
// policy: a first attempt of a planned instant or of a backfilled one. A
// retry continues its own run; an operator's trigger or replay fires as
// asked.
func weighsOverlap(occ *model.Occurrence) bool {
	if occ.AttemptCount > 1 {
		return false
	}
	backfilled := occ.Reason != nil && *occ.Reason == model.ReasonBackfill
	return backfilled || !occ.Manual && !occ.ManualRetry
}

// overlapRuns is what a dispatcher knows of the runs of overlap-policy
// events it started and has not settled, with a lock per event that makes
// each decision and the start it allows one step.
type overlapRuns struct {
	mu    sync.Mutex
	gates map[string]*overlapGate // event id → its decisions' lock, while in use
	runs  map[string]string       // occurrence id → event id, of runs started here
	n     atomic.Int64            // len(runs): settling needs no lock while none
}

type overlapGate struct {
	sync.Mutex
	users int
}

func newOverlapRuns() *overlapRuns {
	return &overlapRuns{gates: map[string]*overlapGate{}, runs: map[string]string{}}
}

// lock serializes the decisions on an event's instants; call the func it
// returns to unlock.
func (o *overlapRuns) lock(eventID string) func() {
	o.mu.Lock()
	g := o.gates[eventID]
	if g == nil {
		g = &overlapGate{}
		o.gates[eventID] = g
	}
	g.users++
	o.mu.Unlock()
	g.Lock()
	return func() {
		g.Unlock()
		o.mu.Lock()
		if g.users--; g.users == 0 {
			delete(o.gates, eventID)
		}
		o.mu.Unlock()
	}
}

// started notes a run of eventID this dispatcher is about to deliver.
func (o *overlapRuns) started(eventID, occurrenceID string) {
	o.mu.Lock()
	o.runs[occurrenceID] = eventID
	o.n.Store(int64(len(o.runs)))
	o.mu.Unlock()
}

// of returns the runs of eventID started here and not settled.
func (o *overlapRuns) of(eventID string) map[string]bool {
	out := map[string]bool{}
	if o.n.Load() == 0 {
		return out
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for occ, ev := range o.runs {
		if ev == eventID {
			out[occ] = true
		}
	}
	return out
}

// settled forgets runs whose outcome is written, or that were dropped.
func (o *overlapRuns) settled(ids ...string) {
	if o.n.Load() == 0 {
		return
	}
	o.mu.Lock()
	for _, id := range ids {
		delete(o.runs, id)
	}
	o.n.Store(int64(len(o.runs)))
	o.mu.Unlock()
}

// admitOverlap applies jb's event's overlap policy as jb is about to fire.
// It reports whether jb fires now, noted as a run in progress of its event;
// otherwise its row was settled: recorded skipped, parked until the run
// ends, or let go for the next read when the database could not answer.
func (d *Dispatcher) admitOverlap(jb *job) bool {
	policy := jb.ev.OverlapPolicy()
	if policy == model.OverlapAllow {
		return true
	}
	unlock := d.overlap.lock(jb.ev.ID)
	defer unlock()
	if !weighsOverlap(&jb.occ) {
		d.overlap.started(jb.ev.ID, jb.occ.ID)
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	mine := d.overlap.of(jb.ev.ID) // before the database: see the top of the file
	rows, err := d.store.OverlapRows(ctx, jb.ev.ID, jb.occ.ID, jb.occ.ScheduledAt)
	if err != nil {
		d.log.Warn("read the runs in progress before firing", zap.String("event_id", jb.ev.ID), zap.Error(err))
		d.releaseIDs(jb.occ.ID)
		return false
	}
	previous := make([]string, 0, len(mine)+len(rows))
	for id := range mine {
		previous = append(previous, id)
	}
	inProgress, waiting := len(mine), 0
	for _, r := range rows {
		switch {
		case mine[r.ID]:
			continue
		case r.Status.In(model.InProgress):
			inProgress++
		default:
			waiting++
		}
		previous = append(previous, r.ID)
	}
	now := d.clock.Now()
	switch decideOverlap(policy, inProgress, waiting) {
	case overlapSkip:
		msg := overlapSkipped
		if policy == model.OverlapBufferOne {
			msg = overlapOneWaits
		}
		d.resolve(&jb.occ, jb.custody, model.OccurrenceSkipped, model.ReasonOverlap, msg, now, true)
		return false
	case overlapPark:
		d.deferRow(jb, now.Add(overlapRecheck), fmtWaiting(policy), now)
		return false
	case overlapCancelPrevious:
		if _, err := d.store.CancelOverlapped(ctx, previous, now); err != nil {
			d.log.Warn("cancel the previous runs", zap.String("event_id", jb.ev.ID), zap.Error(err))
			d.releaseIDs(jb.occ.ID)
			return false
		}
	}
	d.overlap.started(jb.ev.ID, jb.occ.ID)
	return true
}

func fmtWaiting(policy string) string {
	return "waiting: the previous run is still in progress (overlap: " + policy + ")"
}

// runEnded makes the instant that waits for a run of ev due now, when ev
// buffers instants and the run's outcome ended it. It runs off the outcome
// writer's goroutine.
func (d *Dispatcher) runEnded(ev *model.Event, status model.OccurrenceStatus) {
	if !ev.Buffers() || status.In(model.InProgress) {
		return
	}
	id := ev.ID
	d.releases.Add(1)
	go func() {
		defer d.releases.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		now := d.clock.Now()
		released, err := d.store.ReleaseWaiting(ctx, id, now)
		switch {
		case err != nil:
			d.log.Warn("release the instant waiting for a run", zap.String("event_id", id), zap.Error(err))
		case released:
			d.Wake(now)
		}
	}()
}
