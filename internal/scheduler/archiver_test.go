package scheduler_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/coordination"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/repository/repositorytest"
	"github.com/qhronos/qhronos/internal/scheduler"
)

var archiverT0 = time.Date(2032, 5, 6, 7, 0, 0, 0, time.UTC)

// archiverSeed creates an active event whose occurrences at the given
// instants all completed at their instant with one attempt each, plus one
// still pending; it returns the event id.
func archiverSeed(t *testing.T, s *repository.Store, tags []string, instants ...time.Time) string {
	t.Helper()
	ctx := context.Background()
	e := &model.Event{ID: uuid.NewString(), Name: "archived", StartTime: archiverT0, Timezone: "UTC",
		Action: model.Action{Type: "webhook", Params: json.RawMessage(`{"url":"https://example.com"}`)},
		Tags:   tags, CatchUp: "all", Status: model.EventActive, CreatedVia: "api", Version: 1,
		CreatedAt: archiverT0, UpdatedAt: archiverT0}
	require.NoError(t, s.CreateEvent(ctx, e))
	for _, at := range instants {
		_, err := s.InsertOccurrences(ctx, e.ID, []time.Time{at}, false, at)
		require.NoError(t, err)
		got, err := s.ClaimDue(ctx, repository.ClaimRequest{Now: at, Limit: 10, Token: "tok", LeaseUntil: at.Add(time.Minute)})
		require.NoError(t, err)
		require.Len(t, got, 1)
		res, err := s.RecordOutcomes(ctx, []repository.OutcomeRecord{{OccurrenceID: got[0].ID, LeaseToken: "tok",
			Status: model.OccurrenceCompleted, Now: at, Attempt: &model.Attempt{OccurrenceID: got[0].ID,
				EventID: e.ID, Attempt: 1, StartedAt: at, Outcome: "completed"}}})
		require.NoError(t, err)
		require.NoError(t, res[0])
	}
	_, err := s.InsertOccurrences(ctx, e.ID, []time.Time{archiverT0.Add(1000 * 24 * time.Hour)}, false, archiverT0)
	require.NoError(t, err)
	return e.ID
}

func archiverCounts(t *testing.T, s *repository.Store) (live, archived int) {
	t.Helper()
	ctx := context.Background()
	live, err := s.CountOccurrences(ctx, model.OccurrenceFilter{Unrestricted: true})
	require.NoError(t, err)
	archived, err = s.CountArchivedOccurrences(ctx, model.OccurrenceFilter{Unrestricted: true})
	require.NoError(t, err)
	return live, archived
}

// archiverRecorder is an ArchiveObserver that signals each run.
type archiverRecorder struct {
	mu    sync.Mutex
	moved []int
	runs  chan struct{}
}

func (r *archiverRecorder) ObserveArchival(_ time.Duration, moved, _ int, _ error) {
	r.mu.Lock()
	r.moved = append(r.moved, moved)
	r.mu.Unlock()
	select {
	case r.runs <- struct{}{}:
	default:
	}
}

func TestArchiverRunOnceMovesOldHistoryInBatches(t *testing.T) {
	for _, b := range repositorytest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			s := b.Open(t)
			day := 24 * time.Hour
			var old []time.Time
			for i := range 5 {
				old = append(old, archiverT0.Add(time.Duration(i)*time.Minute))
			}
			archiverSeed(t, s, []string{"a"}, append(old, archiverT0.Add(25*day))...)
			now := archiverT0.Add(40 * day)
			rec := &archiverRecorder{runs: make(chan struct{}, 1)}
			a := scheduler.NewArchiver(archiverConfig(func(c *scheduler.ArchiverConfig) { c.Enabled = true; c.Retention = 30 * day; c.BatchSize = 2 }),
				scheduler.ArchiverDeps{Store: s, Now: func() time.Time { return now }, Observer: rec})

			res, err := a.RunOnce(context.Background())
			require.NoError(t, err)
			want := repository.ArchiveCounts{Occurrences: 5, Attempts: 5}
			if res.Moved != want {
				t.Errorf("moved: got %+v, want %+v (three batches of at most 2)", res.Moved, want)
			}
			live, archived := archiverCounts(t, s)
			require.Equal(t, 2, live, "the recent completion and the future pending row stay")
			require.Equal(t, 5, archived)
			require.Equal(t, []int{10}, rec.moved, "observer saw the run")

			st := a.Status()
			require.EqualValues(t, 1, st["runs"])
			require.Equal(t, want, st["moved"])
			require.Equal(t, "archive", st["mode"])
			require.NotContains(t, st, "error")

			res, err = a.RunOnce(context.Background())
			require.NoError(t, err)
			require.Zero(t, res.Moved.Total(), "nothing left to move")
		})
	}
}

func TestArchiverDeletesWhenDisabledAndPurges(t *testing.T) {
	t.Parallel()
	s := repositorytest.SQLite(t)
	day := 24 * time.Hour
	archiverSeed(t, s, []string{"a"}, archiverT0, archiverT0.Add(time.Minute))
	now := archiverT0.Add(40 * day)
	clock := func() time.Time { return now }
	off := scheduler.NewArchiver(archiverConfig(func(c *scheduler.ArchiverConfig) { c.Enabled = false; c.Retention = 30 * day }),
		scheduler.ArchiverDeps{Store: s, Now: clock})
	res, err := off.RunOnce(context.Background())
	require.NoError(t, err)
	require.True(t, res.Deleted)
	require.Equal(t, repository.ArchiveCounts{Occurrences: 2, Attempts: 2}, res.Moved)
	live, archived := archiverCounts(t, s)
	require.Equal(t, 1, live)
	require.Zero(t, archived, "archiving off keeps no copy")
	require.Equal(t, "delete", off.Status()["mode"])

	archiverSeed(t, s, []string{"b"}, archiverT0.Add(2*day))
	on := scheduler.NewArchiver(archiverConfig(func(c *scheduler.ArchiverConfig) { c.Enabled = true; c.Retention = 30 * day; c.PurgeAfter = 365 * day }),
		scheduler.ArchiverDeps{Store: s, Now: clock})
	_, err = on.RunOnce(context.Background())
	require.NoError(t, err)
	_, archived = archiverCounts(t, s)
	require.Equal(t, 1, archived)
	now = now.Add(364 * day)
	res, err = on.RunOnce(context.Background())
	require.NoError(t, err)
	require.Zero(t, res.Purged.Total(), "not yet past purge_after")
	now = now.Add(2 * day)
	res, err = on.RunOnce(context.Background())
	require.NoError(t, err)
	require.Equal(t, repository.ArchiveCounts{Occurrences: 1, Attempts: 1}, res.Purged)
	_, archived = archiverCounts(t, s)
	require.Zero(t, archived)
}

func TestArchiverSkipsWhileAnotherInstanceHoldsTheLock(t *testing.T) {
	t.Parallel()
	s := repositorytest.SQLite(t)
	day := 24 * time.Hour
	archiverSeed(t, s, []string{"a"}, archiverT0)
	now := archiverT0.Add(40 * day)
	locker := coordination.NewLocal(time.Now)
	t.Cleanup(func() { _ = locker.Close() })
	ctx := context.Background()
	held, err := locker.TryLock(ctx, "archiver", "other-instance", time.Minute)
	require.NoError(t, err)
	require.True(t, held)

	a := scheduler.NewArchiver(archiverConfig(func(c *scheduler.ArchiverConfig) { c.Enabled = true; c.Retention = 30 * day }),
		scheduler.ArchiverDeps{Store: s, Now: func() time.Time { return now }, Locker: locker, Owner: "me"})
	res, err := a.RunOnce(ctx)
	require.NoError(t, err)
	require.True(t, res.Skipped)
	_, archived := archiverCounts(t, s)
	require.Zero(t, archived, "the other instance's turn")

	require.NoError(t, locker.Unlock(ctx, "archiver", "other-instance"))
	res, err = a.RunOnce(ctx)
	require.NoError(t, err)
	require.False(t, res.Skipped)
	require.Equal(t, 1, res.Moved.Occurrences)
	again, err := locker.TryLock(ctx, "archiver", "other-instance", time.Minute)
	require.NoError(t, err)
	require.True(t, again, "the lock is released after the run")
}

func TestArchiverReportsErrors(t *testing.T) {
	t.Parallel()
	s := repositorytest.SQLite(t)
	a := scheduler.NewArchiver(archiverConfig(func(c *scheduler.ArchiverConfig) { c.Enabled = true }),
		scheduler.ArchiverDeps{Store: s, Now: func() time.Time { return archiverT0 }})
	require.NoError(t, s.Close())
	_, err := a.RunOnce(context.Background())
	require.Error(t, err)
	st := a.Status()
	require.Contains(t, st["error"], "archive occurrences")
}

func TestArchiverRunLoopsUntilCancelled(t *testing.T) {
	t.Parallel()
	s := repositorytest.SQLite(t)
	rec := &archiverRecorder{runs: make(chan struct{}, 1)}
	a := scheduler.NewArchiver(archiverConfig(func(c *scheduler.ArchiverConfig) { c.Enabled = true; c.Interval = time.Millisecond }),
		scheduler.ArchiverDeps{Store: s, Now: func() time.Time { return archiverT0 }, Observer: rec})
	ctx, cancel := context.WithCancel(context.Background())
	require.NoError(t, a.Start(ctx))
	for range 2 {
		select {
		case <-rec.runs:
		case <-time.After(60 * time.Second):
			t.Fatal("the archiver did not run")
		}
	}
	cancel()
	done := make(chan struct{})
	go func() {
		a.Stop() // joins: returns once the loop has ended
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the archiver did not stop after cancel")
	}
	require.GreaterOrEqual(t, a.Status()["runs"], int64(2))
}
