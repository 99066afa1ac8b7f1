package scheduler

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/qhronos/qhronos/internal/actions"
	"github.com/qhronos/qhronos/internal/coordination"
	"github.com/qhronos/qhronos/internal/lifecycle"
	"github.com/qhronos/qhronos/internal/planner"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/startstop"
)

// WakeupNotifier announces an instant at which something became due to the
// dispatchers of every instance (coordination.Wakeups over the Bus).
type WakeupNotifier interface {
	Notify(ctx context.Context, at time.Time) error
}

// Wakeups both announces and delivers wake-ups.
type Wakeups interface {
	WakeupNotifier
	WakeupSource
}

// ServiceObserver receives the measurements of every loop of the service
// (metrics.Metrics implements it).
type ServiceObserver interface {
	Observer
	ArchiveObserver
}

// ServiceDeps are the collaborators of the whole scheduler.
type ServiceDeps struct {
	Store    *repository.Store
	Registry *actions.Registry
	Clock    Clock
	Locker   coordination.Locker // nil for a single instance
	Wakeups  Wakeups             // nil: local wake-ups and polling only
	Secrets  SecretsResolver
	Logger   *zap.Logger
	// Calendars compiles events' calendars for the expander (nil: none).
	Calendars lifecycle.Calendars
	// Observers are told about every recorded attempt (optional).
	Observers []AttemptObserver
	// Observer receives claim, expansion and archival measurements
	// (optional).
	Observer ServiceObserver
	// Endpoints admits attempts to endpoints (optional).
	Endpoints EndpointGate
}

// Service runs the background loops of one instance — expander,
// dispatcher, rescuer and archiver — and wakes dispatchers when the events
// service made something due.
type Service struct {
	startstop.Base

	cfg        Config
	log        *zap.Logger
	wakeups    Wakeups
	Expander   *Expander
	Dispatcher *Dispatcher
	Rescuer    *Rescuer
	Archiver   *Archiver

	expandStatus, rescueStatus LoopStatus
	expandLoop, rescueLoop     *loop
	ledgerStatus               LoopStatus
	ledgerLoop                 *loop
	// Partitioner keeps history's weekly partitions ahead (PostgreSQL).
	Partitioner     *Partitioner
	partitionStatus LoopStatus
	partitionLoop   *loop
	rollupStatus    LoopStatus
	rollupLoop      *loop
	// warmHotPath plans the dispatcher's statements on every connection
	// they run on (repository.Store.WarmHotPath).
	warmHotPath func(ctx context.Context) error
}

// partitionInterval is the period of the partition maintenance loop: the
// window it keeps is weeks wide, so a run every few minutes is plenty, and
// a new instance's first run is at its start.
const partitionInterval = 10 * time.Minute

// Rollup compaction: how often, how many fresh rows of each rollup table one
// round folds, how many rounds one run may take, and how long it may wait
// for a burst to drain (compactor).
const (
	rollupCompactInterval = 5 * time.Second
	rollupCompactBatch    = 50_000
	rollupCompactRounds   = 10
	rollupCompactMaxWait  = 30 * time.Second
)

// compactor folds the rollups' fresh rows, out of a burst's way: while the
// dispatcher is behind on due work it waits, up to rollupCompactMaxWait
// since its last run, so that the drain has the database to itself (a burst
// of one-time events appends a fresh punctuality row per event, and folding
// each into its hour and day rows costs as much as its delivery). Reports
// read fresh rows too, so they stay exact meanwhile. A run then takes
// rounds until one is not full, so waiting does not leave a backlog.
type compactor struct {
	compact func(ctx context.Context, limit int) (int, error) // Store.CompactRollups
	behind  func(within time.Duration) bool                   // Dispatcher.Behind
	now     func() time.Time
	last    time.Time
}

func (c *compactor) runOnce(ctx context.Context) (int, error) {
	now := c.now()
	if c.behind(rollupCompactInterval) && now.Sub(c.last) < rollupCompactMaxWait {
		return 0, nil
	}
	c.last = now
	total := 0
	for range rollupCompactRounds {
		n, err := c.compact(ctx, rollupCompactBatch)
		total += n
		if err != nil || n < rollupCompactBatch { // a round that was not full left nothing behind
			return total, err
		}
	}
	return total, nil
}

var _ startstop.Service = (*Service)(nil)

// New wires the scheduler's parts.
func New(cfg Config, deps ServiceDeps) *Service {
	if deps.Logger == nil {
		deps.Logger = zap.NewNop()
	}
	if deps.Clock == nil {
		deps.Clock = SystemClock{}
	}
	var source WakeupSource
	if deps.Wakeups != nil {
		source = deps.Wakeups
	}
	var obs Observer
	var archObs ArchiveObserver
	if deps.Observer != nil {
		obs, archObs = deps.Observer, deps.Observer
	}
	d := NewDispatcher(cfg, DispatcherDeps{Store: deps.Store, Registry: deps.Registry, Clock: deps.Clock,
		Secrets: deps.Secrets, Logger: deps.Logger, Wakeups: source, Observers: deps.Observers,
		Observer: obs, Endpoints: deps.Endpoints})
	s := &Service{
		cfg: cfg, log: deps.Logger.Named("scheduler"), wakeups: deps.Wakeups, warmHotPath: deps.Store.WarmHotPath,
		Expander:   NewExpander(cfg, deps.Store, deps.Calendars, deps.Clock, deps.Locker, deps.Logger),
		Dispatcher: d,
		Archiver: NewArchiver(cfg.Archive, ArchiverDeps{Store: deps.Store, Now: deps.Clock.Now,
			Logger: deps.Logger, Locker: deps.Locker, Owner: cfg.InstanceID, Observer: archObs,
			Rollups: deps.Store}),
	}
	// What the rescuer makes due may lie in any instance's buckets.
	s.Rescuer = NewRescuer(cfg, deps.Store, deps.Clock, func(at time.Time) { s.Wake(context.Background(), at) })
	s.expandLoop = &loop{interval: cfg.ExpandInterval, status: &s.expandStatus,
		once: func(ctx context.Context) (int, error) {
			start := time.Now()
			n, err := s.Expander.RunOnce(ctx)
			if obs != nil {
				obs.ObserveExpansion(time.Since(start), err)
			}
			return n, err
		}}
	s.rescueLoop = &loop{interval: cfg.RescueInterval, status: &s.rescueStatus, once: s.Rescuer.RunOnce}
	ledger := NewLedger(deps.Store, deps.Clock, deps.Locker, cfg.InstanceID, cfg.RescueInterval, obs)
	s.ledgerLoop = &loop{interval: cfg.RescueInterval, status: &s.ledgerStatus, once: ledger.RunOnce}
	s.Partitioner = NewPartitioner(deps.Store, deps.Clock, deps.Locker, cfg.InstanceID,
		max(DefaultPartitionsAhead, cfg.Lookahead+7*24*time.Hour), max(cfg.Archive.LockTTL, time.Minute))
	s.partitionLoop = &loop{interval: partitionInterval, status: &s.partitionStatus, once: s.Partitioner.RunOnce}
	s.rollupLoop = &loop{interval: rollupCompactInterval, status: &s.rollupStatus,
		once: (&compactor{compact: deps.Store.CompactRollups, behind: s.Dispatcher.Behind, now: time.Now}).runOnce}
	return s
}

// Start launches the loops (the dispatcher unless the instance is API-only)
// and returns. Cancelling ctx or calling Stop shuts them down in order: the
// expander, rescuer and archiver first (the expander hands its lock over),
// then the dispatcher, which drains its attempts within the drain timeout,
// releases rows it had not started and closes its outcome writer. A stopped
// service is not started again: its dispatcher is closed.
func (s *Service) Start(ctx context.Context) error {
	ctx, shouldStart, stopped := s.StartInit(ctx)
	if !shouldStart {
		return nil
	}
	if !s.cfg.APIOnly {
		s.prepareHotPath(ctx)
	}
	// The parts do not share ctx: shutdown stops them one after another.
	partCtx := context.WithoutCancel(ctx)
	parts := []startstop.Service{s.partitionLoop, s.expandLoop, s.rescueLoop, s.ledgerLoop, s.rollupLoop, s.Archiver}
	if !s.cfg.APIOnly {
		parts = append(parts, s.Dispatcher)
	}
	for i, p := range parts {
		if err := p.Start(partCtx); err != nil {
			for _, started := range parts[:i] {
				started.Stop()
			}
			stopped()
			return err
		}
	}
	go func() {
		defer stopped()
		<-ctx.Done()
		s.shutdown()
	}()
	return nil
}

// prepareHotPath makes the weeks' partitions, then the plans of the
// dispatcher's statements on every connection they run on, before the
// first read of due work: made in the first burst, the plans sat between
// its first instants and their sends (repository.Store.WarmHotPath), and a
// partition made after them (a new database's first weeks) would have had
// each connection plan again. Either failing only costs the first sends
// the time: the loops make the partitions, and the statements are planned
// on first use.
func (s *Service) prepareHotPath(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := s.Partitioner.RunOnce(ctx); err != nil {
		s.log.Warn("make the weeks' partitions before the first read", zap.Error(err))
		return
	}
	if err := s.warmHotPath(ctx); err != nil {
		s.log.Warn("plan the hot path's statements before the first read", zap.Error(err))
	}
}

// shutdown stops the parts in order.
func (s *Service) shutdown() {
	s.expandLoop.Stop()
	s.rescueLoop.Stop()
	s.ledgerLoop.Stop()
	s.partitionLoop.Stop()
	s.rollupLoop.Stop()
	s.Archiver.Stop()
	rctx, rcancel := context.WithTimeout(context.Background(), 2*time.Second)
	s.Expander.resign(rctx)
	rcancel()
	s.Dispatcher.Stop()
	s.Dispatcher.Close() // idempotent; stops the outcome writer of an API-only instance
}

// Wake tells this instance's dispatcher at once, and every other instance
// through the bus, that something is due at at. Best effort: a lost wake-up
// only delays to the next poll.
func (s *Service) Wake(ctx context.Context, at time.Time) {
	s.Dispatcher.Wake(at)
	if s.wakeups == nil {
		return
	}
	if err := s.wakeups.Notify(ctx, at); err != nil {
		s.log.Debug("announce wakeup", zap.Error(err))
	}
}

// Window is what one expansion of an event materializes: the events service
// plans an event's first rows with the same window as the expander.
func (s *Service) Window() planner.Window { return s.cfg.Window() }

// Status reports each loop's last run for /status.
func (s *Service) Status() map[string]any {
	out := map[string]any{
		"expander":   s.expandStatus.Snapshot(),
		"dispatcher": s.Dispatcher.status(),
		"rescuer":    s.rescueStatus.Snapshot(),
		"ledger":     s.ledgerStatus.Snapshot(),
		"rollups":    s.rollupStatus.Snapshot(),
		"archiver":   s.Archiver.Status(),
	}
	if s.Partitioner.store.Partitioned() {
		out["partitions"] = s.partitionDetails()
	}
	return out
}

// partitionDetails is the partition loop's last run with the layout it saw.
func (s *Service) partitionDetails() map[string]any {
	out := s.partitionStatus.Snapshot()
	for k, v := range s.Partitioner.Details() {
		out[k] = v
	}
	return out
}
