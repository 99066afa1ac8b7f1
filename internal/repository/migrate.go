package repository

import (
	"context"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/qhronos/qhronos/migrations"
)

// Migration is one embedded schema step.
type Migration struct {
	Version   int
	Name      string
	AppliedAt *time.Time
}

// Migrations lists the embedded migrations of the store's backend with the
// time each was applied, if it was.
// It only reads: a database never migrated lists every one as pending.
func (s *Store) Migrations(ctx context.Context) ([]Migration, error) {
	all, err := embedded(s.d.migrations)
	if err != nil {
		return nil, err
	}
	applied := map[int]time.Time{}
	var exists bool
	if err := s.get(ctx, &exists, s.d.migrationsTableExists); err != nil {
		return nil, fmt.Errorf("look for schema_migrations: %w", err)
	}
	if exists {
		if applied, err = s.appliedMigrations(ctx); err != nil {
			return nil, err
		}
	}
	out := make([]Migration, 0, len(all))
	for _, m := range all {
		if at, ok := applied[m.version]; ok {
			at := at.UTC()
			out = append(out, Migration{Version: m.version, Name: m.name, AppliedAt: &at})
			continue
		}
		out = append(out, Migration{Version: m.version, Name: m.name})
	}
	return out, nil
}

// Migrate applies every pending migration, each in its own transaction.
// Concurrent callers against one PostgreSQL schema serialize on an advisory
// lock, so the schema is applied once.
func (s *Store) Migrate(ctx context.Context) (applied int, err error) {
	all, err := embedded(s.d.migrations)
	if err != nil {
		return 0, err
	}
	unlock, err := s.migrationLock(ctx)
	if err != nil {
		return 0, err
	}
	defer unlock()
	if err := s.ensureMigrationsTable(ctx); err != nil {
		return 0, err
	}
	done, err := s.appliedMigrations(ctx)
	if err != nil {
		return 0, err
	}
	for _, m := range all {
		if _, ok := done[m.version]; ok {
			continue
		}
		err := s.WithTx(ctx, func(tx *Store) error {
			if _, err := tx.q.ExecContext(ctx, m.sql); err != nil {
				return err
			}
			_, err := tx.exec(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
				m.version, m.name, tx.ts(time.Now()))
			return err
		})
		if err != nil {
			return applied, fmt.Errorf("apply migration %s: %w", m.name, err)
		}
		applied++
	}
	return applied, nil
}

type embeddedMigration struct {
	version int
	name    string
	sql     string
}

func embedded(dir string) ([]embeddedMigration, error) {
	entries, err := fs.ReadDir(migrations.FS, dir)
	if err != nil {
		return nil, fmt.Errorf("read embedded migrations: %w", err)
	}
	var out []embeddedMigration
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		prefix, _, _ := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(prefix)
		if err != nil {
			return nil, fmt.Errorf("migration %s: name must start with a number", e.Name())
		}
		body, err := fs.ReadFile(migrations.FS, dir+"/"+e.Name())
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", e.Name(), err)
		}
		out = append(out, embeddedMigration{version: v, name: strings.TrimSuffix(e.Name(), ".sql"), sql: string(body)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	return out, nil
}

func (s *Store) ensureMigrationsTable(ctx context.Context) error {
	const q = `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    integer PRIMARY KEY,
		name       text NOT NULL,
		applied_at TIMESTAMP NOT NULL)`
	if _, err := s.q.ExecContext(ctx, q); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	return nil
}

func (s *Store) appliedMigrations(ctx context.Context) (map[int]time.Time, error) {
	var rows []struct {
		Version   int       `db:"version"`
		AppliedAt time.Time `db:"applied_at"`
	}
	if err := s.selectAll(ctx, &rows, `SELECT version, applied_at FROM schema_migrations`); err != nil {
		return nil, fmt.Errorf("read schema_migrations: %w", err)
	}
	out := make(map[int]time.Time, len(rows))
	for _, r := range rows {
		out[r.Version] = r.AppliedAt
	}
	return out, nil
}

// migrationLock serializes migrators. PostgreSQL: a session advisory lock
// keyed by the current schema, held on one pinned connection. SQLite: the
// data directory lock already guarantees one process.
func (s *Store) migrationLock(ctx context.Context) (func(), error) {
	if s.d.lockSQL == "" {
		return func() {}, nil
	}
	conn, err := s.db.Connx(ctx)
	if err != nil {
		return nil, fmt.Errorf("migration lock: %w", err)
	}
	if _, err := conn.ExecContext(ctx, s.d.lockSQL); err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("migration lock: %w", err)
	}
	return func() {
		_, _ = conn.ExecContext(context.Background(), s.d.unlockSQL)
		_ = conn.Close()
	}, nil
}
