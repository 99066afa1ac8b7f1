package scheduler

import (
	"context"
	"errors"
	"math/rand"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
)

// runLog records NoteEventRuns calls; it fails while fail is set.
type runLog struct {
	mu    sync.Mutex
	calls [][]repository.EventRun
	fail  bool
}

func (w *runLog) NoteEventRuns(_ context.Context, runs []repository.EventRun) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fail {
		return errors.New("database away")
	}
	w.calls = append(w.calls, append([]repository.EventRun(nil), runs...))
	return nil
}

func (w *runLog) written() [][]repository.EventRun {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([][]repository.EventRun(nil), w.calls...)
}

func byEvent(runs []repository.EventRun) map[string]repository.EventRun {
	out := map[string]repository.EventRun{}
	for _, r := range runs {
		out[r.EventID] = r
	}
	return out
}

var bookT0 = time.Date(2031, 3, 4, 10, 0, 0, 0, time.UTC)

// attemptOf is the applied record of an attempt of event id started at.
func attemptOf(id string, at time.Time) repository.OutcomeRecord {
	return repository.OutcomeRecord{OccurrenceID: model.NewID(), Status: model.OccurrenceCompleted, Now: at,
		EventID: id, Ran: true, LastStatus: "completed at " + at.Format(time.StampMilli),
		Attempt: &model.Attempt{StartedAt: at}}
}

// Outcomes go through the recorder to the bookkeeper: five hundred
// deliveries of one event, recorded in any order, are one row in one
// write, and the newest attempt wins; outcomes without an attempt keep the
// last run and still bring their event along (next_run_at, settling).
func TestBookkeepingIsCoalescedPerEvent(t *testing.T) {
	t.Parallel()
	w := &runLog{}
	b := newBookkeeper(w, zaptest.NewLogger(t), time.Hour, nil) // only flush and Stop write
	r := newRecorder(&okWriter{}, zaptest.NewLogger(t), 50, time.Millisecond, time.Hour, b.note)
	if err := r.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	recs := make([]repository.OutcomeRecord, 0, 502)
	for i := range 500 {
		recs = append(recs, attemptOf("busy", bookT0.Add(time.Duration(i)*time.Millisecond)))
	}
	recs = append(recs, attemptOf("quiet", bookT0),
		repository.OutcomeRecord{EventID: "busy", Status: model.OccurrenceMissed, Now: bookT0.Add(time.Hour)})
	rand.New(rand.NewSource(1)).Shuffle(len(recs), func(i, j int) { recs[i], recs[j] = recs[j], recs[i] })
	var done sync.WaitGroup
	for _, rec := range recs {
		done.Add(1)
		r.add(rec, func(err error) {
			if err != nil {
				t.Errorf("record: %v", err)
			}
			done.Done()
		})
	}
	done.Wait()
	r.Stop()
	if err := b.flush(); err != nil {
		t.Fatal(err)
	}
	calls := w.written()
	if len(calls) != 1 {
		t.Fatalf("writes: got %d, want 1", len(calls))
	}
	if len(calls[0]) != 2 {
		t.Fatalf("rows written: got %d, want 2 (one per event)", len(calls[0]))
	}
	got := byEvent(calls[0])
	newest := bookT0.Add(499 * time.Millisecond)
	if busy := got["busy"]; busy.RanAt == nil || !busy.RanAt.Equal(newest) ||
		busy.LastStatus != "completed at "+newest.Format(time.StampMilli) || !busy.Now.Equal(bookT0.Add(time.Hour)) {
		t.Fatalf("busy event: got %+v, want the newest attempt at %v and now an hour later", busy, newest)
	}
	if quiet := got["quiet"]; quiet.RanAt == nil || !quiet.RanAt.Equal(bookT0) {
		t.Fatalf("quiet event: got %+v", quiet)
	}
	b.Stop()
	if n := len(w.written()); n != 1 {
		t.Fatalf("Stop with nothing pending wrote: got %d writes, want 1", n)
	}
}

// A failed write is kept and merged with what arrives meanwhile: the next
// write has the newest run, and Stop writes what is pending.
func TestBookkeepingSurvivesAFailedWrite(t *testing.T) {
	t.Parallel()
	w := &runLog{fail: true}
	b := newBookkeeper(w, zaptest.NewLogger(t), time.Hour, nil)
	old := attemptOf("ev", bookT0.Add(time.Second))
	b.note(old.Run())
	if err := b.flush(); err == nil {
		t.Fatal("flush: want the writer's error")
	}
	older := attemptOf("ev", bookT0)
	b.note(older.Run())
	other := attemptOf("other", bookT0)
	b.note(other.Run())
	w.mu.Lock()
	w.fail = false
	w.mu.Unlock()
	b.Stop()
	calls := w.written()
	if len(calls) != 1 {
		t.Fatalf("writes: got %d, want 1", len(calls))
	}
	got := byEvent(calls[0])
	if ev := got["ev"]; ev.RanAt == nil || !ev.RanAt.Equal(bookT0.Add(time.Second)) {
		t.Fatalf("ev: got %+v, want the run kept from the failed write (the newest)", ev)
	}
	if _, ok := got["other"]; !ok {
		t.Fatal("other: not written")
	}
}

// While the dispatcher drains a backlog the bookkeeper leaves its writes
// for later, and writes once the backlog is gone; it waits at most
// BookkeepingMaxWait since its last write, and never with
// bookkeepingMaxPending events held.
func TestBookkeepingWaitsForABacklog(t *testing.T) {
	t.Parallel()
	w := &runLog{}
	var behind atomic.Bool
	behind.Store(true)
	// An interval of an hour: the test's own ticks are the only ones.
	b := newBookkeeper(w, zaptest.NewLogger(t), time.Hour, func(time.Duration) bool { return behind.Load() })
	run := attemptOf("ev", bookT0)
	b.note(run.Run())
	for range 20 {
		b.tick(time.Now())
	}
	if n := len(w.written()); n != 0 {
		t.Fatalf("writes while behind: got %d, want 0", n)
	}
	behind.Store(false)
	b.tick(time.Now())
	if n := len(w.written()); n != 1 {
		t.Fatalf("writes once the backlog drained: got %d, want 1", n)
	}
	b.Stop()

	// The limits.
	b = newBookkeeper(w, zaptest.NewLogger(t), time.Hour, func(time.Duration) bool { return true })
	defer b.Stop()
	b.mu.Lock()
	last := b.lastWrite
	b.mu.Unlock()
	if !b.waiting(last.Add(BookkeepingMaxWait - time.Second)) {
		t.Fatal("within the longest wait: want waiting")
	}
	if b.waiting(last.Add(BookkeepingMaxWait)) {
		t.Fatal("after the longest wait: want a write")
	}
	b.mu.Lock()
	for i := range bookkeepingMaxPending {
		b.pending[strconv.Itoa(i)] = repository.EventRun{}
	}
	b.mu.Unlock()
	if b.waiting(last) {
		t.Fatal("with the most events held: want a write")
	}
}

// The run that ends a one-time event is not written, nor what was pending
// for that event (a retry's run): readers derive its end from the
// occurrence (repository.EventEnds). Other events' runs are written as
// ever.
func TestBookkeeperLeavesAOneTimeEventsEndToItsReaders(t *testing.T) {
	w := &runLog{}
	b := newBookkeeper(w, zaptest.NewLogger(t), time.Hour, nil)
	retry := attemptOf("once", bookT0)
	retry.Status = model.OccurrenceRetrying
	b.note(retry.Run())
	end := attemptOf("once", bookT0.Add(time.Minute))
	end.WholeSeries = true
	b.note(end.Run())
	series := attemptOf("series", bookT0)
	b.note(series.Run())
	if err := b.Stop(); err != nil {
		t.Fatal(err)
	}
	calls := w.written()
	if len(calls) != 1 || len(calls[0]) != 1 || calls[0][0].EventID != "series" {
		t.Fatalf("written: %+v, want the series' run alone", calls)
	}
}
