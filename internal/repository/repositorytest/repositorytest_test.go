package repositorytest

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
)

// A test server whose connection slots are all taken for a moment (two
// copies of the suite side by side) is waited for, not taken for a missing
// server: the test runs instead of skipping. Here a role's connection
// limit gives the same SQLSTATE 53300 as max_connections.
func TestPostgresSchemaWaitsForAConnectionSlot(t *testing.T) {
	ctx := context.Background()
	admin := adminDB(t)
	role := "qtest_role_" + randomHex(6)
	for _, q := range []string{`CREATE ROLE ` + role + ` LOGIN CONNECTION LIMIT 1`,
		`GRANT CREATE ON DATABASE ` + databaseOf(t) + ` TO ` + role} {
		if _, err := admin.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_, _ = admin.ExecContext(context.Background(), `DROP OWNED BY `+role)
		_, _ = admin.ExecContext(context.Background(), `DROP ROLE `+role)
	})
	u, err := url.Parse(PostgresURL())
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	holderDB, err := sqlx.Open("pgx", u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer holderDB.Close()
	if err := holderDB.PingContext(ctx); err != nil {
		t.Fatalf("the role's one slot: %v", err)
	}
	t.Setenv("QHRONOS_TEST_DATABASE_URL", u.String())

	refused := make(chan struct{})
	var once sync.Once
	slotRefused = func(error) { once.Do(func() { close(refused) }) }
	t.Cleanup(func() { slotRefused = nil })

	ran := false
	t.Run("while the slot is taken", func(t *testing.T) {
		// Freed once the schema's connection was refused.
		go func() {
			select {
			case <-refused:
			case <-time.After(time.Minute):
			}
			_ = holderDB.Close() // the pool's one connection
		}()
		if PostgresSchema(t) != "" {
			ran = true
		}
	})
	if !ran {
		t.Fatal("the test skipped or failed on a server whose slots were taken for half a second")
	}
}

// adminDB is a pool on the test server's admin URL, closed at cleanup.
func adminDB(t *testing.T) *sqlx.DB {
	t.Helper()
	admin, err := sqlx.Open("pgx", PostgresURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Close() })
	if err := admin.PingContext(context.Background()); err != nil {
		Unavailable(t, "PostgreSQL", err)
	}
	return admin
}

func databaseOf(t *testing.T) string {
	u, err := url.Parse(PostgresURL())
	if err != nil {
		t.Fatal(err)
	}
	if db := u.Path; len(db) > 1 {
		return db[1:]
	}
	return "postgres"
}

// Each SQLite store is its own copy of the migrated file: every migration
// shows as applied, and what one test writes no other store sees.
func TestSQLiteStoresAreMigratedAndApart(t *testing.T) {
	ctx := context.Background()
	first, second := SQLite(t), SQLite(t)
	migrations, err := first.Migrations(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(migrations) == 0 {
		t.Fatal("no migrations listed")
	}
	for _, m := range migrations {
		if m.AppliedAt == nil {
			t.Errorf("migration %d %s is pending on a fresh store", m.Version, m.Name)
		}
	}
	now := time.Now().UTC().Truncate(time.Second)
	c := &model.Calendar{ID: "3f0c2b0e-8a55-4a8e-9d43-1d0b7c1f9a01", Name: "holidays", Timezone: "UTC",
		Dates: []string{"2026-12-25"}, Version: 1, CreatedAt: now, UpdatedAt: now}
	if err := first.CreateCalendar(ctx, c); err != nil {
		t.Fatal(err)
	}
	if _, err := first.GetCalendar(ctx, c.ID); err != nil {
		t.Fatalf("the store that wrote it: %v", err)
	}
	if _, err := second.GetCalendar(ctx, c.ID); !errors.Is(err, model.ErrNotFound) {
		t.Fatalf("another store: got %v, want ErrNotFound", err)
	}
	if _, err := SQLite(t).GetCalendar(ctx, c.ID); !errors.Is(err, model.ErrNotFound) {
		t.Fatalf("a store opened after the write: got %v, want ErrNotFound", err)
	}
}

// A schema filled from the template is the schema Migrate makes: the same
// columns, indexes, constraints, triggers, functions, partitions, sequences
// and rows, and every migration listed as applied.
func TestMigratedPostgresSchemaIsWhatMigrateMakes(t *testing.T) {
	ctx := context.Background()
	if _, err := postgresTemplate(ctx); err != nil {
		Unavailable(t, "pg_dump", err)
	}
	for {
		// A migration makes the weekly partitions around its week: a week
		// that begins between the template's migration and the other's
		// changes them by design, and the comparison is made again.
		week := weekOf(time.Now())
		want, got := describeSchema(t, migratedSchema(t)), describeSchema(t, copiedSchema(t))
		if weekOf(time.Now()) != week {
			continue
		}
		if len(want) < 100 {
			t.Fatalf("the migrated schema describes as %d lines; the description misses objects", len(want))
		}
		wantSet, gotSet := map[string]bool{}, map[string]bool{}
		for _, l := range want {
			wantSet[l] = true
		}
		for _, l := range got {
			gotSet[l] = true
			if !wantSet[l] {
				t.Errorf("only in the copy: %s", l)
			}
		}
		for _, l := range want {
			if !gotSet[l] {
				t.Errorf("only in the migrated schema: %s", l)
			}
		}
		return
	}
}

// A store on MigratedPostgresSchema lists every migration as applied.
func TestMigratedPostgresSchemaHasEveryMigration(t *testing.T) {
	ctx := context.Background()
	s := open(t, MigratedPostgresSchema(t))
	migrations, err := s.Migrations(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range migrations {
		if m.AppliedAt == nil {
			t.Errorf("migration %d %s is pending", m.Version, m.Name)
		}
	}
	if applied, err := s.Migrate(ctx); err != nil || applied != 0 {
		t.Fatalf("Migrate applied %d (%v), want 0", applied, err)
	}
}

// weekOf is the Monday (UTC) that starts t's week, the partitions' unit.
func weekOf(t time.Time) time.Time {
	day := t.UTC().Truncate(24 * time.Hour)
	return day.AddDate(0, 0, -((int(day.Weekday()) + 6) % 7))
}

func open(t *testing.T, schemaURL string) *repository.Store {
	t.Helper()
	s, err := repository.OpenPostgres(context.Background(), schemaURL,
		repository.Options{MaxOpenConns: 4, ConnectTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// migratedSchema is a fresh schema that Migrate filled.
func migratedSchema(t *testing.T) string {
	t.Helper()
	u := PostgresSchema(t)
	if _, err := open(t, u).Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return u
}

// copiedSchema is a fresh schema filled from a template made now (not the
// process's, which may be from an earlier week).
func copiedSchema(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	dump, err := dumpMigratedSchema(ctx)
	if err != nil {
		t.Fatal(err)
	}
	u := PostgresSchema(t)
	admin, schema := onSchema(t, u)
	defer admin.Close()
	if err := replayTemplate(ctx, admin, schema, dump); err != nil {
		t.Fatal(err)
	}
	return u
}

// onSchema opens a pool on the schema its URL uses and names that schema.
func onSchema(t *testing.T, schemaURL string) (*sqlx.DB, string) {
	t.Helper()
	db, err := sqlx.Open("pgx", schemaURL)
	if err != nil {
		t.Fatal(err)
	}
	var schema string
	if err := db.Get(&schema, `SELECT current_schema()`); err != nil {
		_ = db.Close()
		t.Fatal(err)
	}
	return db, schema
}

// describeSchema lists the objects and rows of the schema its URL uses,
// one line each, its own name left out.
func describeSchema(t *testing.T, schemaURL string) []string {
	t.Helper()
	db, schema := onSchema(t, schemaURL)
	defer db.Close()
	var lines []string
	for _, q := range []string{
		`SELECT 'column ' || table_name || '.' || column_name || ' ' || data_type || ' null=' || is_nullable
			|| ' default=' || COALESCE(column_default, '-')
			FROM information_schema.columns WHERE table_schema = $1`,
		`SELECT 'index ' || indexdef FROM pg_indexes WHERE schemaname = $1`,
		`SELECT 'constraint ' || c.conrelid::regclass::text || ' ' || c.conname || ' ' || pg_get_constraintdef(c.oid)
			FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace WHERE n.nspname = $1`,
		`SELECT 'trigger ' || pg_get_triggerdef(g.oid) FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid
			JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND NOT g.tgisinternal`,
		`SELECT 'function ' || pg_get_functiondef(p.oid) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
			WHERE n.nspname = $1`,
		`SELECT 'partition ' || i.inhrelid::regclass::text || ' of ' || i.inhparent::regclass::text || ' '
			|| COALESCE(pg_get_expr(c.relpartbound, c.oid), '-')
			FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE n.nspname = $1`,
		`SELECT 'sequence ' || sequencename || ' ' || COALESCE(last_value::text, 'unused')
			FROM pg_sequences WHERE schemaname = $1`,
		`SELECT 'relation ' || c.relname || ' ' || c.relkind::text || ' ' || array_to_string(COALESCE(c.reloptions, '{}'), ',')
			FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1`,
	} {
		var got []string
		if err := db.Select(&got, q, schema); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		lines = append(lines, got...)
	}
	var tables []string
	if err := db.Select(&tables, `SELECT tablename FROM pg_tables WHERE schemaname = $1`, schema); err != nil {
		t.Fatal(err)
	}
	for _, table := range tables {
		if table == "schema_migrations" { // applied_at differs
			continue
		}
		var rows string
		q := `SELECT count(*) || ' ' || COALESCE(md5(string_agg(t::text, ',' ORDER BY t::text)), '-') FROM ` + table + ` t`
		if err := db.Get(&rows, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		lines = append(lines, "rows "+table+" "+rows)
	}
	var versions []string
	if err := db.Select(&versions, `SELECT 'migration ' || version || ' ' || name FROM schema_migrations`); err != nil {
		t.Fatal(err)
	}
	lines = append(lines, versions...)
	for k, l := range lines {
		lines[k] = strings.ReplaceAll(l, schema, "<schema>")
	}
	return lines
}

// Schemas a killed test process left behind are dropped by a later
// process once they are older than any test runs; those of tests still
// running, and schemas not named by this package, stay.
func TestLeftSchemasAreDropped(t *testing.T) {
	ctx := context.Background()
	admin := adminDB(t)
	now := time.Now()
	left := schemaName(now.Add(-schemaLifetime - time.Minute))
	young := schemaName(now.Add(-schemaLifetime + time.Minute))
	other := "qtest_other_" + randomHex(4)
	for _, name := range []string{left, young, other} {
		if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+name+"; CREATE TABLE "+name+".t (x int)"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _, _ = admin.ExecContext(context.Background(), "DROP SCHEMA IF EXISTS "+name+" CASCADE") })
	}
	dropLeftSchemas(ctx, admin, now)
	exists := func(name string) bool {
		var n int
		if err := admin.GetContext(ctx, &n, `SELECT count(*) FROM pg_namespace WHERE nspname = $1`, name); err != nil {
			t.Fatal(err)
		}
		return n == 1
	}
	if exists(left) {
		t.Errorf("%s, made %s ago, is still there", left, schemaLifetime+time.Minute)
	}
	if !exists(young) {
		t.Errorf("%s, made %s ago, was dropped", young, schemaLifetime-time.Minute)
	}
	if !exists(other) {
		t.Errorf("%s, not a name this package makes, was dropped", other)
	}
}
