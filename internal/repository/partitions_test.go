package repository_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/repository/repositorytest"
	"github.com/qhronos/qhronos/migrations"
)

// pnow is a Wednesday: the weekly slices of these tests do not depend on
// the day they run.
var pnow = time.Date(2031, 6, 4, 12, 0, 0, 0, time.UTC)

// schemaBytes is what this schema's tables and indexes take on disk.
func schemaBytes(t *testing.T, db *sqlx.DB) int64 {
	t.Helper()
	var n int64
	require.NoError(t, db.Get(&n, `SELECT COALESCE(SUM(pg_total_relation_size(oid)), 0) FROM pg_class
		WHERE relnamespace = current_schema()::regnamespace AND relkind = 'r'`))
	return n
}

// seedHistory writes n completed occurrences of event, one attempt each,
// evenly between from and to, by SQL as bench/history-seed.sql does.
func seedHistory(t *testing.T, db *sqlx.DB, eventID string, n int, from, to time.Time) {
	t.Helper()
	_, err := db.Exec(`SELECT qhronos_ensure_partitions($1, $2)`, from, to)
	require.NoError(t, err)
	_, err = db.Exec(`INSERT INTO occurrences (id, event_id, scheduled_at, status, attempt_count, next_attempt_at,
			status_code, response_body, started_at, completed_at, created_at, updated_at)
		SELECT gen_random_uuid(), $1, at, 'completed', 1, at, 200, repeat('x', 200), at, at + interval '1 second',
			at, at + interval '1 second'
		FROM (SELECT $2::timestamptz + (i::float8 / $4) * ($3::timestamptz - $2::timestamptz) AS at
			FROM generate_series(0, $4 - 1) i) g`, eventID, from, to, n)
	require.NoError(t, err)
	_, err = db.Exec(`INSERT INTO attempts (id, occurrence_id, event_id, attempt, started_at, duration_ms,
			status_code, outcome, response_excerpt, scheduled_at)
		SELECT gen_random_uuid(), id, event_id, 1, scheduled_at, 5, 200, 'completed', repeat('y', 200), scheduled_at
		FROM occurrences WHERE event_id = $1`, eventID)
	require.NoError(t, err)
}

func count(t *testing.T, db *sqlx.DB, q string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, db.Get(&n, q, args...))
	return n
}

func TestPartitionedRetentionDetachesDropsAndGivesDiskBack(t *testing.T) {
	s := repositorytest.Postgres(t)
	db, ctx := s.DB(), context.Background()
	e := newEvent("history")
	e.CreatedAt, e.UpdatedAt = pnow.Add(-80*day), pnow.Add(-80*day)
	mustCreate(t, s, e)
	const n = 20000
	seedHistory(t, db, e.ID, n, pnow.Add(-70*day), pnow.Add(-40*day))
	recent := settle(t, s, e, pnow.Add(-day), pnow.Add(-day), model.OccurrenceCompleted, 1)
	// A straggler in the oldest slice: a row stuck pending past retention
	// must not leave the live tables with its slice.
	stuckAt := pnow.Add(-69 * day).Truncate(time.Second)
	_, err := s.InsertOccurrences(ctx, e.ID, []time.Time{stuckAt}, false, stuckAt)
	require.NoError(t, err)
	var stuck string
	require.NoError(t, db.Get(&stuck, `SELECT id FROM occurrences WHERE scheduled_at = $1`, stuckAt))
	livePartsBefore, err := s.Partitions(ctx, "occurrences")
	require.NoError(t, err)

	b := repository.ArchiveBatch{Cutoff: pnow.Add(-30 * day), Now: pnow, Limit: 1000}
	moved := archiveAll(t, s, b)
	require.Equal(t, n, moved.Occurrences, "every old row is archived, the straggler is not")
	require.Equal(t, n, moved.Attempts)
	got, err := s.GetOccurrence(ctx, stuck)
	require.NoError(t, err, "the stuck row stays live")
	require.Equal(t, model.OccurrencePending, got.Status)
	_, err = s.GetOccurrence(ctx, recent.ID)
	require.NoError(t, err, "a row inside retention stays live")
	require.Equal(t, n, count(t, db, `SELECT COUNT(*) FROM occurrences_archive`))
	require.Equal(t, n, count(t, db, `SELECT COUNT(*) FROM attempts_archive`))
	require.Zero(t, count(t, db, `SELECT COUNT(*) FROM attempts a WHERE NOT EXISTS
		(SELECT 1 FROM occurrences o WHERE o.id = a.occurrence_id)`), "no attempt lost its occurrence")
	var oneArchived string
	require.NoError(t, db.Get(&oneArchived, `SELECT id FROM occurrences_archive LIMIT 1`))
	att, err := s.ListArchivedAttempts(ctx, oneArchived)
	require.NoError(t, err)
	require.Len(t, att, 1, "an archived occurrence keeps its attempt")
	liveParts, err := s.Partitions(ctx, "occurrences")
	require.NoError(t, err)
	require.Less(t, len(liveParts), len(livePartsBefore), "whole slices left the live table")
	require.True(t, !liveParts[0].From.After(stuckAt) && liveParts[0].To.After(stuckAt),
		"the straggler's slice is the oldest still live")

	// The straggler finishes and ages: its slice goes whole.
	_, err = db.Exec(`UPDATE occurrences SET status = 'failed', completed_at = $2, updated_at = $2 WHERE id = $1`,
		stuck, pnow.Add(-31*day))
	require.NoError(t, err)
	moved = archiveAll(t, s, b)
	require.Equal(t, 1, moved.Occurrences)
	_, err = s.GetOccurrence(ctx, stuck)
	require.ErrorIs(t, err, model.ErrNotFound)

	// Purge drops the archive's slices and the disk space comes back.
	before := schemaBytes(t, db)
	var purged repository.ArchiveCounts
	for range 100 {
		p, err := s.PurgeArchive(ctx, pnow.Add(time.Hour), 1000)
		require.NoError(t, err)
		purged = purged.Add(p)
		if p.Occurrences < 1000 && p.Attempts < 1000 {
			break
		}
	}
	after := schemaBytes(t, db)
	require.Equal(t, n+1, purged.Occurrences)
	require.Equal(t, n, purged.Attempts)
	require.Zero(t, count(t, db, `SELECT COUNT(*) FROM occurrences_archive`))
	archiveParts, err := s.Partitions(ctx, "occurrences_archive")
	require.NoError(t, err)
	require.Empty(t, archiveParts, "purged slices are dropped, not emptied")
	t.Logf("schema size before purge %d bytes, after %d bytes", before, after)
	require.Less(t, after, before/2, "dropping the slices gave the space back")
}

func TestFarFutureInstantsGetPartitionsWithoutDefault(t *testing.T) {
	s := repositorytest.Postgres(t)
	db, ctx := s.DB(), context.Background()
	e := newEvent()
	mustCreate(t, s, e)
	far := []time.Time{
		time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Date(2400, 1, 1, 0, 0, 0, 0, time.UTC),
		pnow.AddDate(3, 0, 0),
		pnow.AddDate(0, 2, 0),
	}
	n, err := s.InsertOccurrences(ctx, e.ID, far, false, pnow)
	require.NoError(t, err)
	require.Equal(t, len(far), n)
	for _, at := range far {
		got, err := s.GetOccurrence(ctx, occIDAt(t, s, e.ID, at))
		require.NoError(t, err)
		require.True(t, got.ScheduledAt.Equal(at))
	}
	require.Zero(t, count(t, db, `SELECT COUNT(*) FROM pg_partitioned_table WHERE partdefid <> 0
		AND partrelid::regclass::text IN ('occurrences', 'attempts', 'occurrences_archive', 'attempts_archive')`),
		"no DEFAULT partition")
	parts, err := s.Partitions(ctx, "occurrences")
	require.NoError(t, err)
	beyond := 0
	for _, p := range parts {
		if p.To.After(pnow) {
			beyond++
		}
	}
	require.Equal(t, 4, beyond, "one partition each, weekly only within a year: %v", parts)
	coarse := func(at time.Time) repository.Partition {
		for _, p := range parts {
			if !at.Before(p.From) && at.Before(p.To) {
				return p
			}
		}
		t.Fatalf("no partition holds %v", at)
		return repository.Partition{}
	}
	require.Greater(t, coarse(far[0]).To.Sub(coarse(far[0]).From), 365*day, "a century")
	require.Greater(t, coarse(far[2]).To.Sub(coarse(far[2]).From), 300*day, "a year")
	require.Equal(t, 7*day, coarse(far[3]).To.Sub(coarse(far[3]).From), "within a year: a week")

	// The weekly window reaching the coarse year splits it; the row moves
	// to its week and keeps its id.
	id := occIDAt(t, s, e.ID, far[2])
	_, err = s.EnsurePartitions(ctx, far[2].Add(-7*day), far[2].Add(7*day))
	require.NoError(t, err)
	parts, err = s.Partitions(ctx, "occurrences")
	require.NoError(t, err)
	require.Equal(t, 7*day, coarse(far[2]).To.Sub(coarse(far[2]).From))
	got, err := s.GetOccurrence(ctx, id)
	require.NoError(t, err)
	require.True(t, got.ScheduledAt.Equal(far[2]))
	// Partitions stay contiguous where they were split: no gap, no overlap.
	sort.Slice(parts, func(i, j int) bool { return parts[i].From.Before(parts[j].From) })
	for i := 1; i < len(parts); i++ {
		require.False(t, parts[i].From.Before(parts[i-1].To), "overlap %v %v", parts[i-1], parts[i])
	}
	require.Equal(t, len(far), count(t, db, `SELECT COUNT(*) FROM occurrences`))
}

func TestHotPathStatementsPruneToOneSlice(t *testing.T) {
	s := repositorytest.Postgres(t)
	db, ctx := s.DB(), context.Background()
	e := newEvent()
	mustCreate(t, s, e)
	// Enough history that the planner looks rows up by index, as it does
	// on a real installation.
	seedHistory(t, db, e.ID, 60000, pnow.Add(-28*day), pnow.Add(-day))
	_, err := s.EnsurePartitions(ctx, pnow.Add(-7*day), pnow.Add(28*day))
	require.NoError(t, err)
	_, err = db.Exec(`ANALYZE occurrences`)
	require.NoError(t, err)
	_, err = s.InsertOccurrences(ctx, e.ID, []time.Time{pnow}, false, pnow)
	require.NoError(t, err)
	// The claim matches picked rows on (id, scheduled_at): the update runs
	// in the one slice that holds each row (the others are never executed).
	var plan []string
	tx := db.MustBegin()
	defer func() { _ = tx.Rollback() }()
	require.NoError(t, tx.Select(&plan, `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
		UPDATE occurrences SET status = 'dispatching' WHERE (id, scheduled_at) IN (SELECT id, scheduled_at
		FROM unfinished_occurrences WHERE status IN ('pending', 'retrying') AND next_attempt_at <= $1
		ORDER BY next_attempt_at LIMIT 10 FOR UPDATE SKIP LOCKED)`, pnow))
	text := strings.Join(plan, "\n")
	parts, err := s.Partitions(ctx, "occurrences")
	require.NoError(t, err)
	require.Greater(t, len(parts), 5)
	require.GreaterOrEqual(t, strings.Count(text, "(never executed)"), len(parts)-1,
		"every slice but the row's is pruned at run time:\n%s", text)
	require.Equal(t, len(parts), count(t, db, `SELECT COUNT(*) FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		WHERE i.inhparent = 'occurrences_listing'::regclass`), "each slice has its own listing index")
	// No index of occurrences names a column an owner's outcome changes, so
	// that its update stays in place (0036).
	var named []string
	require.NoError(t, db.Select(&named, `SELECT DISTINCT i.indexrelid::regclass::text FROM pg_index i
		JOIN pg_attribute a ON a.attrelid = i.indrelid
		WHERE i.indrelid = 'occurrences'::regclass AND a.attname IN ('status', 'updated_at', 'completed_at',
			'attempt_count', 'status_code', 'response_body', 'error_message', 'started_at')
		AND (a.attnum = ANY (i.indkey) OR pg_get_expr(i.indpred, i.indrelid) LIKE '%' || a.attname || '%')`))
	require.Empty(t, named)
	// An attempt's insert probes no unique index, in any slice (0037):
	// nothing reads attempts by id.
	var unique []string
	require.NoError(t, db.Select(&unique, `SELECT i.indexrelid::regclass::text FROM pg_index i
		WHERE i.indisunique AND (i.indrelid = 'attempts'::regclass
			OR i.indrelid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = 'attempts'::regclass))`))
	require.Empty(t, unique)
}

// emptyPostgres is a store on an empty schema (no migration applied).
func emptyPostgres(t *testing.T) (*repository.Store, *sqlx.DB) {
	t.Helper()
	s, err := repository.OpenPostgres(context.Background(), repositorytest.PostgresSchema(t),
		repository.Options{MaxOpenConns: 4, ConnectTimeout: 5 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s, s.DB()
}

// applyUpTo applies the embedded PostgreSQL migrations up to version last
// the way Migrate does, recording them, so a test starts from an older
// layout.
func applyUpTo(t *testing.T, db *sqlx.DB, last int) {
	t.Helper()
	_, err := db.Exec(`CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL,
		applied_at TIMESTAMP NOT NULL)`)
	require.NoError(t, err)
	files, err := fs.Glob(migrations.FS, "postgres/*.sql")
	require.NoError(t, err)
	sort.Strings(files)
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".sql")
		version, err := strconv.Atoi(name[:strings.IndexByte(name, '_')])
		require.NoError(t, err)
		if version > last {
			break
		}
		sql, err := fs.ReadFile(migrations.FS, f)
		require.NoError(t, err)
		_, err = db.Exec(string(sql))
		require.NoError(t, err, f)
		_, err = db.Exec(`INSERT INTO schema_migrations VALUES ($1, $2, now())`, version, name)
		require.NoError(t, err)
	}
}

func TestUpgradeFrom0011ConvertsHistoryToPartitions(t *testing.T) {
	s, db := emptyPostgres(t)
	ctx := context.Background()
	applyUpTo(t, db, 11)
	// The 0011 layout with rows: events, live history (finished and
	// pending, one far ahead), attempts, and archived history.
	const ev = "0b7f3c1e-0000-4000-8000-000000000001"
	_, err := db.Exec(`INSERT INTO events (id, name, start_time, action_type, action, status, created_at, updated_at)
		VALUES ($1, 'upgrade', now(), 'webhook', '{"type":"webhook","params":{"url":"http://127.0.0.1:9/x"}}',
		'active', now(), now())`, ev)
	require.NoError(t, err)
	_, err = db.Exec(`INSERT INTO occurrences (id, event_id, scheduled_at, status, attempt_count, next_attempt_at,
			created_at, updated_at, completed_at)
		SELECT md5('o' || i)::uuid, $1, now() - i * interval '1 hour', CASE WHEN i = 0 THEN 'pending' ELSE 'completed' END,
			1, now() - i * interval '1 hour', now(), now(), CASE WHEN i = 0 THEN NULL ELSE now() END
		FROM generate_series(0, 999) i`, ev)
	require.NoError(t, err)
	_, err = db.Exec(`INSERT INTO occurrences (id, event_id, scheduled_at, status, next_attempt_at, created_at, updated_at)
		VALUES ('0b7f3c1e-0000-4000-8000-00000000f00d', $1, '9999-06-01T00:00:00Z', 'pending', '9999-06-01T00:00:00Z',
		now(), now())`, ev)
	require.NoError(t, err)
	_, err = db.Exec(`INSERT INTO attempts (id, occurrence_id, event_id, attempt, started_at, duration_ms, outcome, lateness_ms)
		SELECT md5('a' || i)::uuid, md5('o' || i)::uuid, $1, 1, now() - i * interval '1 hour' + interval '2 seconds', 5,
			'completed', 2000 FROM generate_series(1, 999) i`, ev)
	require.NoError(t, err)
	_, err = db.Exec(`INSERT INTO occurrences_archive (id, event_id, scheduled_at, status, manual, attempt_count,
			next_attempt_at, created_at, updated_at, archived_at)
		SELECT md5('x' || i)::uuid, $1, now() - interval '90 days' - i * interval '1 hour', 'completed', false, 1,
			now() - interval '90 days', now(), now(), now() - interval '50 days' FROM generate_series(0, 99) i`, ev)
	require.NoError(t, err)
	_, err = db.Exec(`INSERT INTO attempts_archive (id, occurrence_id, event_id, attempt, manual, started_at,
			duration_ms, outcome, truncated, lateness_ms, archived_at)
		SELECT md5('y' || i)::uuid, md5('x' || i)::uuid, $1, 1, false, now() - interval '90 days' - i * interval '1 hour',
			5, 'completed', false, 0, now() - interval '50 days' FROM generate_series(0, 99) i`, ev)
	require.NoError(t, err)

	applied, err := s.Migrate(ctx)
	require.NoError(t, err)
	require.GreaterOrEqual(t, applied, 1)

	require.Equal(t, "p", func() string {
		var k string
		require.NoError(t, db.Get(&k, `SELECT relkind::text FROM pg_class WHERE oid = 'occurrences'::regclass`))
		return k
	}(), "occurrences is partitioned")
	require.Equal(t, 1001, count(t, db, `SELECT COUNT(*) FROM occurrences`))
	require.Equal(t, 999, count(t, db, `SELECT COUNT(*) FROM attempts a JOIN occurrences o
		ON o.id = a.occurrence_id AND o.scheduled_at = a.scheduled_at`), "attempts carry their occurrence's instant")
	require.Equal(t, 100, count(t, db, `SELECT COUNT(*) FROM occurrences_archive`))
	require.Equal(t, 100, count(t, db, `SELECT COUNT(*) FROM attempts_archive a JOIN occurrences_archive o
		ON o.id = a.occurrence_id AND o.scheduled_at = a.scheduled_at`))
	got, err := s.GetOccurrence(ctx, "0b7f3c1e-0000-4000-8000-00000000f00d")
	require.NoError(t, err, "the row in 9999 kept its id")
	require.Equal(t, 9999, got.ScheduledAt.Year())
	att, err := s.ListAttempts(ctx, md5UUID(t, db, "o5"))
	require.NoError(t, err)
	require.Len(t, att, 1)
	archived, err := s.ListArchivedAttempts(ctx, md5UUID(t, db, "x5"))
	require.NoError(t, err)
	require.Len(t, archived, 1)

	// The server's statements work on the new layout: claim the pending
	// row, record its outcome with an attempt, archive and purge.
	now := time.Now().UTC()
	claimed, err := s.ClaimDue(ctx, repository.ClaimRequest{Now: now, Limit: 10, Owner: "t", Token: "tok",
		LeaseUntil: now.Add(time.Minute)})
	require.NoError(t, err)
	require.Len(t, claimed, 1)
	res, err := s.RecordOutcomes(ctx, []repository.OutcomeRecord{{OccurrenceID: claimed[0].ID, LeaseToken: "tok",
		Status: model.OccurrenceCompleted, Now: now, Attempt: &model.Attempt{OccurrenceID: claimed[0].ID, EventID: ev,
			Attempt: 1, StartedAt: now, Outcome: "completed", ScheduledAt: claimed[0].ScheduledAt}}})
	require.NoError(t, err)
	require.NoError(t, res[0])
	purged, err := s.PurgeArchive(ctx, now.Add(-30*day), 1000)
	require.NoError(t, err)
	require.Equal(t, 100, purged.Occurrences, "archived history past purge_after goes")
	require.Equal(t, 100, purged.Attempts)
}

func md5UUID(t *testing.T, db *sqlx.DB, s string) string {
	t.Helper()
	var id string
	require.NoError(t, db.Get(&id, `SELECT md5($1)::uuid::text`, s))
	return id
}

// openSQLiteIn opens and migrates an embedded store in dir, closed when the
// test ends: for tests that look at the files beside it.
func openSQLiteIn(t *testing.T, dir string) *repository.Store {
	t.Helper()
	ctx := context.Background()
	s, err := repository.OpenSQLite(ctx, dir)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	_, err = s.Migrate(ctx)
	require.NoError(t, err)
	return s
}

func TestSQLitePurgeShrinksTheFile(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s := openSQLiteIn(t, dir)
	db := s.DB()
	var mode int
	require.NoError(t, db.Get(&mode, `PRAGMA auto_vacuum`))
	require.Equal(t, 2, mode, "auto_vacuum=INCREMENTAL")
	e := newEvent()
	mustCreate(t, s, e)
	old := pnow.Add(-400 * day).Format("2006-01-02T15:04:05.000000Z")
	_, err := db.Exec(`WITH RECURSIVE g(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM g WHERE i < 19999)
		INSERT INTO occurrences_archive (id, event_id, scheduled_at, status, manual, attempt_count, next_attempt_at,
			response_body, created_at, updated_at, archived_at)
		SELECT 'o' || i, ?, strftime('%Y-%m-%dT%H:%M:%S.000000Z', ?, '+' || i || ' seconds'), 'completed', 0, 1, ?,
			hex(randomblob(300)), ?, ?, ? FROM g`, e.ID, old, old, old, old, old)
	require.NoError(t, err)
	size := func() int64 {
		_, err := db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
		require.NoError(t, err)
		fi, err := os.Stat(filepath.Join(dir, "qhronos.db"))
		require.NoError(t, err)
		return fi.Size()
	}
	before := size()
	var purged repository.ArchiveCounts
	for range 100 {
		p, err := s.PurgeArchive(ctx, pnow, 1000)
		require.NoError(t, err)
		purged = purged.Add(p)
		if p.Occurrences < 1000 {
			break
		}
	}
	require.Equal(t, 20000, purged.Occurrences)
	after := size()
	t.Logf("sqlite file before purge %d bytes, after %d bytes", before, after)
	require.Less(t, after, before/2, "the purge gave the pages back to the file system")
}

// Making a new weekly partition waits for no transaction that wrote an
// event: with the foreign key from occurrences to events, ATTACH locked
// events and waited behind such a transaction (every later event write
// queued behind it), and a create needing a partition deadlocked with it.
func TestNewPartitionDoesNotWaitForEventWriters(t *testing.T) {
	s := repositorytest.Postgres(t)
	ctx := context.Background()
	e := newEvent()
	mustCreate(t, s, e)

	// A transaction that wrote the event stays open until the partition is made.
	tx, err := s.DB().BeginTxx(ctx, nil)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback() }()
	_, err = tx.ExecContext(ctx, `UPDATE events SET updated_at = updated_at WHERE id = $1`, e.ID)
	require.NoError(t, err)

	week := pnow.AddDate(0, 5, 0)
	done := make(chan error, 1)
	go func() {
		_, err := s.EnsurePartitions(ctx, week, week)
		done <- err
	}()
	select {
	case err := <-done:
		require.NoError(t, err, "the partition is made while the event writer is still open")
	case <-time.After(time.Minute):
		t.Fatal("EnsurePartitions still waiting after a minute")
	}
	require.NoError(t, tx.Rollback())
	n, err := s.InsertOccurrences(ctx, e.ID, []time.Time{week}, false, pnow)
	require.NoError(t, err)
	require.Equal(t, 1, n)
}
