package scheduler

import (
	"context"
	"errors"
	"hash/fnv"
	"time"

	"go.uber.org/zap"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
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

// recorderShards is how many batches may be written at once. Outcomes are
// sharded by event, so concurrent transactions never update the same event
// (no lock waits or deadlocks between them), while commits overlap instead
// of queueing behind one another.
const recorderShards = 4

// recorder writes outcomes through recorderShards shards.
type recorder struct {
	shards []*recorderShard
}

func newRecorder(store outcomeWriter, log *zap.Logger, batch int, interval, retryFor time.Duration) *recorder {
	r := &recorder{}
	for range recorderShards {
		r.shards = append(r.shards, newRecorderShard(store, log, batch, interval, retryFor))
	}
	return r
}

// add queues an outcome on its event's shard; it blocks while that queue is
// full (backpressure on the workers when the database is slow).
func (r *recorder) add(rec repository.DispatchRecord, done func(error)) {
	out := rec.Outcome()
	h := fnv.New32a()
	_, _ = h.Write([]byte(out.EventID))
	r.shards[h.Sum32()%uint32(len(r.shards))].add(out, done)
}

// close writes what is queued and stops; add must not be called after.
func (r *recorder) close() {
	for _, s := range r.shards {
		s.close()
	}
}

// recorderShard batches outcomes: it writes when RecordBatch records are
// waiting or RecordInterval after the first one arrived, whichever comes
// first, so that thousands of attempts per second cost a few transactions.
type recorderShard struct {
	store    outcomeWriter
	log      *zap.Logger
	batch    int
	interval time.Duration
	// retryFor bounds how long a batch is retried while the database is
	// away; after it the leases have expired and the rescuer owns the rows.
	retryFor time.Duration

	in   chan recorded
	done chan struct{}
}

func newRecorderShard(store outcomeWriter, log *zap.Logger, batch int, interval, retryFor time.Duration) *recorderShard {
	r := &recorderShard{store: store, log: log, batch: batch, interval: interval, retryFor: retryFor,
		in: make(chan recorded, batch), done: make(chan struct{})}
	go r.run()
	return r
}

func (r *recorderShard) add(rec repository.OutcomeRecord, done func(error)) {
	r.in <- recorded{rec: rec, done: done}
}

func (r *recorderShard) close() {
	close(r.in)
	<-r.done
}

func (r *recorderShard) run() {
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
func (r *recorderShard) flush(items []recorded) {
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
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		results, err := r.store.RecordOutcomes(ctx, recs)
		cancel()
		if err == nil {
			for i, it := range items {
				if errors.Is(results[i], model.ErrLeaseLost) {
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
