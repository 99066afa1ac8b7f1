package scheduler

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/qhronos/qhronos/internal/repository"
)

// failingWriter fails every write and signals each try.
type failingWriter struct {
	tries chan struct{}
}

func (w *failingWriter) RecordOutcomes(context.Context, []repository.OutcomeRecord) ([]error, error) {
	select {
	case w.tries <- struct{}{}:
	default:
	}
	return nil, errors.New("database away")
}

// okWriter writes every batch and counts the records.
type okWriter struct {
	mu sync.Mutex
	n  int
}

func (w *okWriter) RecordOutcomes(_ context.Context, recs []repository.OutcomeRecord) ([]error, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.n += len(recs)
	return make([]error, len(recs)), nil
}

func within(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(60 * time.Second):
		t.Fatalf("%s: not within 10s", what)
	}
}

// A database that keeps failing does not hold shutdown: Stop ends the
// retries at once and the outcome is given up (its lease expires and the
// rescuer retries the row), although the retry window is an hour.
func TestRecorderStopEndsRetriesWhileTheStoreFails(t *testing.T) {
	t.Parallel()
	w := &failingWriter{tries: make(chan struct{}, 1)}
	r := newRecorder(w, zaptest.NewLogger(t), 1, time.Millisecond, time.Hour, nil)
	if err := r.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	given := make(chan error, 1)
	r.add(repository.OutcomeRecord{EventID: "e"}, func(err error) { given <- err })
	within(t, w.tries, "a first write")

	stopped := make(chan struct{})
	go func() {
		r.Stop()
		close(stopped)
	}()
	within(t, stopped, "Stop while the store fails")
	select {
	case err := <-given:
		if err == nil {
			t.Fatal("an outcome that was never written reported success")
		}
	default:
		t.Fatal("Stop returned before the outcome was given up")
	}
}

// Cancelling Start's context stops the recorder the same way.
func TestRecorderStopsWhenItsContextEnds(t *testing.T) {
	t.Parallel()
	w := &failingWriter{tries: make(chan struct{}, 1)}
	r := newRecorder(w, zaptest.NewLogger(t), 1, time.Millisecond, time.Hour, nil)
	ctx, cancel := context.WithCancel(context.Background())
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	given := make(chan struct{})
	r.add(repository.OutcomeRecord{EventID: "e"}, func(error) { close(given) })
	within(t, w.tries, "a first write")
	cancel()
	within(t, given, "the outcome given up after cancel")
	stopped := make(chan struct{})
	go func() {
		r.Stop()
		close(stopped)
	}()
	within(t, stopped, "Stop after cancel")
}

// Stop writes what is queued; an outcome handed over after Stop is given
// up at once instead of blocking its worker.
func TestRecorderStopWritesQueuedOutcomes(t *testing.T) {
	t.Parallel()
	w := &okWriter{}
	// A long interval: only Stop makes the writer write.
	r := newRecorder(w, zaptest.NewLogger(t), 100, time.Hour, time.Hour, nil)
	if err := r.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	var written sync.WaitGroup
	for _, id := range []string{"a", "b", "c", "d", "e", "f"} {
		written.Add(1)
		r.add(repository.OutcomeRecord{EventID: id}, func(err error) {
			if err != nil {
				t.Errorf("event %s: %v", id, err)
			}
			written.Done()
		})
	}
	r.Stop()
	written.Wait()
	if w.n != 6 {
		t.Fatalf("records written at Stop: got %d, want 6", w.n)
	}
	late := make(chan error, 1)
	r.add(repository.OutcomeRecord{EventID: "late"}, func(err error) { late <- err })
	if err := <-late; !errors.Is(err, errRecorderStopped) {
		t.Fatalf("late outcome: got %v, want errRecorderStopped", err)
	}
}

// stallingWriter holds every write until released, and keeps the batch
// sizes it was given and how many writes ran at once.
type stallingWriter struct {
	release chan struct{}
	started chan struct{}

	mu            sync.Mutex
	sizes         []int
	running, most int
	written       int
}

func (w *stallingWriter) RecordOutcomes(_ context.Context, recs []repository.OutcomeRecord) ([]error, error) {
	w.mu.Lock()
	w.running++
	w.most = max(w.most, w.running)
	w.sizes = append(w.sizes, len(recs))
	w.mu.Unlock()
	select {
	case w.started <- struct{}{}:
	default:
	}
	<-w.release
	w.mu.Lock()
	w.running--
	w.written += len(recs)
	w.mu.Unlock()
	return make([]error, len(recs)), nil
}

// A write that stalls (the database's WAL fsync taking a second) holds up
// no sender: outcomes keep being taken while it lasts, many batches' worth,
// and are written afterwards in batches, one write at a time.
func TestRecorderTakesOutcomesWhileAWriteStalls(t *testing.T) {
	t.Parallel()
	w := &stallingWriter{release: make(chan struct{}), started: make(chan struct{}, 1)}
	const batch, outcomes = 10, 25 * 10
	r := newRecorder(w, zaptest.NewLogger(t), batch, time.Millisecond, time.Hour, nil)
	if err := r.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	var written sync.WaitGroup
	written.Add(outcomes)
	taken := make(chan struct{})
	go func() {
		defer close(taken)
		for range outcomes {
			r.add(repository.OutcomeRecord{EventID: "e"}, func(err error) {
				if err != nil {
					t.Errorf("outcome: %v", err)
				}
				written.Done()
			})
		}
	}()
	within(t, w.started, "a first write")
	within(t, taken, "every outcome taken while the first write stalls")
	close(w.release)
	written.Wait()
	r.Stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.written != outcomes || w.most != 1 {
		t.Fatalf("written %d of %d, at most %d writes at once (want 1)", w.written, outcomes, w.most)
	}
	for _, n := range w.sizes {
		if n > batch {
			t.Fatalf("a write of %d outcomes, more than the batch of %d: %v", n, batch, w.sizes)
		}
	}
}
