package scheduler

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/qhronos/qhronos/internal/coordination"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/recurrence"
	"github.com/qhronos/qhronos/internal/repository"
)

// expanderLock is the leader lock name of the expander.
const expanderLock = "expander"

// Expander materializes occurrence rows for active events inside
// [now − catch-up window, now + lookahead). Each event keeps a cursor
// (events.expanded_until: every instant before it has a row), so a run only
// expands what is new instead of re-walking the series from its start, and
// each run adds at most MaxRowsPerEventWindow rows per event. Inserting is
// idempotent, so any number of expanders may run at once.
type Expander struct {
	cfg    Config
	store  *repository.Store
	clock  Clock
	locker coordination.Locker
	log    *zap.Logger
}

// NewExpander returns an expander. locker may be nil (single instance).
func NewExpander(cfg Config, store *repository.Store, clock Clock, locker coordination.Locker, log *zap.Logger) *Expander {
	if clock == nil {
		clock = SystemClock{}
	}
	if log == nil {
		log = zap.NewNop()
	}
	return &Expander{cfg: cfg, store: store, clock: clock, locker: locker, log: log.Named("expander")}
}

// RunOnce expands every active event whose cursor is behind the horizon, in
// batches of ExpandBatch events, each in its own transaction. In a
// deployment of several instances only the holder of the "expander" lock
// runs; when the locker fails (Redis away) it runs anyway, since expansion
// is idempotent. It returns the number of rows inserted or reinstated.
func (x *Expander) RunOnce(ctx context.Context) (int, error) {
	if !x.lead(ctx) {
		return 0, nil
	}
	now := x.clock.Now()
	horizon := now.Add(x.cfg.Lookahead)
	total, after := 0, ""
	for {
		events, err := x.store.EventsToExpand(ctx, horizon, after, x.cfg.ExpandBatch)
		if err != nil {
			return total, err
		}
		for i := range events {
			ev := events[i]
			var n int
			err := x.store.WithTx(ctx, func(tx *repository.Store) error {
				var err error
				n, err = x.expand(ctx, tx, &ev, now)
				return err
			})
			switch {
			case errors.Is(err, model.ErrStaleVersion):
				// Edited meanwhile; the edit expanded the new schedule.
			case err != nil && ctx.Err() != nil:
				return total, err
			case err != nil:
				// One bad event must not stop the others.
				x.log.Warn("expand event", zap.String("event_id", ev.ID), zap.Error(err))
			default:
				total += n
			}
		}
		if len(events) < x.cfg.ExpandBatch {
			return total, nil
		}
		after = events[len(events)-1].ID
	}
}

// resign gives up the expander lock at shutdown, so another instance takes
// over at its next tick instead of after the lock's TTL.
func (x *Expander) resign(ctx context.Context) {
	if x.locker == nil {
		return
	}
	if err := x.locker.Unlock(ctx, expanderLock, x.cfg.InstanceID); err != nil {
		x.log.Warn("release expander lock", zap.Error(err))
	}
}

// lead reports whether this instance should expand now.
func (x *Expander) lead(ctx context.Context) bool {
	if x.locker == nil {
		return true
	}
	ok, err := x.locker.TryLock(ctx, expanderLock, x.cfg.InstanceID, 2*x.cfg.ExpandInterval)
	if err != nil {
		x.log.Warn("expander lock unavailable; expanding anyway", zap.Error(err))
		return true
	}
	return ok
}

// ExpandEvent materializes ev's occurrences inside the caller's transaction
// (the API calls it when it creates, edits or resumes an event, so rows
// exist before the answer) and updates ev's cursor, next_run_at and, when
// its series is over, status in place.
func (x *Expander) ExpandEvent(ctx context.Context, tx *repository.Store, ev *model.Event, now time.Time) error {
	_, err := x.expand(ctx, tx, ev, now)
	return err
}

// CreateEvent stores a new event with its first window of occurrences in
// the caller's transaction. The cursor and next_run_at are computed before
// the insert, so the new row is written once.
func (x *Expander) CreateEvent(ctx context.Context, tx *repository.Store, ev *model.Event, now time.Time) error {
	if ev.Status != model.EventActive {
		return tx.CreateEvent(ctx, ev)
	}
	rule, err := compileEvent(ev, x.cfg.Recurrence)
	if err != nil {
		return err
	}
	horizon := now.Add(x.cfg.Lookahead)
	instants, complete, err := x.window(rule, now.Add(-x.cfg.CatchUp.Window), horizon)
	if err != nil {
		return fmt.Errorf("expand event %s: %w", ev.ID, err)
	}
	var cursor time.Time
	var next *time.Time
	if complete {
		cursor, next = x.beyond(rule, horizon)
	} else {
		cursor = instants[len(instants)-1].Add(time.Microsecond)
	}
	if len(instants) > 0 {
		next = &instants[0]
	}
	cursor = cursor.UTC()
	ev.ExpandedUntil, ev.NextRunAt = &cursor, next
	return tx.CreateEvent(ctx, ev, instants...)
}

func (x *Expander) expand(ctx context.Context, tx *repository.Store, ev *model.Event, now time.Time) (int, error) {
	if ev.Status != model.EventActive || ev.DeletedAt != nil {
		return 0, nil
	}
	rule, err := compileEvent(ev, x.cfg.Recurrence)
	if err != nil {
		return 0, err
	}
	from := now.Add(-x.cfg.CatchUp.Window)
	if ev.ExpandedUntil != nil && ev.ExpandedUntil.After(from) {
		from = *ev.ExpandedUntil
	}
	horizon := now.Add(x.cfg.Lookahead)
	inserted := 0
	cursor, next := from, (*time.Time)(nil)
	if !from.Before(horizon) && from.Before(repository.SeriesEnd) {
		// The cursor already sits on the next instant, beyond the horizon.
		next = &from
	}
	if from.Before(horizon) {
		instants, complete, err := x.window(rule, from, horizon)
		if err != nil {
			return 0, fmt.Errorf("expand event %s: %w", ev.ID, err)
		}
		if inserted, err = tx.InsertOccurrences(ctx, ev.ID, instants, false, now); err != nil {
			return 0, err
		}
		if complete {
			cursor, next = x.beyond(rule, horizon)
		} else {
			cursor = instants[len(instants)-1].Add(time.Microsecond)
		}
	}
	res, err := tx.SetExpansion(ctx, repository.ExpansionUpdate{EventID: ev.ID, Version: ev.Version,
		ExpandedUntil: cursor, NextRunAt: next, Now: now})
	if err != nil {
		return 0, err
	}
	c := cursor.UTC()
	ev.ExpandedUntil, ev.NextRunAt = &c, res.NextRunAt
	if res.Inactive {
		ev.Status = model.EventInactive
		ev.Version++
	}
	return inserted, nil
}

// window returns the instants in [from, to), at most MaxRowsPerEventWindow;
// complete is false when the cap (or the engine's iteration budget) cut it
// short, in which case the caller continues after the last instant next run.
func (x *Expander) window(rule *recurrence.Rule, from, to time.Time) (instants []time.Time, complete bool, err error) {
	limit := x.cfg.MaxRowsPerEventWindow
	instants, err = recurrence.Expand(rule, from, to, limit+1)
	if errors.Is(err, recurrence.ErrIterationBudget) && len(instants) > 0 {
		return instants[:min(len(instants), limit)], false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if len(instants) > limit {
		return instants[:limit], false, nil
	}
	return instants, true, nil
}

// beyond finds where the cursor goes after a complete window up to horizon:
// the series' next instant (nothing lies between), or SeriesEnd when there is
// none. If the engine cannot tell within its budget the cursor stays at the
// horizon and the next run looks again.
func (x *Expander) beyond(rule *recurrence.Rule, horizon time.Time) (cursor time.Time, next *time.Time) {
	after, err := recurrence.Expand(rule, horizon, repository.SeriesEnd, 1)
	switch {
	case len(after) > 0:
		return after[0], &after[0]
	case err != nil:
		return horizon, nil
	default:
		return repository.SeriesEnd, nil
	}
}

// Pause cancels the event's pending non-manual occurrences, including rows a
// dispatcher is holding until their instant (their lease is revoked), inside
// the transaction that sets the event paused. Manual triggers still fire.
func (x *Expander) Pause(ctx context.Context, tx *repository.Store, ev *model.Event, now time.Time) error {
	if _, err := tx.CancelFutureOccurrences(ctx, ev.ID, time.Time{}, true, now); err != nil {
		return err
	}
	ev.NextRunAt = nil
	return tx.ClearNextRun(ctx, ev.ID)
}

// Resume re-expands an event that was set active again, from now: rows
// cancelled by the pause whose instant is still ahead are reinstated with
// their ids, and instants that fell inside the pause never fire (their rows
// stay cancelled, and instants never materialized before now are skipped).
// ev must already be active and stored.
func (x *Expander) Resume(ctx context.Context, tx *repository.Store, ev *model.Event, now time.Time) error {
	return x.restart(ctx, tx, ev, now)
}

// Reschedule applies an edit of the event's schedule inside the edit's
// transaction: future pending rows are cancelled and the series is
// re-expanded from now, which reinstates (keeping its id) every instant
// still in the series. Overdue rows already due keep their course.
func (x *Expander) Reschedule(ctx context.Context, tx *repository.Store, ev *model.Event, now time.Time) error {
	if _, err := tx.CancelFutureOccurrences(ctx, ev.ID, now, true, now); err != nil {
		return err
	}
	return x.restart(ctx, tx, ev, now)
}

// restart moves the cursor to now and expands from there.
func (x *Expander) restart(ctx context.Context, tx *repository.Store, ev *model.Event, now time.Time) error {
	start := now.UTC()
	if err := tx.Reposition(ctx, ev.ID, &start); err != nil {
		return err
	}
	ev.ExpandedUntil = &start
	if ev.Status != model.EventActive {
		return nil
	}
	return x.ExpandEvent(ctx, tx, ev, now)
}
