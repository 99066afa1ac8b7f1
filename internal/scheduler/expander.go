package scheduler

import (
	"context"
	"errors"
	"time"

	"go.uber.org/zap"

	"github.com/qhronos/qhronos/internal/coordination"
	"github.com/qhronos/qhronos/internal/lifecycle"
	"github.com/qhronos/qhronos/internal/model"
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
	plan   lifecycle.Planning
}

// NewExpander returns an expander. locker may be nil (single instance), and
// cals nil when no event uses calendars (tests).
func NewExpander(cfg Config, store *repository.Store, cals lifecycle.Calendars, clock Clock, locker coordination.Locker,
	log *zap.Logger) *Expander {
	if clock == nil {
		clock = SystemClock{}
	}
	if log == nil {
		log = zap.NewNop()
	}
	return &Expander{cfg: cfg, store: store, clock: clock, locker: locker, log: log.Named("expander"),
		plan: lifecycle.Planning{Window: cfg.Window(), Calendars: cals}}
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

// expand plans and writes the next window of one event (see events.Expand).
func (x *Expander) expand(ctx context.Context, tx *repository.Store, ev *model.Event, now time.Time) (int, error) {
	if ev.Status != model.EventActive || ev.DeletedAt != nil {
		return 0, nil
	}
	rule, err := compileEvent(ev, x.cfg.Recurrence)
	if err != nil {
		return 0, err
	}
	return x.plan.Expand(ctx, tx, ev, rule, now)
}
