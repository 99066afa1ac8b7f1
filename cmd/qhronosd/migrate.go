package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/qhronos/qhronos/internal/config"
	"github.com/qhronos/qhronos/internal/repository"
)

// migrate applies pending migrations (up) or lists them (status).
func migrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	action := "up"
	if len(args) > 0 && (args[0] == "up" || args[0] == "status") {
		action, args = args[0], args[1:]
	}
	if action == "status" {
		return migrationStatus(ctx, args, stdout)
	}
	b, err := boot(ctx, args, stderr)
	if err != nil {
		return err
	}
	defer b.close()
	n, err := b.store.Migrate(ctx)
	if err != nil {
		return err
	}
	_, _ = fmt.Fprintf(stdout, "applied %d migration(s) to %s\n", n, b.store.Backend())
	return nil
}

// migrationStatus lists the migrations and whether each is applied. It only
// reads, and needs only the database: no secrets, no lock on the data
// directory (it runs beside the server), and nothing is created — a data
// directory without a database lists every migration as pending.
func migrationStatus(ctx context.Context, args []string, stdout io.Writer) error {
	cfg, _, err := config.Load(args, os.Getenv)
	if err != nil {
		return err
	}
	var store *repository.Store
	if cfg.Production() {
		store, err = repository.OpenPostgres(ctx, cfg.Database.URL, repository.Options{
			MaxOpenConns: 1, ConnectTimeout: cfg.Database.ConnectTimeout, ApplicationName: "qhronosd-migrate-status"})
		if err != nil {
			return fmt.Errorf("database.url: %s", oneLine(err))
		}
	} else {
		store, err = repository.OpenSQLiteReadOnly(ctx, cfg.Server.DataDir)
		if errors.Is(err, repository.ErrNoDatabase) {
			_, _ = fmt.Fprintf(stdout, "no database in %s yet (the server or `qhronosd migrate up` creates it)\n",
				cfg.Server.DataDir)
			ms, err := repository.KnownMigrations(repository.SQLite)
			if err != nil {
				return err
			}
			printMigrations(stdout, ms)
			return nil
		}
		if err != nil {
			return fmt.Errorf("server.data_dir %s: %w", cfg.Server.DataDir, err)
		}
	}
	defer store.Close()
	ms, err := store.Migrations(ctx)
	if err != nil {
		return err
	}
	printMigrations(stdout, ms)
	return nil
}

func printMigrations(w io.Writer, ms []repository.Migration) {
	for _, m := range ms {
		state := "pending"
		if m.AppliedAt != nil {
			state = "applied " + m.AppliedAt.Format("2006-01-02T15:04:05Z")
		}
		_, _ = fmt.Fprintf(w, "%04d  %-28s %s\n", m.Version, m.Name, state)
	}
}
