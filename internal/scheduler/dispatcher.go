package scheduler

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/qhronos/qhronos/internal/actions"
	"github.com/qhronos/qhronos/internal/endpoints"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/ownership"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/startstop"
)

// SecretsResolver returns an event's plaintext signing secrets, newest
// first (the stored ones are ciphertext; the secrets package decrypts).
type SecretsResolver func(ev *model.Event) ([]string, error)

// AttemptObserver is told about every attempt once its outcome is written
// (metrics.Metrics and hub.Hub implement it): the event and occurrence as
// claimed, the action's outcome and the instant the attempt started. It must
// not block.
type AttemptObserver interface {
	ObserveAttempt(ev *model.Event, occ *model.Occurrence, out actions.Outcome, started time.Time)
}

// DispatcherDeps are the dispatcher's collaborators.
type DispatcherDeps struct {
	Store    *repository.Store
	Registry *actions.Registry
	Clock    Clock
	Secrets  SecretsResolver
	Logger   *zap.Logger
	// Wakeups, when set, wakes the dispatcher early for instants announced
	// by any instance.
	Wakeups WakeupSource
	// Rand returns floats in [0, 1) for backoff jitter; default math/rand.
	Rand func() float64
	// Observers are told about every recorded attempt (optional).
	Observers []AttemptObserver
	// Observer is optional.
	Observer Observer
	// Endpoints admits attempts of actions that name an endpoint (nil: such
	// attempts fail as unresolvable).
	Endpoints EndpointGate
}

// EndpointGate resolves an action's endpoint and admits each attempt
// through its state and limits (endpoints.Runtime).
type EndpointGate interface {
	Admit(ctx context.Context, id string) *endpoints.Admission
	Done(ctx context.Context, adm *endpoints.Admission, ran, ok bool, errText string, d time.Duration)
}

// Observer receives measurements of the scheduler's loops (metrics).
type Observer interface {
	ObserveClaim(n int)
	ObserveExpansion(d time.Duration, err error)
	// ObserveEnded counts due instants that ended without firing, by
	// status and reason (the ledger).
	ObserveEnded(status model.OccurrenceStatus, reason string, n int)
}

// WakeupSource delivers instants at which something became due
// (coordination.Wakeups over the Bus).
type WakeupSource interface {
	Subscribe(ctx context.Context) <-chan time.Time
}

// Dispatcher reads the due occurrences of the bucket slots this instance
// owns in batches (writing nothing), holds each until its instant by the
// deployment clock, checks its event's current state, runs its action on a
// bounded pool and records the outcome under its slot's epoch.
type Dispatcher struct {
	startstop.Base
	runStatus LoopStatus // Run's claims, for /status

	cfg       Config
	store     *repository.Store
	clock     Clock
	secrets   SecretsResolver
	log       *zap.Logger
	wakeups   WakeupSource
	rnd       func() float64
	observers []AttemptObserver
	endpoints EndpointGate

	sem chan struct{} // one slot per running attempt
	// fanoutSends bounds the deliveries of every fan-out round in flight
	// at once (a round holds one sem slot however many it sends).
	fanoutSends chan struct{}
	share       *fairShare  // each tenant's and destination's share of the pool
	deliveries  *deliveries // each event version's prepared action
	filters     filterCache // subscriptions' compiled filters (fanout.go)
	obs         Observer
	rec         *recorder
	// idleAttempter hands an attempt to a goroutine that finished one
	// (startAttempt); unbuffered, so a send succeeds only while one waits.
	idleAttempter chan *job
	attempters    sync.WaitGroup // the goroutines startAttempt started
	// overlap is the runs of overlap-policy events started here (overlap.go);
	// releases are the releases of instants waiting for them under way.
	overlap  *overlapRuns
	releases sync.WaitGroup
	// books writes the event bookkeeping of recorded outcomes, coalesced.
	books   *bookkeeper
	wakeNow chan struct{} // local wake-ups (Wake)

	// stopping closes when Run's context ends: holders release the rows
	// they have not started.
	stopping chan struct{}
	stopOnce sync.Once
	// attemptCtx bounds in-flight attempts; cancelled when the drain
	// timeout passes.
	attemptCtx    context.Context
	cancelAttempt context.CancelFunc
	holders       sync.WaitGroup
	closeOnce     sync.Once

	// own is this instance's share of the bucket slots, renewed by the
	// heartbeat until the drain; inflight is the rows read and not settled.
	own      *ownership.Manager
	inflight *inFlight
	// active is set by the first read: from then on the heartbeat renews
	// the slots and Close hands them over.
	active        atomic.Bool
	heartbeatStop chan struct{}
	heartbeatDone chan struct{}
	// behindAt is when a read last found more due work than it could take
	// (unix nanoseconds; 0: never): Behind.
	behindAt atomic.Int64
	// lead is how long before their instants held rows are read again.
	lead checkLead

	mu        sync.Mutex
	held      int           // rows read whose outcome is not written yet
	queued    int           // of those, the ones handed to the outcome writer
	rate      outcomeRate   // of rows handed to the outcome writer: maxQueuedLocked
	changed   chan struct{} // closed and replaced whenever capacity grows
	announced time.Time     // earliest instant given to Wake, not yet seen by Run
	// readNext is the earliest instant after the last read's window of a
	// row it did not hold (nil: none), valid until the next sleep takes it
	// (readNextSet); see sleep.
	readNext    *time.Time
	readNextSet bool
	// dueAfter is the key of the last row the reads since dueAfterSince
	// took, with the slots they read (dueAfterOwned): the next read starts
	// after it (repository.DueRequest.After). Wake forgets it, and counts
	// in wakes, so that a read under way when a row came back to waiting
	// (it may lie behind the read's last row) keeps no key; so does a
	// max_sleep since the last read from the start of the due index.
	dueAfter      *repository.DueKey
	dueAfterOwned map[int]int64
	dueAfterSince time.Time
	wakes         uint64
}

// NewDispatcher returns a dispatcher; Close it (Run does) to stop its
// outcome writer.
func NewDispatcher(cfg Config, deps DispatcherDeps) *Dispatcher {
	if deps.Logger == nil {
		deps.Logger = zap.NewNop()
	}
	if deps.Clock == nil {
		deps.Clock = SystemClock{}
	}
	if deps.Rand == nil {
		deps.Rand = rand.Float64
	}
	if deps.Secrets == nil {
		deps.Secrets = func(*model.Event) ([]string, error) { return nil, nil }
	}
	log := deps.Logger.Named("dispatcher")
	actx, cancel := context.WithCancel(context.Background())
	d := &Dispatcher{
		cfg: cfg, store: deps.Store, clock: deps.Clock, secrets: deps.Secrets, log: log,
		wakeups: deps.Wakeups, rnd: deps.Rand, observers: deps.Observers, obs: deps.Observer, endpoints: deps.Endpoints,
		sem: make(chan struct{}, cfg.Workers), fanoutSends: make(chan struct{}, max(cfg.Workers, fanoutParallelism)),
		idleAttempter: make(chan *job),
		deliveries:    newDeliveries(deliveryCacheSize, deps.Registry.Prepare),
		wakeNow:       make(chan struct{}, 1), stopping: make(chan struct{}),
		attemptCtx: actx, cancelAttempt: cancel, changed: make(chan struct{}),
		inflight: newInFlight(), overlap: newOverlapRuns(), heartbeatStop: make(chan struct{}), heartbeatDone: make(chan struct{}),
	}
	d.books = newBookkeeper(deps.Store, log, cfg.BookkeepingInterval, d.Behind)
	// Outcomes are retried past the lease while the database is away: the
	// write is fenced, so a late one that lost its lease changes nothing,
	// and one that still holds it saves a second delivery.
	d.rec = newRecorder(deps.Store, log, cfg.RecordBatch, cfg.RecordInterval, max(cfg.Lease, recordRetryFor),
		d.books.note)
	d.own = ownership.NewManager(ownership.Config{InstanceID: cfg.InstanceID, Lease: cfg.Lease,
		RenewEvery: cfg.LeaseRenewInterval, TakeOver: cfg.Exclusive, Now: deps.Clock.Now, Local: deps.Clock.Now,
		Busy: d.inflight.busy, Logger: log}, deps.Store)
	d.share = newFairShare(cfg, deps.Clock, d.stopping)
	_ = d.rec.Start(context.Background()) // stopped by Close
	go d.heartbeat()
	return d
}

// recordRetryFor is how long a batch of outcomes is retried while the
// database fails.
const recordRetryFor = 2 * time.Minute

// job is one read occurrence on its way to an attempt. occ.AttemptCount is
// the number of the attempt it is on its way to (the count read plus one).
type job struct {
	occ     model.Occurrence
	ev      model.Event
	policy  RetryPolicy
	custody custody
	// freshUntil is when the read of the row and ev (triage, right after
	// the row, or preFire) becomes too old to fire on (see stale).
	freshUntil time.Time
	// mark is where the notes of changes stood before that read: the
	// pre-fire read asks only about the rows of buckets changed since
	// (recheck).
	mark heldMark
}

// RunOnce reads one batch of the due occurrences of the slots this instance
// owns (taking its first share of them if it has none yet), resolves the
// ones that must not fire (event gone or paused, attempts exhausted, missed
// by catch-up) and hands the rest to a holder that fires each at its
// instant. It returns the number of rows read; attempts continue after it
// returns (Wait).
func (d *Dispatcher) RunOnce(ctx context.Context) (int, error) {
	d.takeReadNext() // set again only by a read that sees its whole window
	limit := d.capacity()
	if limit <= 0 {
		d.behindAt.Store(time.Now().UnixNano())
		return 0, nil
	}
	d.active.Store(true)
	owned := d.own.Owned()
	if len(owned) == 0 {
		if err := d.Renew(ctx); err != nil {
			return 0, err
		}
		if owned = d.own.Owned(); len(owned) == 0 {
			return 0, nil
		}
	}
	slots := make([]int, 0, len(owned))
	for sl := range owned {
		slots = append(slots, sl)
	}
	now := d.clock.Now()
	after, wakes, since := d.takeDueAfter(owned, now)
	skip := d.inflight.beginRead(after == nil)
	mark := d.markChanges(ctx)
	occs, next, err := d.store.ReadDueAndNext(ctx, repository.DueRequest{Until: now.Add(d.cfg.ClaimAhead),
		Slots: slots, Skip: skip, Limit: limit, After: after})
	if err == nil && len(occs) < limit {
		d.setReadNext(next)
	}
	if err == nil {
		// The next read starts after what this one took (or after the same
		// key when it took nothing): every waiting row up to it is in
		// flight or was settled.
		if len(occs) > 0 {
			after = new(repository.KeyOf(&occs[len(occs)-1]))
		}
		if after != nil {
			d.keepDueAfter(*after, owned, wakes, since)
		}
	}
	occs = d.inflight.endRead(occs)
	if err != nil {
		return 0, err
	}
	if len(occs) >= limit && !fireAt(&occs[len(occs)-1]).After(now) {
		d.behindAt.Store(time.Now().UnixNano())
	}
	held := make(map[string]custody, len(occs))
	taken := occs[:0]
	for _, occ := range occs {
		c, ok := custodyOf(&occ, owned)
		if !ok {
			continue
		}
		occ.AttemptCount++ // the attempt this read is for
		held[occ.ID] = c
		taken = append(taken, occ)
		d.claimed(occ.ID, c.slot)
	}
	occs = taken
	if len(occs) == 0 {
		return 0, nil
	}
	if d.obs != nil {
		d.obs.ObserveClaim(len(occs))
	}
	jobs, err := d.triage(ctx, occs, held, mark, now)
	if err != nil {
		// Nothing was attempted: let the whole batch go (it is still
		// waiting in the database) for the next read.
		ids := make([]string, len(occs))
		for i := range occs {
			ids[i] = occs[i].ID
		}
		d.settled(ids...)
		d.forgetDueAfter() // they lie behind it
		return len(occs), fmt.Errorf("read the due occurrences' events: %w", err)
	}
	if len(jobs) > 0 {
		d.holders.Add(1)
		go d.hold(jobs)
	}
	return len(occs), nil
}

// triage decides, right after the read, what each row becomes; the rows
// that may fire are returned sorted by their instant.
func (d *Dispatcher) triage(ctx context.Context, occs []model.Occurrence, held map[string]custody, mark heldMark,
	now time.Time) ([]job, error) {
	ids := make([]string, len(occs))
	for i := range occs {
		ids[i] = occs[i].EventID
	}
	events, err := d.store.EventsByID(ctx, ids)
	if err != nil {
		return nil, err
	}
	freshUntil := d.clock.Now().Add(d.lead.freshFor())
	latest, err := d.latestOverdue(ctx, occs, events, now)
	if err != nil {
		return nil, err
	}
	jobs := make([]job, 0, len(occs)) // a job is large: no regrowth
	for _, occ := range occs {
		c := held[occ.ID]
		ev, ok := events[occ.EventID]
		if reason := staleReason(ok, &ev, &occ); reason != "" {
			d.ended(&occ, c, reason, now)
			continue
		}
		policy, err := PolicyFor(ev.Retry, d.cfg.Retry)
		if err != nil {
			d.log.Warn("bad retry policy, using defaults", zap.String("event_id", ev.ID), zap.Error(err))
		}
		// An operator's re-delivery gets its attempt even past the limit. A
		// fan-out keeps each delivery's budget itself (fanout.go).
		limit := policy.MaxAttempts
		if ev.Action.Type == model.ActionTopic {
			limit = maxFanoutRounds
		}
		if occ.ChargedAttempts() > limit && !occ.ManualRetry {
			d.skip(&occ, c, model.OccurrenceFailed,
				fmt.Sprintf("%s: no attempt left after %d", ErrAttemptsExhausted, limit), now, false)
			continue
		}
		if miss, reason, msg := d.cfg.CatchUp.Miss(ev.CatchUp, &occ, now, latest[ev.ID]); miss {
			d.resolve(&occ, c, model.OccurrenceMissed, reason, msg, now, true)
			continue
		}
		jobs = append(jobs, job{occ: occ, ev: ev, policy: policy, custody: c, freshUntil: freshUntil, mark: mark})
	}
	sort.SliceStable(jobs, func(i, j int) bool { return fireAt(&jobs[i].occ).Before(fireAt(&jobs[j].occ)) })
	return jobs, nil
}

// latestOverdue finds the newest overdue instant of every catch_up=latest
// event with an overdue row in the batch (it may sit in a later batch).
func (d *Dispatcher) latestOverdue(ctx context.Context, occs []model.Occurrence, events map[string]model.Event, now time.Time) (map[string]time.Time, error) {
	var ids []string
	for i := range occs {
		ev, ok := events[occs[i].EventID]
		if ok && ev.CatchUp == CatchUpLatest && d.cfg.CatchUp.Overdue(&occs[i], now) {
			ids = append(ids, ev.ID)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	return d.store.LatestOverdue(ctx, ids, d.cfg.CatchUp.Cutoff(now))
}

// staleReason says why an occurrence of ev must not fire now, or "".
// Manual triggers and re-deliveries may fire while the event is paused.
func staleReason(found bool, ev *model.Event, occ *model.Occurrence) string {
	switch {
	case !found || ev.DeletedAt != nil || ev.Status == model.EventDeleted:
		return model.ReasonEventDeleted
	case ev.Status == model.EventPaused && !occ.Manual && !occ.ManualRetry &&
		(ev.PausedUntil == nil || occ.ScheduledAt.Before(*ev.PausedUntil)):
		// A pause until a moment covers the instants before it only.
		return model.ReasonPaused
	}
	return ""
}

// ended resolves a read row that must not fire for a ledger reason.
func (d *Dispatcher) ended(occ *model.Occurrence, c custody, reason string, now time.Time) {
	status, msg := model.EndedBy(reason)
	d.resolve(occ, c, status, reason, msg, now, true)
}

// skip records an outcome made without an attempt. uncount leaves the
// attempt count as read (missed and cancelled rows were never attempted);
// otherwise the row is charged the attempt it was read for.
func (d *Dispatcher) skip(occ *model.Occurrence, c custody, status model.OccurrenceStatus, msg string, now time.Time, uncount bool) {
	d.resolve(occ, c, status, "", msg, now, uncount)
}

// resolve records an outcome made without an attempt, with its ledger
// reason (may be empty) and description.
func (d *Dispatcher) resolve(occ *model.Occurrence, c custody, status model.OccurrenceStatus, reason, msg string,
	now time.Time, uncount bool) {
	d.record(repository.OutcomeRecord{OccurrenceID: occ.ID, Status: status,
		ErrorMessage: &msg, Reason: reason, Now: now, Uncount: uncount, EventID: occ.EventID,
		Ran: status == model.OccurrenceFailed, LastStatus: msg, Slot: c.slot, Epoch: c.epoch, Seen: c.seen,
	}, func(err error) {
		if err == nil && d.obs != nil {
			d.obs.ObserveEnded(status, reason, 1)
		}
		d.settled(occ.ID)
	})
}

// capacity is how many rows the next read may take. Rows not yet handed
// to the outcome writer wait for a worker, so reading far beyond the pool
// only ages them: up to two batches plus the pool of those. Rows whose
// outcome is queued need no worker; they only wait for their write, and the
// more of them wait, the larger and cheaper each write is (its cost is
// mostly round trips, not rows). They are bounded by maxQueuedLocked, which
// keeps the rows in memory (and the list each read leaves out) bounded.
func (d *Dispatcher) capacity() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.capacityLocked()
}

func (d *Dispatcher) capacityLocked() int {
	unsent := d.held - d.queued
	return min(d.cfg.ClaimBatch, 2*d.cfg.ClaimBatch+d.cfg.Workers-unsent,
		2*d.cfg.ClaimBatch+d.cfg.Workers+d.maxQueuedLocked()-d.held)
}

// maxQueuedLocked is how many rows may wait for their outcome write beyond
// the two batches and the pool: minQueuedWrites writes' worth, and while a
// write has stalled, queueSpan of the recent peak rate up to
// maxQueuedWrites writes' worth (outcomerate.go).
func (d *Dispatcher) maxQueuedLocked() int {
	least := minQueuedWrites * d.cfg.RecordBatch
	now := time.Now()
	if d.rec == nil || d.rec.stalledFor(now) < writeStalledAfter {
		return least
	}
	span := int(d.rate.peak(now) * queueSpan.Seconds())
	return min(maxQueuedWrites*d.cfg.RecordBatch, max(least, span))
}

// record queues an outcome for the writer and counts its row as queued (no
// longer waiting for a worker) until done.
func (d *Dispatcher) record(rec repository.OutcomeRecord, done func(error)) {
	d.addQueued(1)
	d.rec.add(rec, func(err error) {
		d.addQueued(-1)
		done(err)
		switch {
		case err != nil:
			d.Wake(d.clock.Now()) // not written: the row is still due
		case rec.Status == model.OccurrenceRetrying && rec.NextAttemptAt != nil:
			d.Wake(*rec.NextAttemptAt)
		}
	})
}

func (d *Dispatcher) addQueued(n int) {
	d.mu.Lock()
	d.queued += n
	if n > 0 { // the row no longer waits for a worker: room to read
		d.rate.add(time.Now(), n)
		d.roomLocked()
	}
	d.mu.Unlock()
}

// roomLocked wakes whoever waits for capacity (room); d.mu is held.
func (d *Dispatcher) roomLocked() {
	close(d.changed)
	d.changed = make(chan struct{})
}

// Behind reports whether, within the last `within`, a read found more due
// work than the dispatcher could take at once (two batches and the pool
// already held, or a full batch read whose rows were all due by then): a
// backlog being drained. Work that can wait (the rollups' compaction, the
// event bookkeeping) waits for it to end. Slow sends alone do not make it:
// the read's batch stays whole until the rows held reach two batches beyond
// the pool. Nor does a steady stream that is on time: from 2,000 instants a
// second the claim-ahead window holds more than a batch, so every read was
// full, and the compaction, put off for its longest wait, folded half a
// minute of rows at once, in the middle of the stream (#36: sends up to
// 2.5 s late from 30 s into a steady minute at 4,000 a second).
func (d *Dispatcher) Behind(within time.Duration) bool {
	at := d.behindAt.Load()
	return at != 0 && time.Since(time.Unix(0, at)) < within
}

// minClaim is the capacity a busy dispatcher waits for before claiming
// again: a claim costs a few round trips, so it should take many rows.
func (d *Dispatcher) minClaim() int { return max(1, d.cfg.ClaimBatch/2) }

// claimed starts tracking a row read: in flight, and counted as held,
// until settled.
func (d *Dispatcher) claimed(id string, slot int) {
	d.inflight.add(id, slot)
	d.addHeld(1)
}

// settled stops tracking rows whose outcome is written, or which were
// dropped or let go unstarted.
func (d *Dispatcher) settled(ids ...string) {
	d.overlap.settled(ids...)
	if n := d.inflight.remove(ids...); n > 0 {
		d.addHeld(-n)
	}
}

func (d *Dispatcher) addHeld(n int) {
	d.mu.Lock()
	d.held += n
	if n < 0 {
		d.roomLocked()
	}
	d.mu.Unlock()
}

// Held is the number of claimed occurrences whose outcome is not yet
// written.
func (d *Dispatcher) Held() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.held
}

// Wait blocks until every claimed occurrence has its outcome written (or was
// released), or ctx ends.
func (d *Dispatcher) Wait(ctx context.Context) error {
	for {
		d.mu.Lock()
		held, changed := d.held, d.changed
		d.mu.Unlock()
		if held == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for %d occurrences in flight: %w", held, ctx.Err())
		case <-changed:
		}
	}
}

// setReadNext keeps what a read found of the next instant for the next
// sleep (nil: no row waits after the read's window).
func (d *Dispatcher) setReadNext(at *time.Time) {
	d.mu.Lock()
	d.readNext, d.readNextSet = at, true
	d.mu.Unlock()
}

// takeReadNext returns and forgets the last read's next instant; ok is
// false when no read since the last sleep saw its whole window.
func (d *Dispatcher) takeReadNext() (at *time.Time, ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	at, ok = d.readNext, d.readNextSet
	d.readNext, d.readNextSet = nil, false
	return at, ok
}

// keepDueAfter remembers the key of the last row a read took while owning
// owned, for the next read to start after, unless something woke the
// dispatcher since the read began (wakes, from takeDueAfter); since is when
// the chain of reads after keys began with a read from the start.
func (d *Dispatcher) keepDueAfter(key repository.DueKey, owned map[int]int64, wakes uint64, since time.Time) {
	d.mu.Lock()
	if d.wakes == wakes {
		d.dueAfter, d.dueAfterOwned, d.dueAfterSince = &key, owned, since
	}
	d.mu.Unlock()
}

// takeDueAfter returns and forgets the key the next read may start after,
// with the count of wakes so far and when its chain began (now for a read
// without a key): nil when nothing was read since the last wake-up (a row
// may have come back to waiting behind the key), when this dispatcher no
// longer owns the same slots under the same epochs (a slot taken over
// brings rows of any instant), or when the chain is max_sleep old. That
// last bound is a safety net: a row back behind the key that woke no one
// waits at most that long, as it would for a sleeping dispatcher.
func (d *Dispatcher) takeDueAfter(owned map[int]int64, now time.Time) (*repository.DueKey, uint64, time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	key, since := d.dueAfterLocked(owned, now), d.dueAfterSince
	d.dueAfter, d.dueAfterOwned = nil, nil
	if key == nil {
		return nil, d.wakes, now
	}
	return key, d.wakes, since
}

// peekDueAfter is the key the next read would start after while owning
// owned (nil when none), left in place.
func (d *Dispatcher) peekDueAfter(owned map[int]int64, now time.Time) *repository.DueKey {
	d.mu.Lock()
	defer d.mu.Unlock()
	if key := d.dueAfterLocked(owned, now); key != nil {
		return new(*key)
	}
	return nil
}

// dueAfterLocked is the key kept, nil when it may not serve a read while
// owning owned at now (see takeDueAfter).
func (d *Dispatcher) dueAfterLocked(owned map[int]int64, now time.Time) *repository.DueKey {
	if d.dueAfter == nil || !maps.Equal(d.dueAfterOwned, owned) || now.Sub(d.dueAfterSince) >= d.cfg.MaxSleep {
		return nil
	}
	return d.dueAfter
}

// forgetDueAfter drops the key: a row may have come back to waiting behind
// it.
func (d *Dispatcher) forgetDueAfter() {
	d.mu.Lock()
	d.forgetDueAfterLocked()
	d.mu.Unlock()
}

func (d *Dispatcher) forgetDueAfterLocked() {
	d.dueAfter, d.dueAfterOwned = nil, nil
	d.wakes++
}

// Wake tells a sleeping Run loop that something is due at at: it claims at
// once when at is due (minus claim-ahead), and otherwise sleeps no later
// than that.
func (d *Dispatcher) Wake(at time.Time) {
	d.mu.Lock()
	d.forgetDueAfterLocked() // at may lie behind it
	if d.announced.IsZero() || at.Before(d.announced) {
		d.announced = at
	}
	d.mu.Unlock()
	select {
	case d.wakeNow <- struct{}{}:
	default:
	}
}

// takeAnnounced returns and forgets the earliest instant given to Wake.
func (d *Dispatcher) takeAnnounced() time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	at := d.announced
	d.announced = time.Time{}
	return at
}

// status adds the dispatcher's live figures to its loop status.
func (d *Dispatcher) status() map[string]any {
	out := d.runStatus.Snapshot()
	out["in_flight"] = d.Held()
	out["workers"] = d.cfg.Workers
	out["ownership"] = d.own.Status()
	shareFields(d.share.status(), out)
	return out
}
