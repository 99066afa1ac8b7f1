package repositorytest

import (
	"context"
	"errors"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/qhronos/qhronos/internal/model"
)

// A test server whose connection slots are all taken for a moment (two
// copies of the suite side by side) is waited for, not taken for a missing
// server: the test runs instead of skipping. Here a role's connection
// limit gives the same SQLSTATE 53300 as max_connections.
func TestPostgresSchemaWaitsForAConnectionSlot(t *testing.T) {
	ctx := context.Background()
	admin, err := sqlx.Open("pgx", PostgresURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Close() })
	if err := admin.PingContext(ctx); err != nil {
		Unavailable(t, "PostgreSQL", err)
	}
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
