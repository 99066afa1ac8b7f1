package scheduler

import (
	"context"
	"errors"
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

// errRecorderStopped answers outcomes handed to a stopped recorder.
var errRecorderStopped = errors.New("outcome writer stopped")

// recorder writes outcomes, one batch at a time. It is a service: Start
// launches its writer; cancelling Start's context or Stop writes what is
// queued, with one try per batch, and stops.
//
// One writer an instance, on both stores. On PostgreSQL every outcome
// transaction inserts at the same right-hand pages of the occurrences' and
// attempts' indexes (their keys are time-ordered: UUIDv7 ids, instants),
// extends the same attempts partition and writes the same WAL, so
// concurrent writers wait for one another there (a burst's wait events:
// BufferContent, extend, WALWrite) and split a burst into smaller batches:
// with four writers a 20,000 burst drained about 20 % slower than with one
// and the outcome statement took three times as long a row, and two
// instances of two writers each drained 20 % slower than two of one (#36,
// thirty-fifth step). Embedded SQLite has
// one writer anyway (twenty-fifth step: a 10,000 burst 15 % faster than
// with four transactions queueing for it).
//
// A failing database must not hold shutdown: once the recorder is stopping,
// a failed write is not retried, and outcomes not written (or handed to the
// recorder after it stopped) are given up. Their rows keep the lease of the
// attempt, which expires without a heartbeat behind it, and the rescuer
// returns them to retry: at least once, never lost.
type recorder struct {
	startstop.Base
	w *batchWriter
}

var _ startstop.Service = (*recorder)(nil)

// newRecorder returns a recorder; note, when set, is given the event
// bookkeeping of every outcome applied (the bookkeeper's note).
func newRecorder(store outcomeWriter, log *zap.Logger, batch int, interval, retryFor time.Duration,
	note func(repository.EventRun)) *recorder {
	w := newBatchWriter(store, log, batch, interval, retryFor)
	w.note = note
	return &recorder{w: w}
}

// stalledFor is how long the write under way has lasted (0: none is).
func (r *recorder) stalledFor(now time.Time) time.Duration {
	if since := r.w.writingSince.Load(); since != 0 {
		return now.Sub(time.Unix(0, since))
	}
	return 0
}

// Start launches the writer.
func (r *recorder) Start(ctx context.Context) error {
	ctx, shouldStart, stopped := r.StartInit(ctx)
	if !shouldStart {
		return nil
	}
	r.w.open()
	go func() {
		r.w.run(ctx)
		stopped()
	}()
	return nil
}

// add queues an outcome. On a stopped recorder done is called at once with
// errRecorderStopped.
func (r *recorder) add(rec repository.OutcomeRecord, done func(error)) {
	r.w.add(rec, done)
}

// batchWriter batches outcomes: it writes when RecordBatch records are
// waiting or RecordInterval after the first one arrived, whichever comes
// first, so that thousands of attempts per second cost a few transactions.
// One batch is written at a time; outcomes keep being taken meanwhile, so
// a write that stalls holds up no sender: the dispatcher bounds how many
// may wait (maxQueuedLocked). Taken only between writes, at most a batch
// waited in the intake and every sender stopped behind it (#36).
type batchWriter struct {
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

func newBatchWriter(store outcomeWriter, log *zap.Logger, batch int, interval, retryFor time.Duration) *batchWriter {
	return &batchWriter{store: store, log: log, batch: batch, interval: interval, retryFor: retryFor,
		closed: true}
}

// open makes a fresh intake for a run.
func (r *batchWriter) open() {
	r.gate.Lock()
	defer r.gate.Unlock()
	r.in, r.closed = make(chan recorded, r.batch), false
}

func (r *batchWriter) add(rec repository.OutcomeRecord, done func(error)) {
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
func (r *batchWriter) run(ctx context.Context) {
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
func (r *batchWriter) flush(ctx context.Context, items []recorded) {
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
