// Package repositorytest gives tests isolated stores: a fresh SQLite file, or
// a fresh PostgreSQL schema, migrated and dropped at cleanup.
package repositorytest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/jmoiron/sqlx"

	"github.com/qhronos/qhronos/internal/repository"
)

// DefaultPostgresURL is the shared test server; QHRONOS_TEST_DATABASE_URL
// overrides it.
const DefaultPostgresURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// PostgresURL returns the admin URL of the test server.
func PostgresURL() string {
	if u := os.Getenv("QHRONOS_TEST_DATABASE_URL"); u != "" {
		return u
	}
	return DefaultPostgresURL
}

// SQLite returns a migrated store in a fresh temporary directory: a copy of
// a database file this process migrated once. Migrating costs about 2 s
// under the race detector (modernc.org/sqlite is C translated to Go, and
// every memory access of it is instrumented), against milliseconds to copy
// the file; a test suite opens hundreds of these stores.
func SQLite(t testing.TB) *repository.Store {
	t.Helper()
	ctx := context.Background()
	template, err := migratedSQLite()
	if err != nil {
		t.Fatalf("migrate sqlite: %v", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, repository.SQLiteFile), template, 0o600); err != nil {
		t.Fatalf("copy the migrated sqlite file: %v", err)
	}
	s, err := repository.OpenSQLite(ctx, dir)
	if err != nil {
		t.Fatalf("open sqlite: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	// Finds every migration applied; kept so that a store from here is
	// always one Migrate has checked.
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatalf("migrate sqlite: %v", err)
	}
	return s
}

var sqliteTemplate struct {
	once  sync.Once
	bytes []byte
	err   error
}

// migratedSQLite returns the bytes of a freshly migrated database file,
// migrated once per process. Closing the store checkpoints its WAL into the
// file and removes the -wal and -shm files, so the file alone is the
// database.
func migratedSQLite() ([]byte, error) {
	sqliteTemplate.once.Do(func() {
		sqliteTemplate.bytes, sqliteTemplate.err = migrateSQLiteFile()
	})
	return sqliteTemplate.bytes, sqliteTemplate.err
}

func migrateSQLiteFile() ([]byte, error) {
	dir, err := os.MkdirTemp("", "qhronos-sqlite-template-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	ctx := context.Background()
	s, err := repository.OpenSQLite(ctx, dir)
	if err != nil {
		return nil, err
	}
	if _, err := s.Migrate(ctx); err != nil {
		_ = s.Close()
		return nil, err
	}
	if err := s.Close(); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, repository.SQLiteFile+"-wal")); err == nil {
		return nil, fmt.Errorf("the migrated sqlite file still has a WAL after close")
	}
	return os.ReadFile(filepath.Join(dir, repository.SQLiteFile))
}

// Postgres returns a migrated store on a fresh schema of the test server.
// Outside CI a missing server skips the test; in CI it fails.
func Postgres(t testing.TB) *repository.Store {
	t.Helper()
	schemaURL := MigratedPostgresSchema(t)
	ctx := context.Background()
	s, err := repository.OpenPostgres(ctx, schemaURL, repository.Options{MaxOpenConns: 8, ConnectTimeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatalf("migrate postgres: %v", err)
	}
	return s
}

// PostgresSchema creates an empty schema and returns a URL whose connections
// use it (search_path); the schema is dropped at cleanup.
func PostgresSchema(t testing.TB) string {
	t.Helper()
	return postgresSchema(t, false)
}

// MigratedPostgresSchema is PostgresSchema with every migration applied:
// the schema is filled from a pg_dump of one this process migrated once
// (see postgresTemplate), or migrated where no dump could be made. A
// migration costs the server about 1 CPU-second, its replay about half
// that; a CI run makes hundreds of these schemas on two cores.
func MigratedPostgresSchema(t testing.TB) string {
	t.Helper()
	return postgresSchema(t, true)
}

func postgresSchema(t testing.TB, migrated bool) string {
	t.Helper()
	admin, err := sqlx.Open("pgx", PostgresURL())
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	// Up to two minutes while every connection slot is taken: two copies
	// of the suite side by side, or a busy laptop, fill max_connections
	// for moments, which is not a missing server. The slot the wait got
	// creates the schema: the pool keeps it idle until then, since a
	// fresh connection could find the slot taken again (or not yet given
	// back by the wait's own closed connection, whose server process
	// exits after the client has moved on).
	admin.SetMaxIdleConns(1)
	wait, cancelWait := context.WithTimeout(context.Background(), 2*time.Minute)
	err = repository.AwaitPostgres(wait, admin, slotRefused)
	cancelWait()
	if err != nil {
		_ = admin.Close()
		Unavailable(t, "PostgreSQL", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	sweepLeftSchemas.Do(func() {
		sweep, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		dropLeftSchemas(sweep, admin, time.Now())
	})
	schema := schemaName(time.Now())
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		_ = admin.Close()
		t.Fatalf("create schema: %v", err)
	}
	if migrated {
		if err := fillSchema(t, admin, schema); err != nil {
			_, _ = admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
			_ = admin.Close()
			t.Fatalf("migrate schema %s: %v", schema, err)
		}
	}
	// Held for the whole test, the admin pool keeps no idle connection:
	// two copies of the suite side by side run near max_connections.
	admin.SetMaxIdleConns(0)
	t.Cleanup(func() {
		_, _ = admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		_ = admin.Close()
	})
	if migrated {
		// Run before the drop, after the test's own cleanups stopped
		// whatever it started.
		t.Cleanup(func() { checkMirrors(t, admin, schema) })
	}
	u, err := schemaURL(schema)
	if err != nil {
		t.Fatalf("parse test database url: %v", err)
	}
	return u
}

// schemaURL is the test server's URL with connections on schema.
func schemaURL(schema string) (string, error) {
	u, err := url.Parse(PostgresURL())
	if err != nil {
		return "", err
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// fillSchema migrates the empty schema: by replaying the template, or where
// the template could not be made (no pg_dump, or one that cannot read this
// server) with Migrate.
func fillSchema(t testing.TB, admin *sqlx.DB, schema string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dump, err := postgresTemplate(ctx)
	if err == nil {
		if err = replayTemplate(ctx, admin, schema, dump); err == nil {
			return nil
		}
	}
	t.Logf("migrating schema %s instead of copying a template: %v", schema, err)
	return migrateSchema(ctx, schema)
}

// migrateSchema applies every migration to schema.
func migrateSchema(ctx context.Context, schema string) error {
	u, err := schemaURL(schema)
	if err != nil {
		return err
	}
	s, err := repository.OpenPostgres(ctx, u, repository.Options{MaxOpenConns: 4, ConnectTimeout: 5 * time.Second})
	if err != nil {
		return err
	}
	defer func() { _ = s.Close() }()
	_, err = s.Migrate(ctx)
	return err
}

// replayTemplate fills the empty schema from dump. One query string, so
// one implicit transaction: a replay that fails leaves the schema empty.
func replayTemplate(ctx context.Context, admin *sqlx.DB, schema, dump string) error {
	if _, err := admin.ExecContext(ctx, strings.ReplaceAll(dump, templateMark, schema)); err != nil {
		return fmt.Errorf("replay the migrated template: %w", err)
	}
	return nil
}

// templateMark stands for the schema's name in the template's SQL.
const templateMark = "qtest_template_schema"

var pgTemplate struct {
	once sync.Once
	sql  string
	err  error
}

// postgresTemplate returns the SQL that fills an empty schema named
// templateMark as Migrate would: pg_dump's output (tables, indexes,
// functions, triggers and the rows migrations insert) for a schema this
// process migrated once and then dropped. Its weekly partitions are those
// of the week it was made in, as a migration's are; the store makes any
// missing one before rows need it (EnsurePartitionsFor). pg_dump, not a
// catalog walk of our own: it writes every kind of object in dependency
// order.
func postgresTemplate(ctx context.Context) (string, error) {
	pgTemplate.once.Do(func() { pgTemplate.sql, pgTemplate.err = dumpMigratedSchema(ctx) })
	return pgTemplate.sql, pgTemplate.err
}

func dumpMigratedSchema(ctx context.Context) (string, error) {
	pgDump, err := exec.LookPath("pg_dump")
	if err != nil {
		return "", err
	}
	admin, err := sqlx.Open("pgx", PostgresURL())
	if err != nil {
		return "", err
	}
	defer func() { _ = admin.Close() }()
	schema := schemaName(time.Now())
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		return "", err
	}
	defer func() { _, _ = admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE") }()
	if err := migrateSchema(ctx, schema); err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, pgDump, "--dbname="+PostgresURL(), "--schema="+schema,
		"--no-owner", "--no-privileges", "--no-comments", "--inserts")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("pg_dump: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	var b strings.Builder
	for line := range strings.Lines(string(out)) {
		// psql's meta-commands (\restrict) are no SQL; the schema exists.
		if strings.HasPrefix(line, `\`) || strings.HasPrefix(line, "CREATE SCHEMA ") {
			continue
		}
		b.WriteString(line)
	}
	// The random name occurs nowhere but as the schema's.
	return strings.ReplaceAll(b.String(), schema, templateMark), nil
}

// A test schema's name carries the second it was made, so that the ones a
// killed process left behind can be told from those in use: a fuzz run
// kills its workers, whose cleanups never run, and a suite stopped with
// ^C leaves its schemas too.
const schemaPrefix = "qtest_t"

var leftSchema = regexp.MustCompile(`^` + schemaPrefix + `([0-9a-f]{8})[0-9a-f]{8}$`)

// schemaLifetime bounds how long a test may use its schema: go test's
// default timeout is 10 minutes, CI's scripts/test allows 30.
const schemaLifetime = 6 * time.Hour

func schemaName(now time.Time) string {
	return fmt.Sprintf("%s%08x%s", schemaPrefix, uint32(now.Unix()), randomHex(4))
}

var sweepLeftSchemas sync.Once

// dropLeftSchemas drops the test schemas made more than schemaLifetime
// before now, once per process; best effort, since another process may
// drop them at the same moment.
func dropLeftSchemas(ctx context.Context, admin *sqlx.DB, now time.Time) {
	var names []string
	if err := admin.SelectContext(ctx, &names, `SELECT nspname FROM pg_namespace WHERE nspname LIKE $1`,
		schemaPrefix+"%"); err != nil {
		return
	}
	for _, name := range names {
		m := leftSchema.FindStringSubmatch(name)
		if m == nil {
			continue
		}
		secs, err := strconv.ParseUint(m[1], 16, 32)
		if err != nil || now.Sub(time.Unix(int64(secs), 0)) < schemaLifetime {
			continue
		}
		_, _ = admin.ExecContext(ctx, "DROP SCHEMA IF EXISTS "+name+" CASCADE")
	}
}

// slotRefused, when set, hears of each refusal PostgresSchema waits out
// (the test of that wait frees the slot on it).
var slotRefused func(error)

// Unavailable fails the test in CI and skips it elsewhere, saying why.
func Unavailable(t testing.TB, service string, err error) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is required in CI but unavailable: %v", service, err)
	}
	t.Skipf("%s unavailable, skipping (set CI=1 to make this a failure): %v", service, err)
}

// Backend is a named store constructor for contract tests.
type Backend struct {
	Name string
	Open func(t testing.TB) *repository.Store
}

// Backends lists every backend; contract tests run each subtest on all.
func Backends() []Backend {
	return []Backend{{Name: "sqlite", Open: SQLite}, {Name: "postgres", Open: Postgres}}
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("random: %v", err))
	}
	return hex.EncodeToString(b)
}

// checkMirrors fails the test when the narrow tables that mirror
// occurrences (occurrence_queue, occurrence_ends: migration 0036) disagree
// with them at its end: every test on PostgreSQL checks that each write it
// made kept them in step.
func checkMirrors(t testing.TB, admin *sqlx.DB, schema string) {
	if t.Failed() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const queued = `id, scheduled_at, event_id, bucket, status, manual, next_attempt_at, lease_expires_at, reason,
		attempt_count, lapses, manual_retry, original_scheduled_at`
	const ended = `id, scheduled_at, event_id, status, reason, updated_at`
	o, q, x := schema+".occurrences", schema+".occurrence_queue", schema+".occurrence_ends"
	unfinished := ` WHERE status IN ('pending', 'retrying', 'dispatching', 'awaiting_ack', 'running')`
	endedOtherwise := ` WHERE status IN ('failed', 'missed', 'cancelled', 'skipped', 'timed_out')`
	var diffs []string
	err := admin.SelectContext(ctx, &diffs, `SELECT d::text FROM (
		(SELECT 'occurrence not queued' AS what, `+queued+`, fanout_json IS NOT NULL FROM `+o+unfinished+`
			EXCEPT SELECT 'occurrence not queued', `+queued+`, fanned FROM `+q+`)
		UNION ALL (SELECT 'queued, not an unfinished occurrence', `+queued+`, fanned FROM `+q+`
			EXCEPT SELECT 'queued, not an unfinished occurrence', `+queued+`, fanout_json IS NOT NULL
			FROM `+o+unfinished+`)) d
		UNION ALL SELECT e::text FROM (
		(SELECT 'ended occurrence not mirrored' AS what, `+ended+` FROM `+o+endedOtherwise+`
			EXCEPT SELECT 'ended occurrence not mirrored', `+ended+` FROM `+x+`)
		UNION ALL (SELECT 'ended mirror without its occurrence', `+ended+` FROM `+x+`
			EXCEPT SELECT 'ended mirror without its occurrence', `+ended+` FROM `+o+endedOtherwise+`)) e
		LIMIT 10`)
	if err != nil {
		t.Errorf("compare the mirrors of occurrences: %v", err)
		return
	}
	for _, d := range diffs {
		t.Errorf("mirrors of occurrences out of step: %s", d)
	}
}
