package repository

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/qhronos/qhronos/internal/model"
)

func TestMapErrSortsConnectionFailuresFromAnswers(t *testing.T) {
	t.Parallel()
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	tests := []struct {
		name string
		d    *dialect
		err  error
		want error // nil: none of the sentinels
	}{
		{"no rows", postgresDialect, sql.ErrNoRows, model.ErrNotFound},
		{"bad connection", postgresDialect, driver.ErrBadConn, model.ErrUnavailable},
		{"connection refused", postgresDialect, fmt.Errorf("query: %w", refused), model.ErrUnavailable},
		{"connection reset", postgresDialect, syscall.ECONNRESET, model.ErrUnavailable},
		{"pool closed", sqliteDialect, errors.New("sql: database is closed"), model.ErrUnavailable},
		{"server shutting down", postgresDialect, &pgconn.PgError{Code: "57P01"}, model.ErrUnavailable},
		{"connection exception", postgresDialect, &pgconn.PgError{Code: "08006"}, model.ErrUnavailable},
		{"unique violation", postgresDialect, &pgconn.PgError{Code: "23505"}, model.ErrConflict},
		{"malformed uuid", postgresDialect, &pgconn.PgError{Code: "22P02"}, model.ErrNotFound},
		{"sqlite unique", sqliteDialect, errors.New("UNIQUE constraint failed: events.id"), model.ErrConflict},
		{"sqlite locked", sqliteDialect, errors.New("database is locked (5) (SQLITE_BUSY)"), model.ErrUnavailable},
		{"query deadline", postgresDialect, fmt.Errorf("timeout: %w", context.DeadlineExceeded), nil},
		{"syntax error", postgresDialect, &pgconn.PgError{Code: "42601"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.d.mapErr(tt.err)
			for _, sentinel := range []error{model.ErrNotFound, model.ErrConflict, model.ErrUnavailable} {
				if is := errors.Is(got, sentinel); is != (sentinel == tt.want) {
					t.Errorf("mapErr(%v) = %v: errors.Is(%v) = %v, want %v", tt.err, got, sentinel, is, !is)
				}
			}
		})
	}
}

func TestStatusSQLRendersTheNamedSets(t *testing.T) {
	t.Parallel()
	tests := []struct{ template, want string }{
		// The text of the partial indexes' predicates in migrations/postgres.
		{"status IN {waiting}", "status IN ('pending', 'retrying')"},
		{"status IN {held}", "status IN ('dispatching', 'awaiting_ack', 'running')"},
		{"status IN {finished}", "status IN ('completed', 'failed', 'missed', 'cancelled', 'skipped', 'timed_out')"},
		{"status IN {unfinished}", "status IN ('pending', 'retrying', 'dispatching', 'awaiting_ack', 'running')"},
		{"status = {dispatching} AND e.status = {active}", "status = 'dispatching' AND e.status = 'active'"},
	}
	for _, tt := range tests {
		if got := statusSQL(tt.template); got != tt.want {
			t.Errorf("statusSQL(%q) = %q, want %q", tt.template, got, tt.want)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("statusSQL with an unknown token did not panic")
		}
	}()
	statusSQL("status = {runing}")
}
