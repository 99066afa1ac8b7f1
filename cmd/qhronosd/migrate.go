package main

import (
	"context"
	"fmt"
	"io"
)

// migrate applies pending migrations (up) or lists them (status).
func migrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	action := "up"
	if len(args) > 0 && (args[0] == "up" || args[0] == "status") {
		action, args = args[0], args[1:]
	}
	b, err := boot(ctx, args, stderr)
	if err != nil {
		return err
	}
	defer b.close()
	if action == "up" {
		n, err := b.store.Migrate(ctx)
		if err != nil {
			return err
		}
		_, _ = fmt.Fprintf(stdout, "applied %d migration(s) to %s\n", n, b.store.Backend())
		return nil
	}
	ms, err := b.store.Migrations(ctx)
	if err != nil {
		return err
	}
	for _, m := range ms {
		state := "pending"
		if m.AppliedAt != nil {
			state = "applied " + m.AppliedAt.Format("2006-01-02T15:04:05Z")
		}
		_, _ = fmt.Fprintf(stdout, "%04d  %-28s %s\n", m.Version, m.Name, state)
	}
	return nil
}
