package scheduler

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/qhronos/qhronos/internal/actions"
	"github.com/qhronos/qhronos/internal/coordination"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
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

// ServiceDeps are the collaborators of the whole scheduler.
type ServiceDeps struct {
	Store    *repository.Store
	Registry *actions.Registry
	Clock    Clock
	Locker   coordination.Locker // nil for a single instance
	Wakeups  Wakeups             // nil: local wake-ups and polling only
	Secrets  SecretsResolver
	Logger   *zap.Logger
	// Observers are told about every recorded attempt (optional).
	Observers []AttemptObserver
	// Observer receives claim and expansion measurements (optional).
	Observer Observer
}

// Service runs the expander, dispatcher and rescuer loops of one instance
// and is what the API calls to expand events and wake dispatchers.
type Service struct {
	cfg        Config
	log        *zap.Logger
	obs        Observer
	wakeups    Wakeups
	Expander   *Expander
	Dispatcher *Dispatcher
	Rescuer    *Rescuer

	expandStatus, dispatchStatus, rescueStatus LoopStatus

	mu      sync.Mutex
	cancel  context.CancelFunc
	stop    chan struct{}
	loops   sync.WaitGroup
	dispCtl context.CancelFunc
	dispWG  sync.WaitGroup
}

// New wires the scheduler's parts.
func New(cfg Config, deps ServiceDeps) *Service {
	cfg = cfg.withDefaults()
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
	d := NewDispatcher(cfg, DispatcherDeps{Store: deps.Store, Registry: deps.Registry, Clock: deps.Clock,
		Secrets: deps.Secrets, Logger: deps.Logger, Wakeups: source, Observers: deps.Observers,
		Observer: deps.Observer})
	return &Service{
		cfg: cfg, log: deps.Logger.Named("scheduler"), wakeups: deps.Wakeups, obs: deps.Observer,
		Expander:   NewExpander(cfg, deps.Store, deps.Clock, deps.Locker, deps.Logger),
		Dispatcher: d,
		Rescuer:    NewRescuer(cfg, deps.Store, deps.Clock, d.Wake),
	}
}

// Start launches the loops; Stop ends them.
func (s *Service) Start(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stop != nil {
		return
	}
	s.stop = make(chan struct{})
	loopCtx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	go func() {
		select {
		case <-ctx.Done():
			s.Stop()
		case <-s.stop:
		}
	}()
	s.loops.Add(2)
	go func() {
		defer s.loops.Done()
		runLoop(s.stop, s.cfg.ExpandInterval, &s.expandStatus, func() (int, error) {
			start := time.Now()
			n, err := s.Expander.RunOnce(loopCtx)
			if s.obs != nil {
				s.obs.ObserveExpansion(time.Since(start), err)
			}
			return n, err
		})
	}()
	go func() {
		defer s.loops.Done()
		runLoop(s.stop, s.cfg.RescueInterval, &s.rescueStatus, func() (int, error) { return s.Rescuer.RunOnce(loopCtx) })
	}()
	dctx, dcancel := context.WithCancel(context.Background())
	s.dispCtl = dcancel
	if s.cfg.APIOnly {
		return
	}
	s.dispWG.Add(1)
	go func() {
		defer s.dispWG.Done()
		s.Dispatcher.Run(dctx, &s.dispatchStatus)
	}()
}

// Stop ends the loops in order: the expander and rescuer first, then the
// dispatcher, which drains its attempts within the drain timeout and
// releases rows it had not started. It returns when all have stopped.
func (s *Service) Stop() {
	s.mu.Lock()
	if s.stop == nil {
		s.mu.Unlock()
		return
	}
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	cancel, dcancel := s.cancel, s.dispCtl
	s.mu.Unlock()
	cancel()
	s.loops.Wait()
	rctx, rcancel := context.WithTimeout(context.Background(), 2*time.Second)
	s.Expander.resign(rctx)
	rcancel()
	dcancel()
	s.dispWG.Wait()
	s.Dispatcher.Close() // idempotent; stops the outcome writer of an API-only instance
}

// ExpandEvent materializes an event's occurrences in the caller's
// transaction (see Expander.ExpandEvent).
func (s *Service) ExpandEvent(ctx context.Context, tx *repository.Store, ev *model.Event, now time.Time) error {
	return s.Expander.ExpandEvent(ctx, tx, ev, now)
}

// CreateEvent stores a new event with its first occurrences in the caller's
// transaction (see Expander.CreateEvent).
func (s *Service) CreateEvent(ctx context.Context, tx *repository.Store, ev *model.Event, now time.Time) error {
	return s.Expander.CreateEvent(ctx, tx, ev, now)
}

// Pause, Resume and Reschedule apply an event's state change to its
// occurrences in the caller's transaction (see Expander).
func (s *Service) Pause(ctx context.Context, tx *repository.Store, ev *model.Event, now time.Time) error {
	return s.Expander.Pause(ctx, tx, ev, now)
}

// Resume re-expands a resumed event from now (see Expander.Resume).
func (s *Service) Resume(ctx context.Context, tx *repository.Store, ev *model.Event, now time.Time) error {
	return s.Expander.Resume(ctx, tx, ev, now)
}

// Reschedule re-expands an edited schedule (see Expander.Reschedule).
func (s *Service) Reschedule(ctx context.Context, tx *repository.Store, ev *model.Event, now time.Time) error {
	return s.Expander.Reschedule(ctx, tx, ev, now)
}

// Wake tells this instance's dispatcher at once, and every other instance
// through the bus, that something is due at at. Best effort: a lost wake-up
// only delays to the next poll.
func (s *Service) Wake(ctx context.Context, at time.Time) {
	s.Dispatcher.Wake()
	if s.wakeups == nil {
		return
	}
	if err := s.wakeups.Notify(ctx, at); err != nil {
		s.log.Debug("announce wakeup", zap.Error(err))
	}
}

// Status reports each loop's last run for /status.
func (s *Service) Status() map[string]any {
	return map[string]any{
		"expander":   s.expandStatus.Snapshot(),
		"dispatcher": s.Dispatcher.status(&s.dispatchStatus),
		"rescuer":    s.rescueStatus.Snapshot(),
	}
}
