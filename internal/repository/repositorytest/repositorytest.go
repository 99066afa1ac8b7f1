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
	"path/filepath"
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
	schemaURL := PostgresSchema(t)
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
	schema := "qtest_" + randomHex(8)
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		_ = admin.Close()
		t.Fatalf("create schema: %v", err)
	}
	// Held for the whole test, the admin pool keeps no idle connection:
	// two copies of the suite side by side run near max_connections.
	admin.SetMaxIdleConns(0)
	t.Cleanup(func() {
		_, _ = admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		_ = admin.Close()
	})
	u, err := url.Parse(PostgresURL())
	if err != nil {
		t.Fatalf("parse test database url: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
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
