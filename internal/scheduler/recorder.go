package scheduler

import (
	"context"
	"errors"
	"time"

	"go.uber.org/zap"

	"github.com/qhronos/qhronos/internal/repository"
)

// dispatchWriter persists outcomes (the repository's RecordDispatch).
type dispatchWriter interface {
	RecordDispatch(ctx context.Context, recs []repository.DispatchRecord) ([]error, error)
}

// recorded is one outcome waiting to be written, and what to do once it is
// (err is nil, repository.ErrLeaseLost, or the write error).
type recorded struct {
	rec  repository.DispatchRecord
	done func(err error)
}

// recorder batches outcomes: it writes when RecordBatch records are waiting
// or RecordInterval after the first one arrived, whichever comes first, so
// that thousands of attempts per second cost a few transactions.
type recorder struct {
	store    dispatchWriter
	log      *zap.Logger
	batch    int
	interval time.Duration
	// retryFor bounds how long a batch is retried while the database is
	// away; after it the leases have expired and the rescuer owns the rows.
	retryFor time.Duration

	in   chan recorded
	done chan struct{}
}

func newRecorder(store dispatchWriter, log *zap.Logger, batch int, interval, retryFor time.Duration) *recorder {
	r := &recorder{store: store, log: log, batch: batch, interval: interval, retryFor: retryFor,
		in: make(chan recorded, batch), done: make(chan struct{})}
	go r.run()
	return r
}

// add queues an outcome; it blocks while the queue is full (backpressure on
// the workers when the database is slow).
func (r *recorder) add(rec repository.DispatchRecord, done func(error)) {
	r.in <- recorded{rec: rec, done: done}
}

// close writes what is queued and stops; add must not be called after.
func (r *recorder) close() {
	close(r.in)
	<-r.done
}

func (r *recorder) run() {
	defer close(r.done)
	var pending []recorded
	var timer <-chan time.Time
	for {
		select {
		case item, ok := <-r.in:
			if !ok {
				r.flush(pending)
				return
			}
			pending = append(pending, item)
			if len(pending) >= r.batch {
				r.flush(pending)
				pending, timer = nil, nil
			} else if timer == nil {
				timer = time.After(r.interval)
			}
		case <-timer:
			r.flush(pending)
			pending, timer = nil, nil
		}
	}
}

// flush writes one batch, retrying with back-off while the database fails.
func (r *recorder) flush(items []recorded) {
	if len(items) == 0 {
		return
	}
	recs := make([]repository.DispatchRecord, len(items))
	for i := range items {
		recs[i] = items[i].rec
	}
	deadline := time.Now().Add(r.retryFor)
	backoff := 50 * time.Millisecond
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		results, err := r.store.RecordDispatch(ctx, recs)
		cancel()
		if err == nil {
			for i, it := range items {
				if errors.Is(results[i], repository.ErrLeaseLost) {
					r.log.Warn("outcome refused: lease lost", zap.String("occurrence_id", it.rec.OccurrenceID),
						zap.String("status", string(it.rec.Status)))
				}
				it.done(results[i])
			}
			return
		}
		if time.Now().Add(backoff).After(deadline) {
			r.log.Error("record outcomes: giving up, leases will expire and be rescued",
				zap.Int("records", len(items)), zap.Error(err))
			for _, it := range items {
				it.done(err)
			}
			return
		}
		r.log.Warn("record outcomes", zap.Int("records", len(items)), zap.Error(err),
			zap.Duration("retry_in", backoff))
		time.Sleep(backoff)
		backoff = min(2*backoff, 5*time.Second)
	}
}
