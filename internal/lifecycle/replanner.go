package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/qhronos/qhronos/internal/coordination"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/startstop"
)

// replannerLock is the leader lock name of the re-planner.
const replannerLock = "replanner"

// ReplannerConfig bounds the re-planner's work.
type ReplannerConfig struct {
	// Interval is the period of the runs Start makes (default 2 s).
	Interval time.Duration
	// EventsPerRun bounds the events one run re-plans (default 100); a
	// calendar with more is walked over several runs.
	EventsPerRun int
	// CalendarsPerRun bounds the pending calendars one run looks at
	// (default 10), oldest request first.
	CalendarsPerRun int
}

// ReplannerDeps are the re-planner's collaborators.
type ReplannerDeps struct {
	// Locker, when set, lets one instance at a time run (lock "replanner");
	// without it, or when it errors, every instance runs, which is safe: a
	// re-plan is idempotent.
	Locker coordination.Locker
	Owner  string // this instance's id, the lock owner
	Logger *zap.Logger
}

// ReplanResult is what one run did.
type ReplanResult struct {
	Skipped   bool // another instance holds the lock
	Replanned int  // events re-planned
	Failed    int  // events whose re-plan failed (logged, not retried)
	Finished  int  // calendars whose every event is done
}

// Replanner re-plans the future occurrences of the events that use a
// calendar after an edit of its days (UpdateCalendar records the request):
// every run takes the oldest pending calendars and walks their events in
// id order, at most EventsPerRun events a run, calling Service.Replan for
// each; once a calendar's walk ends it clears the request, unless the
// calendar was edited again meanwhile (then the walk starts over).
type Replanner struct {
	startstop.Base

	svc  *Service
	cfg  ReplannerConfig
	deps ReplannerDeps
	log  *zap.Logger

	run   sync.Mutex      // one run at a time
	walks map[string]walk // calendar id → progress, guarded by run

	mu        sync.Mutex
	runs      int64
	lastRun   time.Time
	replanned int64
	failed    int64
	lastErr   string
}

// walk is how far a calendar's re-plan has gone.
type walk struct {
	requestedAt time.Time
	after       string // last event id done
}

var _ startstop.Service = (*Replanner)(nil)

// NewReplanner returns the re-planner of svc's calendars; it does nothing
// until RunOnce or Start.
func NewReplanner(svc *Service, cfg ReplannerConfig, deps ReplannerDeps) *Replanner {
	if cfg.Interval <= 0 {
		cfg.Interval = 2 * time.Second
	}
	if cfg.EventsPerRun <= 0 {
		cfg.EventsPerRun = 100
	}
	if cfg.CalendarsPerRun <= 0 {
		cfg.CalendarsPerRun = 10
	}
	if deps.Logger == nil {
		deps.Logger = zap.NewNop()
	}
	return &Replanner{svc: svc, cfg: cfg, deps: deps, log: deps.Logger.Named("replanner"), walks: map[string]walk{}}
}

// RunOnce advances the pending re-plans by at most EventsPerRun events.
// An event whose re-plan fails is logged and counted, and the walk goes
// on; a database that is away ends the run where it stands.
func (r *Replanner) RunOnce(ctx context.Context) (ReplanResult, error) {
	r.run.Lock()
	defer r.run.Unlock()
	start := r.svc.now()
	var res ReplanResult
	if !r.lead(ctx) {
		res.Skipped = true
		r.record(start, res, nil)
		return res, nil
	}
	err := r.advance(ctx, &res)
	r.record(start, res, err)
	return res, err
}

func (r *Replanner) advance(ctx context.Context, res *ReplanResult) error {
	store := r.svc.store
	reqs, err := store.CalendarsToReplan(ctx, r.cfg.CalendarsPerRun)
	if err != nil {
		return err
	}
	if len(reqs) < r.cfg.CalendarsPerRun {
		r.prune(reqs)
	}
	budget := r.cfg.EventsPerRun
	for _, req := range reqs {
		if budget == 0 {
			break
		}
		w := r.walks[req.CalendarID]
		if !w.requestedAt.Equal(req.RequestedAt) {
			w = walk{requestedAt: req.RequestedAt} // new, or edited again: from the start
		}
		done := false
		for budget > 0 && !done {
			ids, err := store.EventsUsingCalendar(ctx, req.CalendarID, w.after, budget)
			if err != nil {
				r.walks[req.CalendarID] = w
				return err
			}
			done = len(ids) < budget
			for _, id := range ids {
				if err := r.svc.Replan(ctx, id); err != nil {
					if ctx.Err() != nil || errors.Is(err, model.ErrUnavailable) {
						r.walks[req.CalendarID] = w
						// No event id: /status is public and shows this.
						return fmt.Errorf("re-plan an event: %w", err)
					}
					res.Failed++
					r.log.Warn("re-plan event", zap.String("event_id", id),
						zap.String("calendar_id", req.CalendarID), zap.Error(err))
				} else {
					res.Replanned++
				}
				w.after = id
				budget--
			}
		}
		if !done {
			r.walks[req.CalendarID] = w
			continue
		}
		delete(r.walks, req.CalendarID)
		if _, err := store.FinishReplan(ctx, req.CalendarID, req.RequestedAt); err != nil {
			return err
		}
		res.Finished++
	}
	return nil
}

// prune forgets walks of calendars no longer pending (deleted, or finished
// by another instance); called when reqs holds every pending calendar.
func (r *Replanner) prune(reqs []repository.ReplanRequest) {
	pending := make(map[string]bool, len(reqs))
	for _, q := range reqs {
		pending[q.CalendarID] = true
	}
	for id := range r.walks {
		if !pending[id] {
			delete(r.walks, id)
		}
	}
}

// lead reports whether this instance should run now.
func (r *Replanner) lead(ctx context.Context) bool {
	if r.deps.Locker == nil {
		return true
	}
	ok, err := r.deps.Locker.TryLock(ctx, replannerLock, r.deps.Owner, 2*r.cfg.Interval)
	if err != nil {
		r.log.Warn("replanner lock unavailable; running anyway", zap.Error(err))
		return true
	}
	return ok
}

func (r *Replanner) record(start time.Time, res ReplanResult, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.runs++
	r.lastRun = start.UTC()
	r.replanned += int64(res.Replanned)
	r.failed += int64(res.Failed)
	r.lastErr = ""
	if err != nil {
		r.lastErr = err.Error()
	}
}

// Start calls RunOnce now and then every interval until ctx ends or Stop
// is called; at the end it gives up the lock so another instance takes
// over at once.
func (r *Replanner) Start(ctx context.Context) error {
	ctx, shouldStart, stopped := r.StartInit(ctx)
	if !shouldStart {
		return nil
	}
	go func() {
		defer stopped()
		startstop.Every(ctx, r.cfg.Interval, true, func(ctx context.Context) {
			if _, err := r.RunOnce(ctx); err != nil && ctx.Err() == nil {
				r.log.Error("replanner run", zap.Error(err))
			}
		})
		r.resign(ctx)
	}()
	return nil
}

// resign releases the lock with a fresh context: the run's has ended.
func (r *Replanner) resign(ctx context.Context) {
	if r.deps.Locker == nil {
		return
	}
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := r.deps.Locker.Unlock(uctx, replannerLock, r.deps.Owner); err != nil {
		r.log.Warn("release replanner lock", zap.Error(err))
	}
}

// Status is a snapshot for /status (public): counts, timing and the last
// run's error text only, never an event or calendar id.
func (r *Replanner) Status() map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]any{"runs": r.runs, "events_replanned": r.replanned, "events_failed": r.failed,
		"healthy": r.lastErr == ""}
	if r.runs > 0 {
		out["last_run"] = r.lastRun.Format(time.RFC3339Nano)
	}
	if r.lastErr != "" {
		out["error"] = r.lastErr
	}
	return out
}
