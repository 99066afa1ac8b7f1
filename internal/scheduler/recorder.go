package scheduler

import (
	"context"
	"errors"
	"hash/fnv"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/startstop"
)

// outcomeWriter persists outcomes (the repository's RecordOutcomes).
type outcomeWriter interface {
	RecordOutcomes(ctx context.Context, recs []repository.OutcomeRecord) ([]error, error)
}

// recorded is one outcome waiting to be written, and what to do once it is
// (err is nil, model.ErrLeaseLost, or the write error).
type recorded struct {
	rec  repository.OutcomeRecord
	done func(err error)
}

// recorderShards is how many batches may be written at once on
// PostgreSQL. Outcomes are sharded by event, so concurrent transactions
// never update the same event (no lock waits or deadlocks between them),
// while commits overlap instead of queueing behind one another. Embedded
// SQLite has one writer: its commits cannot overlap, and shards there only
// split the outcomes into smaller transactions, each with its own commit
// and statistics statements, so it gets one (#36, twenty-fifth step: a
// 10,000 burst 15 % faster).
const recorderShards = 4

// errRecorderStopped answers outcomes handed to a stopped recorder.
var errRecorderStopped = errors.New("outcome writer stopped")

// recorder writes outcomes through its shards. It is a service:
// Start launches the shards' writers; cancelling Start's context or Stop
// writes what is queued, with one try per batch, and stops.
//
// A failing database must not hold shutdown: once the recorder is stopping,
// a failed write is not retried, and outcomes not written (or handed to the
// recorder after it stopped) are given up. Their rows keep the lease of the
// attempt, which expires without a heartbeat behind it, and the rescuer
// returns them to retry: at least once, never lost.
type recorder struct {
	startstop.Base
	shards []*recorderShard
}

var _ startstop.Service = (*recorder)(nil)

// newRecorder returns a recorder; note, when set, is given the event
// bookkeeping of every outcome applied (the bookkeeper's note).
func newRecorder(store outcomeWriter, shards int, log *zap.Logger, batch int, interval, retryFor time.Duration,
	note func(repository.EventRun)) *recorder {
	r := &recorder{}
	for range shards {
		s := newRecorderShard(store, log, batch, interval, retryFor)
		s.note = note
		r.shards = append(r.shards, s)
	}
	return r
}

// stalledFor is how long the longest write under way has lasted (0: none
// is under way).
func (r *recorder) stalledFor(now time.Time) time.Duration {
	var longest time.Duration
	for _, s := range r.shards {
		if since := s.writingSince.Load(); since != 0 {
			longest = max(longest, now.Sub(time.Unix(0, since)))
		}
	}
	return longest
}

// Start launches the shards' writers.
func (r *recorder) Start(ctx context.Context) error {
	ctx, shouldStart, stopped := r.StartInit(ctx)
	if !shouldStart {
		return nil
	}
	var wg sync.WaitGroup
	for _, s := range r.shards {
		s.open()
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.run(ctx)
		}()
	}
	go func() {
		wg.Wait()
		stopped()
	}()
	return nil
}

// add queues an outcome on its event's shard. On a stopped recorder done is
// called at once with errRecorderStopped.
func (r *recorder) add(rec repository.OutcomeRecord, done func(error)) {
	h := fnv.New32a()
	_, _ = h.Write([]byte(rec.EventID))
	r.shards[h.Sum32()%uint32(len(r.shards))].add(rec, done)
}

// recorderShard batches outcomes: it writes when RecordBatch records are
// waiting or RecordInterval after the first one arrived, whichever comes
// first, so that thousands of attempts per second cost a few transactions.
// One batch is written at a time; outcomes keep being taken meanwhile, so
// a write that stalls holds up no sender: the dispatcher bounds how many
// may wait (maxQueuedLocked). Taken only between writes, at most a batch
// waited in the intake and every sender stopped behind it (#36).
type recorderShard struct {
	store    outcomeWriter
	log      *zap.Logger
	batch    int
	interval time.Duration
	// retryFor bounds how long a batch is retried while the database is
	// away; after it the leases have expired and the rescuer owns the rows.
	retryFor time.Duration
	// note takes the event bookkeeping of applied outcomes (may be nil).
	note func(repository.EventRun)

	// gate orders add against the intake's closing: adders hold it shared
	// while they send, the writer's shutdown takes it to close in.
	gate   sync.RWMutex
	closed bool
	in     chan recorded
	// writingSince is when the write under way began (unix nanoseconds by
	// the process's clock; 0: none is): stalledFor.
	writingSince atomic.Int64
}

func newRecorderShard(store outcomeWriter, log *zap.Logger, batch int, interval, retryFor time.Duration) *recorderShard {
	return &recorderShard{store: store, log: log, batch: batch, interval: interval, retryFor: retryFor,
		closed: true}
}

// open makes a fresh intake for a run.
func (r *recorderShard) open() {
	r.gate.Lock()
	defer r.gate.Unlock()
	r.in, r.closed = make(chan recorded, r.batch), false
}

func (r *recorderShard) add(rec repository.OutcomeRecord, done func(error)) {
	r.gate.RLock()
	defer r.gate.RUnlock()
	if r.closed {
		done(errRecorderStopped)
		return
	}
	r.in <- recorded{rec: rec, done: done}
}

// run writes batches until ctx ends, then closes the intake (once adders
// blocked on a full intake got in), writes what is queued and returns.
func (r *recorderShard) run(ctx context.Context) {
	go func() {
		<-ctx.Done()
		r.gate.Lock()
		r.closed = true
		close(r.in)
		r.gate.Unlock()
	}()
	var (
		pending []recorded
		timer   <-chan time.Time
		due     bool          // the oldest pending outcome waited interval
		writing chan struct{} // closed when the batch being written is done; nil: none is
	)
	in := r.in
	for in != nil || writing != nil || len(pending) > 0 {
		select {
		case item, ok := <-in:
			if !ok {
				in = nil // stopping: what is pending goes out at once
				break
			}
			pending = append(pending, item)
			if timer == nil {
				timer = time.After(r.interval)
			}
		case <-timer:
			timer, due = nil, true
		case <-writing:
			writing = nil
		}
		if writing != nil || len(pending) == 0 || (len(pending) < r.batch && !due && in != nil) {
			continue
		}
		n := min(len(pending), r.batch)
		batch := pending[:n:n]
		pending = append([]recorded(nil), pending[n:]...)
		timer, due = nil, false
		if len(pending) > 0 {
			timer = time.After(r.interval)
		}
		writing = make(chan struct{})
		r.writingSince.Store(time.Now().UnixNano())
		go func(done chan struct{}) {
			defer close(done)
			r.flush(ctx, batch)
			r.writingSince.Store(0)
		}(writing)
	}
}

// flush writes one batch, retrying with back-off while the database fails
// and the recorder is not stopping. The write itself does not take ctx:
// what is queued at shutdown still gets its one try.
func (r *recorderShard) flush(ctx context.Context, items []recorded) {
	if len(items) == 0 {
		return
	}
	recs := make([]repository.OutcomeRecord, len(items))
	for i := range items {
		recs[i] = items[i].rec
	}
	deadline := time.Now().Add(r.retryFor)
	backoff := 50 * time.Millisecond
	for {
		wctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		results, err := r.store.RecordOutcomes(wctx, recs)
		cancel()
		if err == nil {
			for i, it := range items {
				if results[i] == nil && it.rec.EventID != "" && r.note != nil {
					r.note(it.rec.Run())
				}
				if errors.Is(results[i], model.ErrLeaseLost) {
					r.log.Warn("outcome refused: lease lost", zap.String("occurrence_id", it.rec.OccurrenceID),
						zap.String("status", string(it.rec.Status)))
				}
				it.done(results[i])
			}
			return
		}
		giveUp := ""
		switch {
		case ctx.Err() != nil:
			giveUp = "record outcomes: stopping, leases will expire and be rescued"
		case time.Now().Add(backoff).After(deadline):
			giveUp = "record outcomes: giving up, leases will expire and be rescued"
		}
		if giveUp == "" {
			r.log.Warn("record outcomes", zap.Int("records", len(items)), zap.Error(err),
				zap.Duration("retry_in", backoff))
			t := time.NewTimer(backoff)
			select {
			case <-t.C:
				backoff = min(2*backoff, 5*time.Second)
				continue
			case <-ctx.Done():
				t.Stop()
				giveUp = "record outcomes: stopping, leases will expire and be rescued"
			}
		}
		r.log.Error(giveUp, zap.Int("records", len(items)), zap.Error(err))
		for _, it := range items {
			it.done(err)
		}
		return
	}
}
