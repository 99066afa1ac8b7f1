package scheduler

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/qhronos/qhronos/internal/repository"
)

// runWriter persists event bookkeeping (the repository's NoteEventRuns).
type runWriter interface {
	NoteEventRuns(ctx context.Context, runs []repository.EventRun) error
}

// DefaultBookkeepingInterval is how often the bookkeeper writes: the delay
// after which an event's last_run_at, last_status, next_run_at and a
// finished series' inactive status show a delivery. Long enough that an
// event firing every second costs one row write per interval, not one per
// delivery; short enough that a user reading the event right after a
// delivery rarely notices.
const DefaultBookkeepingInterval = 500 * time.Millisecond

// While the dispatcher drains a backlog of due work (Dispatcher.Behind
// within bookkeepingBehindWithin), the bookkeeper leaves its writes for
// later: a burst of one-time events costs one event row write each, about a
// quarter of the database's time per delivery (BENCHMARKS.md, "#36: sixth
// step"), and the drain is sooner without it. It writes anyway once
// BookkeepingMaxWait passed since its last write or bookkeepingMaxPending
// events wait, so staleness and memory stay bounded; the rescuer's repair
// waits longer than that before it takes a run for forgotten.
const (
	bookkeepingBehindWithin = time.Second
	BookkeepingMaxWait      = 30 * time.Second
	bookkeepingMaxPending   = 50_000
)

// bookkeeper keeps the event bookkeeping off the outcome's transaction: the
// recorder hands it every applied outcome's Run, it keeps the newest effect
// per event, and it writes them all every interval in one statement per
// chunk of 500 events. Ten thousand deliveries of one event between two
// flushes are one row write; a burst of a million one-time events is two
// thousand statements instead of a million locked row updates inside the
// outcome transactions.
//
// A write that fails is kept and merged with what arrives meanwhile (the
// newest attempt still wins), and tried again next interval. Stop writes
// what is pending, once. What a crash forgets (at most an interval's worth)
// the rescuers repair once this process's registration lapses
// (repository.RepairEventRuns).
type bookkeeper struct {
	store    runWriter
	log      *zap.Logger
	interval time.Duration
	// behind reports a backlog being drained (Dispatcher.Behind); nil: never.
	behind func(within time.Duration) bool

	mu        sync.Mutex
	pending   map[string]repository.EventRun
	lastWrite time.Time

	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
	stopErr  error // the last write's, set before done closes
}

func newBookkeeper(store runWriter, log *zap.Logger, interval time.Duration,
	behind func(within time.Duration) bool) *bookkeeper {
	if interval <= 0 {
		interval = DefaultBookkeepingInterval
	}
	b := &bookkeeper{store: store, log: log, interval: interval, behind: behind,
		pending: map[string]repository.EventRun{}, lastWrite: time.Now(),
		stop: make(chan struct{}), done: make(chan struct{})}
	go b.run()
	return b
}

// note queues a run's effect, merged with the event's pending one. A run
// that ends a one-time event is not written at all: readers derive that
// event's end from its occurrence (repository.EventEnds), and whatever was
// pending for it (a retry's run) is read from there too.
func (b *bookkeeper) note(run repository.EventRun) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if run.EndsOneTime {
		delete(b.pending, run.EventID)
		return
	}
	if prev, ok := b.pending[run.EventID]; ok {
		run = prev.Merge(run)
	}
	b.pending[run.EventID] = run
}

func (b *bookkeeper) run() {
	defer close(b.done)
	t := time.NewTicker(b.interval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			b.tick(time.Now())
		case <-b.stop:
			b.stopErr = b.flush()
			return
		}
	}
}

// tick is one interval's work: write what is pending, unless the write
// waits for a backlog to drain.
func (b *bookkeeper) tick(now time.Time) {
	if !b.waiting(now) {
		_ = b.flush()
	}
}

// waiting reports whether the next write waits for a backlog to drain.
func (b *bookkeeper) waiting(now time.Time) bool {
	if b.behind == nil || !b.behind(bookkeepingBehindWithin) {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return now.Sub(b.lastWrite) < BookkeepingMaxWait && len(b.pending) < bookkeepingMaxPending
}

// flush writes what is pending; on failure the runs go back to pending.
func (b *bookkeeper) flush() error {
	b.mu.Lock()
	b.lastWrite = time.Now()
	if len(b.pending) == 0 {
		b.mu.Unlock()
		return nil
	}
	batch := b.pending
	b.pending = make(map[string]repository.EventRun, len(batch))
	b.mu.Unlock()
	runs := make([]repository.EventRun, 0, len(batch))
	for _, r := range batch {
		runs = append(runs, r)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	err := b.store.NoteEventRuns(ctx, runs)
	cancel()
	if err == nil {
		return nil
	}
	b.log.Warn("write event bookkeeping", zap.Int("events", len(runs)), zap.Error(err))
	b.mu.Lock()
	for id, r := range batch {
		if newer, ok := b.pending[id]; ok {
			r = r.Merge(newer)
		}
		b.pending[id] = r
	}
	b.mu.Unlock()
	return err
}

// Stop writes what is pending (one try) and stops; idempotent. It returns
// that write's error: the runs it held are then lost with this process, and
// its registration must lapse for the rescuers to repair them.
func (b *bookkeeper) Stop() error {
	b.stopOnce.Do(func() { close(b.stop) })
	<-b.done
	return b.stopErr
}
