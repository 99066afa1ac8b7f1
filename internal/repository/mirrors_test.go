package repository_test

import (
	"context"
	"testing"
	"time"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/repository/repositorytest"
	"github.com/stretchr/testify/require"
)

// An owner's outcome rewrites its occurrence in place on PostgreSQL (a HOT
// update: no index entry written, migration 0036), and takes the row out
// of the due set in the same statement. Before 0036 none of these updates
// was HOT: six partial indexes named the status the outcome changes.
func TestOwnersOutcomesUpdateOccurrencesInPlace(t *testing.T) {
	s := repositorytest.Postgres(t)
	ctx := context.Background()
	const n = 60
	var rows []model.Occurrence
	for range n {
		rows = append(rows, dueRow(t, s))
	}
	epoch := ownAllSlots(t, s)
	var recs []repository.OutcomeRecord
	for _, o := range rows {
		recs = append(recs, ownedOutcome(o, epoch, model.OccurrenceCompleted))
	}
	res, err := s.RecordOutcomes(ctx, recs)
	require.NoError(t, err)
	for _, r := range res {
		require.NoError(t, r)
	}
	due, err := s.ReadDue(ctx, repository.DueRequest{Until: t0.Add(time.Hour), Limit: 10})
	require.NoError(t, err)
	require.Empty(t, due, "a completed row is no longer due")
	require.Zero(t, count(t, s.DB(), `SELECT COUNT(*) FROM occurrence_queue`))

	// The server's statistics reach other sessions when the writing
	// session flushes them: at a transaction's end, at most once a second,
	// or within ten seconds of going idle.
	var updated, inPlace int
	deadline := time.Now().Add(time.Minute)
	for {
		require.NoError(t, s.DB().QueryRow(`SELECT COALESCE(SUM(n_tup_upd), 0), COALESCE(SUM(n_tup_hot_upd), 0)
			FROM pg_stat_user_tables WHERE schemaname = current_schema() AND relname LIKE 'occurrences\_p%'`).
			Scan(&updated, &inPlace))
		if updated >= n || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	require.Equal(t, n, updated, "one update an outcome")
	// A page fills as its rows' new versions land on it within the batch,
	// before any old version may be pruned: most, not all, stay in place.
	t.Logf("%d of %d outcome updates in place", inPlace, updated)
	require.GreaterOrEqual(t, inPlace, n/2, "HOT updates of %d", updated)
}

// The relations the code reads unfinished and ended occurrences through
// hold exactly the occurrences in those states, on both stores, whatever
// wrote them: an insert, a claim, an outcome, a cancel, a move, a skip, a
// replay. (Every PostgreSQL test also compares the mirrors at its end.)
func TestUnfinishedAndEndedOccurrencesFollowEveryWrite(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		states := func() map[string]string {
			t.Helper()
			out := map[string]string{}
			for _, view := range []string{"unfinished_occurrences", "ended_occurrences"} {
				var got []struct {
					ID     string `db:"id"`
					Status string `db:"status"`
				}
				require.NoError(t, s.DB().Select(&got, `SELECT id, status FROM `+view))
				for _, r := range got {
					out[r.ID] = view + ":" + r.Status
				}
			}
			return out
		}
		delivered, failed, skipped, moved := dueRow(t, s), dueRow(t, s), dueRow(t, s), dueRow(t, s)
		require.Equal(t, map[string]string{delivered.ID: "unfinished_occurrences:pending",
			failed.ID: "unfinished_occurrences:pending", skipped.ID: "unfinished_occurrences:pending",
			moved.ID: "unfinished_occurrences:pending"}, states())

		epoch := ownAllSlots(t, s)
		res, err := s.RecordOutcomes(ctx, []repository.OutcomeRecord{ownedOutcome(delivered, epoch, model.OccurrenceCompleted),
			ownedOutcome(failed, epoch, model.OccurrenceFailed)})
		require.NoError(t, err)
		require.NoError(t, res[0])
		require.NoError(t, res[1])
		require.NoError(t, s.SkipOccurrence(ctx, skipped.ID, model.ReasonManual, "by hand", t0))
		later := t0.Add(30 * 24 * time.Hour)
		require.NoError(t, s.MoveOccurrence(ctx, moved.ID, later, moved.ScheduledAt, t0))
		require.Equal(t, map[string]string{failed.ID: "ended_occurrences:failed",
			skipped.ID: "ended_occurrences:skipped", moved.ID: "unfinished_occurrences:pending"}, states())
		got, err := s.ReadDue(ctx, repository.DueRequest{Until: later, Limit: 10})
		require.NoError(t, err)
		require.Equal(t, []string{moved.ID}, ids(got), "a moved row is due at its new instant")
		require.True(t, got[0].ScheduledAt.Equal(later))

		// Failed rows replayed wait again; the ended listing follows.
		retried, err := s.RetryOccurrences(ctx, model.RetryFilter{Status: []model.OccurrenceStatus{model.OccurrenceFailed},
			Unrestricted: true, Limit: 10}, t0)
		require.NoError(t, err)
		require.Equal(t, 1, retried.Requeued)
		require.Equal(t, "unfinished_occurrences:pending", states()[failed.ID])
		listed, err := s.ListOccurrences(ctx, model.OccurrenceFilter{Status: []model.OccurrenceStatus{model.OccurrenceSkipped,
			model.OccurrenceFailed}, Unrestricted: true})
		require.NoError(t, err)
		require.Equal(t, []string{skipped.ID}, ids(listed))
	})
}

// Migration 0036 fills the mirrors from the occurrences already stored: the
// unfinished ones queue, those that ended otherwise than completed are
// listed as ended, completed ones are in neither; and the live slices get
// room for an outcome's new row version.
func TestUpgradeTo0036MirrorsStoredOccurrences(t *testing.T) {
	s, db := emptyPostgres(t)
	ctx := context.Background()
	applyUpTo(t, db, 35)
	_, err := db.Exec(`SELECT qhronos_create_slice('', '2031-03-03', '2031-03-10')`)
	require.NoError(t, err)
	states := []string{"pending", "retrying", "dispatching", "awaiting_ack", "running", "completed", "failed", "missed",
		"cancelled", "skipped", "timed_out"}
	for i, st := range states {
		_, err = db.Exec(`INSERT INTO occurrences (id, event_id, scheduled_at, status, attempt_count, next_attempt_at,
				created_at, updated_at, fanout_json)
			VALUES (gen_random_uuid(), gen_random_uuid(), '2031-03-04T10:00:00Z'::timestamptz + $1 * interval '1 second',
				$2, 1, '2031-03-04T10:00:00Z', now(), now(), CASE WHEN $1 = 0 THEN '{}' END)`, i, st)
		require.NoError(t, err)
	}
	applied, err := s.Migrate(ctx)
	require.NoError(t, err)
	require.GreaterOrEqual(t, applied, 1, "0036 and the migrations after it")

	var queued, ended []string
	require.NoError(t, db.Select(&queued, `SELECT status FROM occurrence_queue ORDER BY scheduled_at`))
	require.Equal(t, states[:5], queued)
	require.NoError(t, db.Select(&ended, `SELECT status FROM occurrence_ends ORDER BY scheduled_at`))
	require.Equal(t, states[6:], ended)
	var fanned bool
	require.NoError(t, db.Get(&fanned, `SELECT fanned FROM occurrence_queue WHERE status = 'pending'`))
	require.True(t, fanned, "the row with a fan-out document says so")
	var options []string
	require.NoError(t, db.Select(&options, `SELECT COALESCE(array_to_string(c.reloptions, ','), '') FROM pg_inherits i
		JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'occurrences'::regclass`))
	require.NotEmpty(t, options)
	for _, o := range options {
		require.Equal(t, "fillfactor=50", o)
	}
}

// An instance of the build before 0036 records an owner's outcome with a
// plain update, outside a transaction that says it deletes the queue row:
// the trigger mirrors it like any other write, and the row is no longer due
// (its next owner would otherwise send it again).
func TestAnOlderBuildsOutcomeLeavesTheQueue(t *testing.T) {
	s := repositorytest.Postgres(t)
	ctx := context.Background()
	done, waiting := dueRow(t, s), dueRow(t, s)
	_, err := s.DB().Exec(`UPDATE occurrences SET status = 'completed', attempt_count = attempt_count + 1,
		completed_at = now(), updated_at = now() WHERE id = $1`, done.ID)
	require.NoError(t, err)
	due, err := s.ReadDue(ctx, repository.DueRequest{Until: t0.Add(time.Hour), Limit: 10})
	require.NoError(t, err)
	require.Equal(t, []string{waiting.ID}, ids(due))
}

// ownedOutcome is the outcome st of the due row o, recorded by the owner of
// its slot (epoch: ownAllSlots) with its first attempt.
func ownedOutcome(o model.Occurrence, epoch map[int]int64, st model.OccurrenceStatus) repository.OutcomeRecord {
	slot := model.SlotOf(model.BucketOf(o.EventID))
	return repository.OutcomeRecord{OccurrenceID: o.ID, EventID: o.EventID, Status: st, Now: t0, Slot: slot,
		Epoch: epoch[slot], Seen: 0, Attempt: &model.Attempt{OccurrenceID: o.ID, EventID: o.EventID, Attempt: 1,
			StartedAt: t0, Outcome: string(st), ScheduledAt: o.ScheduledAt}}
}
