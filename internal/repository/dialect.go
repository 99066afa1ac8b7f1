package repository

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jmoiron/sqlx"

	"github.com/qhronos/qhronos/internal/model"
)

// dialect is everything the SQL of this package writes differently per
// backend, chosen once when the store opens. Queries are written once with
// ? placeholders and ask the dialect for the few fragments and encodings
// that differ; nothing else looks at which backend runs.
type dialect struct {
	backend Backend
	// migrations is the directory of the embedded migrations.
	migrations string
	// bind is sqlx's placeholder style the ? placeholders are rebound to.
	bind int
	// skipLocked ends a row pick that concurrent writers must not share.
	// PostgreSQL locks the picked rows and skips locked ones; SQLite has one
	// writer at a time (_txlock=immediate), which gives the same guarantee.
	skipLocked string
	// forUpdate ends a read whose row the transaction then writes: it waits
	// for concurrent writers of the row (SQLite's one writer already does).
	forUpdate string
	// instant encodes a UTC instant as a query argument.
	instant func(time.Time) any
	// cast types a placeholder inside a VALUES list whose types the
	// database cannot infer ("?::uuid"); SQLite needs no type.
	cast func(sqlType string) string
	// jsonStrings expands a JSON array of strings column into rows j(value).
	jsonStrings func(column string) string
	// rowID names the physical row id, for tables without a key.
	rowID string
	// inPick is "column IN (pick)" for a subquery of row ids.
	inPick func(column, pick string) string
	// minUUID sorts before every id ("" compares as a uuid on PostgreSQL).
	minUUID string
	// clockSQL reads the database's clock; empty when the database runs in
	// this process and shares its clock.
	clockSQL string
	// lockSQL/unlockSQL take and release a session lock serializing
	// migrators of one schema; empty when the data directory lock does.
	lockSQL, unlockSQL string
	// keyLockSQL takes a lock held until the transaction ends on one
	// event key (its argument); empty when the one writer already
	// serializes transactions.
	keyLockSQL string
	// writableCTEs: data-modifying statements may be nested in WITH, so an
	// event and its rows go in one statement.
	writableCTEs bool
	// returnsFromValues: an UPDATE … FROM a VALUES list may RETURN the
	// list's columns (SQLite's RETURNING names only the updated table).
	returnsFromValues bool
	// driverErr maps the driver's own errors (constraint codes and the like);
	// the rest of mapErr is the same for both.
	driverErr func(error) error
	// migrationsTableExists answers whether schema_migrations exists
	// (one boolean), without creating it.
	migrationsTableExists string
}

// instantLayout is fixed-width so that SQLite's text comparison orders
// instants correctly; microsecond precision as stored by PostgreSQL.
const instantLayout = "2006-01-02T15:04:05.000000Z"

const migrationLockKey = `hashtext('qhronos-migrate:' || current_schema())`

var postgresDialect = &dialect{
	backend:               Postgres,
	migrations:            "postgres",
	migrationsTableExists: `SELECT to_regclass('schema_migrations') IS NOT NULL`,
	bind:                  sqlx.DOLLAR,
	skipLocked:            " FOR UPDATE SKIP LOCKED",
	forUpdate:             " FOR UPDATE",
	instant:               func(t time.Time) any { return t.UTC() },
	cast:                  func(sqlType string) string { return "?::" + sqlType },
	jsonStrings: func(column string) string {
		return `jsonb_array_elements_text(` + column + `::jsonb) AS j(value)`
	},
	rowID:             "ctid",
	inPick:            func(column, pick string) string { return column + ` = ANY(ARRAY(` + pick + `))` },
	minUUID:           "00000000-0000-0000-0000-000000000000",
	clockSQL:          `SELECT clock_timestamp()`,
	lockSQL:           `SELECT pg_advisory_lock(` + migrationLockKey + `)`,
	unlockSQL:         `SELECT pg_advisory_unlock(` + migrationLockKey + `)`,
	keyLockSQL:        `SELECT pg_advisory_xact_lock(hashtextextended(?, 29))`,
	writableCTEs:      true,
	returnsFromValues: true,
	driverErr:         postgresErr,
}

var sqliteDialect = &dialect{
	backend:               SQLite,
	migrations:            "sqlite",
	migrationsTableExists: `SELECT COUNT(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`,
	bind:                  sqlx.QUESTION,
	instant:               func(t time.Time) any { return t.UTC().Format(instantLayout) },
	cast:                  func(string) string { return "?" },
	jsonStrings:           func(column string) string { return `json_each(` + column + `) AS j` },
	rowID:                 "rowid",
	inPick:                func(column, pick string) string { return column + ` IN (` + pick + `)` },
	minUUID:               "",
	writableCTEs:          false,
	returnsFromValues:     false,
	driverErr:             sqliteErr,
}

// rebind turns ? placeholders into the dialect's form. Rebound queries
// are remembered (a bounded set: the hot paths repeat a few shapes, and
// rebinding a create's long statement on every call showed in profiles).
func (d *dialect) rebind(query string) string {
	if d.bind == sqlx.QUESTION {
		return query
	}
	if q, ok := rebound.Load(query); ok {
		return q.(string)
	}
	q := sqlx.Rebind(d.bind, query)
	if len(query) <= maxRememberedQuery && reboundCount.Add(1) <= maxRememberedQueries {
		rebound.Store(query, q)
	}
	return q
}

// The remembered rebound queries; once full, further shapes are rebound
// every time. Only PostgreSQL rebinds, so one set serves every store.
var (
	rebound      sync.Map // query → rebound query
	reboundCount atomic.Int64
)

const (
	maxRememberedQueries = 2048
	maxRememberedQuery   = 16 << 10
)

// postgresErr maps PostgreSQL error codes.
func postgresErr(err error) error {
	pgErr, ok := asPgError(err)
	if !ok {
		return err
	}
	switch {
	case pgErr.Code == "23505": // unique_violation
		return fmt.Errorf("%w: %s", model.ErrConflict, pgErr.ConstraintName)
	case pgErr.Code == "22P02": // invalid_text_representation, e.g. a malformed uuid
		return model.ErrNotFound
	case pgErr.Code == "53100": // disk_full
		return fmt.Errorf("%w: %w", model.ErrStorageFull, err)
	case strings.HasPrefix(pgErr.Code, "08"), // connection_exception
		pgErr.Code == "57P01", pgErr.Code == "57P02", pgErr.Code == "57P03", // shutdown, cannot connect now
		pgErr.Code == "53300": // too_many_connections: a request retried later succeeds (503, not 500)
		return unavailable(err)
	}
	return err
}

// sqliteErr maps SQLite's errors. "database is locked" (busy_timeout ran out
// behind another writer) is unavailable too: the same request succeeds when
// retried, so the API answers 503, as it always did.
func sqliteErr(err error) error {
	if strings.Contains(err.Error(), "UNIQUE constraint failed") {
		return fmt.Errorf("%w: %s", model.ErrConflict, err.Error())
	}
	if strings.Contains(err.Error(), "database is locked") {
		return unavailable(err)
	}
	var coded interface{ Code() int }
	if errors.As(err, &coded) && coded.Code()&0xff == sqliteFull {
		return fmt.Errorf("%w: %w", model.ErrStorageFull, err)
	}
	return err
}

func asPgError(err error) (*pgconn.PgError, bool) {
	var pgErr *pgconn.PgError
	ok := errors.As(err, &pgErr)
	return pgErr, ok
}

// mapErr turns driver errors into model's sentinel errors: no rows is
// ErrNotFound, a connection failure wraps ErrUnavailable (keeping the
// cause), and the dialect maps its own codes.
func (d *dialect) mapErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return model.ErrNotFound
	}
	if errors.Is(err, model.ErrUnavailable) {
		return err
	}
	if connectionFailed(err) {
		return unavailable(err)
	}
	return d.driverErr(err)
}

func unavailable(err error) error { return fmt.Errorf("%w: %w", model.ErrUnavailable, err) }

// errDBClosed is database/sql's unexported answer once the pool is closed.
const errDBClosed = "sql: database is closed"

// connectionFailed reports whether err says the database could not be
// reached or the connection broke, as opposed to an answer it gave. A
// context that ends while connecting is a connection failure (pgconn wraps it
// in a ConnectError); one that ends a running query is the caller's.
func connectionFailed(err error) bool {
	var connectErr *pgconn.ConnectError
	if errors.As(err, &connectErr) {
		return true
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var opErr *net.OpError
	switch {
	case errors.Is(err, driver.ErrBadConn), errors.Is(err, sql.ErrConnDone),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.ErrUnexpectedEOF), errors.As(err, &opErr):
		return true
	}
	return err.Error() == errDBClosed
}

// typedRow is one VALUES row of placeholders cast to sqlTypes.
func (d *dialect) typedRow(sqlTypes ...string) string {
	parts := make([]string, len(sqlTypes))
	for i, t := range sqlTypes {
		parts[i] = d.cast(t)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// sqliteFull is SQLITE_FULL, the primary code of "database or disk is full"
// (also of a database at its max_page_count).
const sqliteFull = 13
