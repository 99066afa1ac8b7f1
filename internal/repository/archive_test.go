package repository_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
)

const day = 24 * time.Hour

// settle materializes one occurrence of e at `at` and drives it through
// `attempts` claims to status, the last transition happening at final.
// Earlier attempts end "retrying" one minute apart. A dispatching row is left
// leased; an awaiting_ack row waits for an acknowledgement. Callers settle
// rows in an order where no other row is claimable, so each claim takes the
// row just inserted.
func settle(t *testing.T, s *repository.Store, e *model.Event, at, final time.Time,
	status model.OccurrenceStatus, attempts int) model.Occurrence {
	t.Helper()
	ctx := context.Background()
	_, err := s.InsertOccurrences(ctx, e.ID, []time.Time{at}, false, at)
	require.NoError(t, err)
	claimAt := at
	for i := 1; i <= attempts; i++ {
		last := i == attempts
		if last {
			claimAt = final
		}
		got, err := s.ClaimDue(ctx, repository.ClaimRequest{Now: claimAt, Limit: 1, Owner: "test", Token: "tok",
			LeaseUntil: claimAt.Add(time.Minute)})
		require.NoError(t, err)
		require.Len(t, got, 1, "settle: exactly the new row is claimable")
		occ := got[0]
		if last && status == model.OccurrenceDispatching {
			return occ
		}
		rec := repository.OutcomeRecord{OccurrenceID: occ.ID, LeaseToken: "tok", Status: status, Now: claimAt,
			Attempt: &model.Attempt{OccurrenceID: occ.ID, EventID: e.ID, Attempt: i, StartedAt: claimAt,
				DurationMS: int64(10 * i), Outcome: string(status), LatenessMS: claimAt.Sub(at).Milliseconds()}}
		if i%2 == 1 { // the others predate recording, or it was off
			req := fmt.Sprintf(`{"method":"POST","url":"https://example.com/%d","headers":{},"body":"{}","body_truncated":false}`, i)
			rec.Attempt.RequestJSON = &req
		}
		switch {
		case !last:
			next := claimAt.Add(time.Minute)
			rec.Status, rec.NextAttemptAt, rec.Attempt.Outcome = model.OccurrenceRetrying, &next, "retrying"
			claimAt = next
		case status == model.OccurrenceRetrying:
			next := final.Add(1000 * day) // never claimable again in these tests
			rec.NextAttemptAt = &next
		case status == model.OccurrenceAwaitingAck:
			deadline := final.Add(30 * time.Second)
			rec.AckDeadline = &deadline
		}
		res, err := s.RecordOutcomes(ctx, []repository.OutcomeRecord{rec})
		require.NoError(t, err)
		require.NoError(t, res[0])
	}
	got, err := s.GetOccurrence(ctx, occIDAt(t, s, e.ID, at))
	require.NoError(t, err)
	return got
}

func occIDAt(t *testing.T, s *repository.Store, eventID string, at time.Time) string {
	t.Helper()
	occ, err := s.ListOccurrences(context.Background(), model.OccurrenceFilter{EventID: eventID, Unrestricted: true,
		From: &at, Limit: 1000})
	require.NoError(t, err)
	for _, o := range occ {
		if o.ScheduledAt.Equal(at) {
			return o.ID
		}
	}
	t.Fatalf("no occurrence of %s at %v", eventID, at)
	return ""
}

// archiveAll runs batches the way the archiver does: occurrences until
// drained, then events.
func archiveAll(t *testing.T, s *repository.Store, b repository.ArchiveBatch) repository.ArchiveCounts {
	t.Helper()
	ctx := context.Background()
	var total repository.ArchiveCounts
	for range 100 {
		n, err := s.ArchiveOccurrences(ctx, b)
		require.NoError(t, err)
		total = total.Add(n)
		if n.Occurrences < b.Limit {
			break
		}
	}
	for range 100 {
		n, err := s.ArchiveEvents(ctx, b)
		require.NoError(t, err)
		total = total.Add(n)
		if n.Events < b.Limit {
			break
		}
	}
	return total
}

// archiveDataset mixes what must move with what must stay; now is t0+40d
// and retention 30 days (cutoff t0+10d).
type archiveDataset struct {
	now          time.Time
	active       *model.Event // stays
	deletedOld   *model.Event // goes
	deletedNew   *model.Event // stays: deleted inside retention
	inactiveOld  *model.Event // goes
	pausedOld    *model.Event // stays: paused is not finished
	moved, kept  []string     // occurrence ids
	movedAttempt int
}

func seedArchiveDataset(t *testing.T, s *repository.Store) archiveDataset {
	t.Helper()
	ctx := context.Background()
	d := archiveDataset{now: t0.Add(40 * day)}
	d.active, d.deletedOld, d.deletedNew = newEvent("a"), newEvent("b"), newEvent("c")
	d.inactiveOld, d.pausedOld = newEvent("d", "x"), newEvent("e")
	d.inactiveOld.Status, d.pausedOld.Status = model.EventInactive, model.EventPaused
	for _, e := range []*model.Event{d.active, d.deletedOld, d.deletedNew, d.inactiveOld, d.pausedOld} {
		mustCreate(t, s, e)
	}
	h := time.Hour
	a := d.active
	d.moved = append(d.moved,
		settle(t, s, a, t0, t0.Add(2*time.Minute), model.OccurrenceCompleted, 2).ID,
		settle(t, s, a, t0.Add(h), t0.Add(h), model.OccurrenceFailed, 1).ID,
		settle(t, s, d.deletedOld, t0.Add(90*time.Minute), t0.Add(90*time.Minute), model.OccurrenceCompleted, 1).ID,
		settle(t, s, d.deletedNew, t0.Add(100*time.Minute), t0.Add(100*time.Minute), model.OccurrenceMissed, 1).ID,
		settle(t, s, d.inactiveOld, t0.Add(110*time.Minute), t0.Add(110*time.Minute), model.OccurrenceCompleted, 1).ID,
		settle(t, s, d.pausedOld, t0.Add(115*time.Minute), t0.Add(115*time.Minute), model.OccurrenceCompleted, 1).ID,
	)
	d.movedAttempt = 2 + 1 + 1 + 1 + 1 + 1
	d.kept = append(d.kept,
		// Completed inside retention.
		settle(t, s, a, t0.Add(2*h), t0.Add(20*day), model.OccurrenceCompleted, 1).ID,
		// Leased long ago and never rescued: still in flight.
		settle(t, s, a, t0.Add(4*h), t0.Add(4*h), model.OccurrenceDispatching, 1).ID,
		settle(t, s, a, t0.Add(5*h), t0.Add(5*h), model.OccurrenceAwaitingAck, 1).ID,
		settle(t, s, a, t0.Add(6*h), t0.Add(6*h), model.OccurrenceRetrying, 1).ID,
	)
	// Old but never fired.
	_, err := s.InsertOccurrences(ctx, a.ID, []time.Time{t0.Add(3 * h)}, false, t0)
	require.NoError(t, err)
	d.kept = append(d.kept, occIDAt(t, s, a.ID, t0.Add(3*h)))
	// A future instant cancelled long ago (a pause): a resume may reinstate it.
	future := t0.Add(60 * day)
	_, err = s.InsertOccurrences(ctx, a.ID, []time.Time{future}, false, t0)
	require.NoError(t, err)
	_, err = s.CancelPendingOccurrences(ctx, a.ID, future, false, model.ReasonEventDeleted, t0)
	require.NoError(t, err)
	d.kept = append(d.kept, occIDAt(t, s, a.ID, future))

	// The old deletion cancels a pending row: cancelled long ago, it goes too.
	_, err = s.InsertOccurrences(ctx, d.deletedOld.ID, []time.Time{t0.Add(7 * h)}, false, t0)
	require.NoError(t, err)
	d.moved = append(d.moved, occIDAt(t, s, d.deletedOld.ID, t0.Add(7*h)))
	softDelete(t, s, d.deletedOld.ID, t0.Add(day))
	softDelete(t, s, d.deletedNew.ID, t0.Add(35*day))
	return d
}

func liveIDs(t *testing.T, s *repository.Store) []string {
	t.Helper()
	occ, err := s.ListOccurrences(context.Background(), model.OccurrenceFilter{Unrestricted: true, Limit: 1000})
	require.NoError(t, err)
	return occurrenceIDs(occ)
}

func archivedIDs(t *testing.T, s *repository.Store, f model.OccurrenceFilter) []string {
	t.Helper()
	f.Limit = 1000
	occ, err := s.ListArchivedOccurrences(context.Background(), f)
	require.NoError(t, err)
	n, err := s.CountArchivedOccurrences(context.Background(), f)
	require.NoError(t, err)
	require.Len(t, occ, n, "archived list and count agree")
	out := []string{}
	for _, o := range occ {
		out = append(out, o.ID)
	}
	sort.Strings(out)
	return out
}

func occurrenceIDs(occ []model.Occurrence) []string {
	out := []string{}
	for _, o := range occ {
		out = append(out, o.ID)
	}
	sort.Strings(out)
	return out
}

func sorted(ids []string) []string {
	out := append([]string{}, ids...)
	sort.Strings(out)
	return out
}

func TestArchiveMovesOnlyOldTerminalHistory(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		d := seedArchiveDataset(t, s)
		attemptsBefore := map[string][]model.Attempt{}
		for _, id := range d.moved {
			as, err := s.ListAttempts(ctx, id)
			require.NoError(t, err)
			attemptsBefore[id] = as
		}
		b := repository.ArchiveBatch{Cutoff: d.now.Add(-30 * day), Now: d.now, Limit: 2}
		got := archiveAll(t, s, b)
		want := repository.ArchiveCounts{Events: 2, Occurrences: len(d.moved), Attempts: d.movedAttempt}
		if got != want {
			t.Errorf("moved counts: got %+v, want %+v", got, want)
		}
		require.Equal(t, sorted(d.kept), liveIDs(t, s), "live occurrences after archival")
		require.Equal(t, sorted(d.moved), archivedIDs(t, s, model.OccurrenceFilter{Unrestricted: true}))

		for _, id := range d.moved {
			live, err := s.ListAttempts(ctx, id)
			require.NoError(t, err)
			require.Empty(t, live, "attempts of %s left the live table", id)
			archived, err := s.ListArchivedAttempts(ctx, id)
			require.NoError(t, err)
			require.Equal(t, attemptsBefore[id], archived, "attempts of %s archived verbatim", id)
		}
		for _, e := range []*model.Event{d.deletedOld, d.inactiveOld} {
			_, err := s.GetEventAny(ctx, e.ID)
			require.ErrorIs(t, err, model.ErrNotFound, "event %s archived", e.Name)
		}
		for _, e := range []*model.Event{d.active, d.deletedNew, d.pausedOld} {
			_, err := s.GetEventAny(ctx, e.ID)
			require.NoError(t, err, "event with status %s stays", e.Status)
		}
		archived, err := s.ListArchivedOccurrences(ctx, model.OccurrenceFilter{Unrestricted: true, Limit: 1})
		require.NoError(t, err)
		require.Equal(t, d.now, archived[0].ArchivedAt)

		again := archiveAll(t, s, b)
		require.Equal(t, repository.ArchiveCounts{}, again, "a second run moves nothing")
	})
}

func TestArchivedOccurrencesKeepTheirScope(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		d := seedArchiveDataset(t, s)
		archiveAll(t, s, repository.ArchiveBatch{Cutoff: d.now.Add(-30 * day), Now: d.now, Limit: 100})
		of := func(e *model.Event) []string {
			ids := archivedIDs(t, s, model.OccurrenceFilter{Unrestricted: true, EventID: e.ID})
			require.NotEmpty(t, ids)
			return ids
		}
		tests := []struct {
			name string
			f    model.OccurrenceFilter
			want []string
		}{
			{"live event's tags", model.OccurrenceFilter{Scope: []string{"a"}}, of(d.active)},
			{"archived event's tags", model.OccurrenceFilter{Scope: []string{"b"}}, of(d.deletedOld)},
			{"archived, second tag", model.OccurrenceFilter{Scope: []string{"x"}}, of(d.inactiveOld)},
			{"empty scope sees nothing", model.OccurrenceFilter{}, []string{}},
			{"foreign scope", model.OccurrenceFilter{Scope: []string{"zzz"}}, []string{}},
			{"any tags", model.OccurrenceFilter{Unrestricted: true, AnyTags: []string{"b", "c"}},
				sorted(append(of(d.deletedOld), of(d.deletedNew)...))},
			{"all tags on archived event", model.OccurrenceFilter{Unrestricted: true, AllTags: []string{"d", "x"}},
				of(d.inactiveOld)},
			{"all tags not all present", model.OccurrenceFilter{Unrestricted: true, AllTags: []string{"d", "a"}},
				[]string{}},
			{"status", model.OccurrenceFilter{Unrestricted: true, Status: []model.OccurrenceStatus{"failed"}},
				[]string{d.moved[1]}},
		}
		for _, tt := range tests {
			if got := archivedIDs(t, s, tt.f); !equalStrings(got, tt.want) {
				t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
			}
		}
	})
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestArchivingOffDeletes(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		d := seedArchiveDataset(t, s)
		got := archiveAll(t, s, repository.ArchiveBatch{Cutoff: d.now.Add(-30 * day), Now: d.now, Limit: 3, Delete: true})
		want := repository.ArchiveCounts{Events: 2, Occurrences: len(d.moved), Attempts: d.movedAttempt}
		if got != want {
			t.Errorf("deleted counts: got %+v, want %+v", got, want)
		}
		require.Equal(t, sorted(d.kept), liveIDs(t, s))
		require.Empty(t, archivedIDs(t, s, model.OccurrenceFilter{Unrestricted: true}), "nothing archived")
		for _, id := range d.moved {
			as, err := s.ListArchivedAttempts(ctx, id)
			require.NoError(t, err)
			require.Empty(t, as)
		}
		_, err := s.GetEventAny(ctx, d.deletedOld.ID)
		require.ErrorIs(t, err, model.ErrNotFound)
	})
}

func TestPurgeRemovesOnlyArchiveRowsPastPurgeAfter(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		oldEvent, fresh := newEvent("old"), newEvent("new")
		oldEvent.Status = model.EventInactive
		mustCreate(t, s, oldEvent)
		mustCreate(t, s, fresh)
		oldOcc := settle(t, s, oldEvent, t0, t0.Add(2*time.Minute), model.OccurrenceCompleted, 2)
		newOcc := settle(t, s, fresh, t0.Add(time.Hour), t0.Add(100*day), model.OccurrenceFailed, 1)

		// First archival run at T1 takes the old occurrence and its event;
		// the second at T2 = T1 + 100 d takes the other one.
		t1, t2 := t0.Add(40*day), t0.Add(140*day)
		first := archiveAll(t, s, repository.ArchiveBatch{Cutoff: t1.Add(-30 * day), Now: t1, Limit: 10})
		require.Equal(t, repository.ArchiveCounts{Events: 1, Occurrences: 1, Attempts: 2}, first)
		second := archiveAll(t, s, repository.ArchiveBatch{Cutoff: t2.Add(-30 * day), Now: t2, Limit: 10})
		require.Equal(t, repository.ArchiveCounts{Occurrences: 1, Attempts: 1}, second)

		// Purge at T1 + 366 d with purge_after 365 d: only T1's rows go.
		var purged repository.ArchiveCounts
		for range 10 {
			n, err := s.PurgeArchive(ctx, t1.Add(366*day).Add(-365*day), 1)
			require.NoError(t, err)
			if n.Total() == 0 {
				break
			}
			purged = purged.Add(n)
		}
		require.Equal(t, repository.ArchiveCounts{Events: 1, Occurrences: 1, Attempts: 2}, purged)
		require.Equal(t, []string{newOcc.ID}, archivedIDs(t, s, model.OccurrenceFilter{Unrestricted: true}))
		as, err := s.ListArchivedAttempts(ctx, oldOcc.ID)
		require.NoError(t, err)
		require.Empty(t, as)
		as, err = s.ListArchivedAttempts(ctx, newOcc.ID)
		require.NoError(t, err)
		require.Len(t, as, 1, "attempts archived later are kept")
		require.Equal(t, []string{newOcc.ID}, archivedIDs(t, s, model.OccurrenceFilter{Scope: []string{"new"}}),
			"kept history still scoped by its live event")
	})
}

func TestConcurrentArchiversNeverDoubleMove(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		e := newEvent("a")
		mustCreate(t, s, e)
		const n = 300
		var instants []time.Time
		for i := range n {
			instants = append(instants, t0.Add(time.Duration(i)*time.Second))
		}
		_, err := s.InsertOccurrences(ctx, e.ID, instants, false, t0)
		require.NoError(t, err)
		done := t0.Add(time.Hour)
		claimed := claim(t, s, done, n)
		require.Len(t, claimed, n)
		recs := make([]repository.OutcomeRecord, 0, n)
		for _, o := range claimed {
			recs = append(recs, repository.OutcomeRecord{OccurrenceID: o.ID, LeaseToken: "tok",
				Status: model.OccurrenceCompleted, Now: done, Attempt: &model.Attempt{ID: uuid.NewString(),
					OccurrenceID: o.ID, EventID: e.ID, Attempt: 1, StartedAt: done, Outcome: "completed"}})
		}
		_, err = s.RecordOutcomes(ctx, recs)
		require.NoError(t, err)

		now := t0.Add(40 * day)
		b := repository.ArchiveBatch{Cutoff: now.Add(-30 * day), Now: now, Limit: 7}
		var mu sync.Mutex
		var total repository.ArchiveCounts
		var wg sync.WaitGroup
		for w := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 200 {
					got, err := s.ArchiveOccurrences(ctx, b)
					if err != nil {
						t.Errorf("archiver %d: %v", w, err)
						return
					}
					mu.Lock()
					total = total.Add(got)
					mu.Unlock()
					if got.Occurrences == 0 {
						return
					}
				}
			}()
		}
		wg.Wait()
		require.Equal(t, repository.ArchiveCounts{Occurrences: n, Attempts: n}, total, "moved exactly once in sum")
		ids := archivedIDs(t, s, model.OccurrenceFilter{Unrestricted: true})
		require.Len(t, ids, n, "one archive row per occurrence")
		seen := map[string]bool{}
		for _, id := range ids {
			if seen[id] {
				t.Errorf("occurrence %s archived twice", id)
			}
			seen[id] = true
		}
		var attempts int
		for _, id := range ids[:20] {
			as, err := s.ListArchivedAttempts(ctx, id)
			require.NoError(t, err)
			attempts += len(as)
		}
		require.Equal(t, 20, attempts, "one archived attempt per occurrence")
		require.Empty(t, liveIDs(t, s))
	})
}

func TestRetryRaceWithArchiverLeavesOneHome(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		e := newEvent("a")
		mustCreate(t, s, e)
		occ := settle(t, s, e, t0, t0, model.OccurrenceFailed, 1)
		now := t0.Add(40 * day)
		var wg sync.WaitGroup
		var retryErr error
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, retryErr = s.RetryOccurrence(ctx, occ.ID, now)
		}()
		go func() {
			defer wg.Done()
			_, err := s.ArchiveOccurrences(ctx, repository.ArchiveBatch{Cutoff: now.Add(-30 * day), Now: now, Limit: 10})
			if err != nil {
				t.Errorf("archive: %v", err)
			}
		}()
		wg.Wait()
		live, liveErr := s.GetOccurrence(ctx, occ.ID)
		archived := archivedIDs(t, s, model.OccurrenceFilter{Unrestricted: true})
		switch {
		case retryErr == nil:
			require.NoError(t, liveErr)
			require.Equal(t, model.OccurrencePending, live.Status, "retried first: it stays live and queued")
			require.Empty(t, archived)
		case errors.Is(retryErr, model.ErrNotFound):
			require.ErrorIs(t, liveErr, model.ErrNotFound)
			require.Equal(t, []string{occ.ID}, archived, "archived first: retry answers not found")
		default:
			t.Fatalf("retry: unexpected error %v", retryErr)
		}
	})
}

// A one-time event whose end was read, never written (EventEnds), is
// archived once its occurrence is, with that end written into the archived
// row: it reads the same there. One still to fire stays.
func TestArchiveWritesAOneTimeEventsReadEnd(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		ended, waiting := newEvent("a"), newEvent("a")
		for _, e := range []*model.Event{ended, waiting} {
			mustCreate(t, s, e)
		}
		fired := t0.Add(2 * time.Minute)
		settle(t, s, ended, t0, fired, model.OccurrenceCompleted, 2)
		_, err := s.InsertOccurrences(ctx, waiting.ID, []time.Time{t0.Add(60 * day)}, false, t0)
		require.NoError(t, err)
		for _, e := range []*model.Event{ended, waiting} { // expanded, the row left as the hot path leaves it
			require.NoError(t, s.Reposition(ctx, e.ID, &model.SeriesEnd))
		}
		live, err := s.GetEvent(ctx, ended.ID)
		require.NoError(t, err)
		require.Equal(t, model.EventInactive, live.Status, "read ended before archival")
		require.Equal(t, fired, live.LastRunAt.UTC())

		now := t0.Add(40 * day)
		got := archiveAll(t, s, repository.ArchiveBatch{Cutoff: now.Add(-30 * day), Now: now, Limit: 10})
		require.Equal(t, repository.ArchiveCounts{Events: 1, Occurrences: 1, Attempts: 2}, got)

		_, err = s.GetEventAny(ctx, ended.ID)
		require.ErrorIs(t, err, model.ErrNotFound, "the ended one-time event was archived")
		archived, err := s.GetArchivedEvent(ctx, ended.ID)
		require.NoError(t, err)
		require.Equal(t, model.EventInactive, archived.Status)
		require.Nil(t, archived.NextRunAt)
		require.Equal(t, fired, archived.LastRunAt.UTC(), "its last run, from the archived attempts")
		require.Equal(t, live.LastStatus, archived.LastStatus)

		stays, err := s.GetEvent(ctx, waiting.ID)
		require.NoError(t, err, "a one-time event still to fire stays")
		require.Equal(t, model.EventActive, stays.Status)
	})
}
