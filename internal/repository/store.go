package repository

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	"github.com/jmoiron/sqlx"
	"github.com/qhronos/qhronos/internal/model"
	_ "modernc.org/sqlite" // database/sql driver "sqlite"
)

// Backend names a storage backend.
type Backend string

const (
	SQLite   Backend = "sqlite"
	Postgres Backend = "postgres"
)

// Store is the repository for both backends. A Store returned by WithTx runs
// every method inside that transaction.
type Store struct {
	db *sqlx.DB
	q  sqlx.ExtContext // db or a transaction
	d  *dialect
	// asyncOutcomes: outcome transactions commit without waiting for the
	// WAL flush (Options.AsyncOutcomeCommit).
	asyncOutcomes bool
	// full remembers a write refused for lack of space (shared by the
	// store and its transactions), for /ready and /status.
	full *fullState
	// parts is the window of weekly partitions known to exist (PostgreSQL),
	// shared by the store and its transactions.
	parts *partitionWindow
	// conn is a PostgreSQL transaction's connection, for what database/sql
	// cannot send inside the transaction (COPY: see copyRows); nil
	// otherwise.
	conn *sqlx.Conn
	// stmts keeps the hot path's statements prepared (SQLite; nil on
	// PostgreSQL, whose driver caches them itself): see prepared.go.
	stmts *stmtCache
	// writer is the embedded SQLite's pool of one connection for
	// transactions, with its own statement cache (nil: transactions run on
	// db). SQLite has one writer at a time anyway; on one connection the
	// hot path's statements are prepared once instead of once per pooled
	// connection, and writers queue in the pool for their turn instead of
	// polling the file lock with busy_timeout's sleeps.
	writer *writerPool
	// keyed is PostgreSQL's pool for the hot path's statements by key: its
	// sessions plan as ByKey asks from their start, so those statements
	// need no transaction and no setting of their own (nil on SQLite, with
	// a small pool, or where the server did not take the settings: a
	// pooler in between). byKey marks a store on it.
	keyed *sqlx.DB
	byKey bool
}

// writerPool is a pool for transactions and the statements prepared on it.
type writerPool struct {
	db    *sqlx.DB
	stmts *stmtCache
}

// fullState is when a write last failed with model.ErrStorageFull; zero
// once a write succeeds again.
type fullState struct{ at atomic.Int64 }

// storageFullFor is how long a refused write keeps the store reported full
// without another: it recovers by itself once space returns, even when no
// write comes to prove it.
const storageFullFor = 30 * time.Second

// StorageFull reports whether a write failed for lack of space within the
// last storageFullFor and none succeeded since.
func (s *Store) StorageFull(now time.Time) bool {
	if s.full == nil {
		return false
	}
	at := s.full.at.Load()
	return at != 0 && now.Sub(time.UnixMicro(at)) < storageFullFor
}

// note maps a driver error and keeps the storage-full state: set by a
// refused write, cleared by a successful one.
func (s *Store) note(err error, write bool) error {
	err = s.d.mapErr(err)
	if s.full == nil {
		return err
	}
	switch {
	case errors.Is(err, model.ErrStorageFull):
		s.full.at.Store(time.Now().UnixMicro())
	case err == nil && write:
		s.full.at.Store(0)
	}
	return err
}

// Options tunes the connection pool.
type Options struct {
	MaxOpenConns   int
	ConnectTimeout time.Duration
	// ApplicationName tags PostgreSQL connections (pg_stat_activity), which
	// lets fault tests terminate exactly their own connections.
	ApplicationName string
	// AsyncOutcomeCommit sets synchronous_commit = off for the transactions
	// that record outcomes (database.async_outcome_commit).
	AsyncOutcomeCommit bool
	// IdleInTransaction, when set, has PostgreSQL end a session that sits
	// in an open transaction waiting for its client longer than this
	// (idle_in_transaction_session_timeout), unless the URL sets it. A
	// client cut off mid-transaction otherwise keeps its row locks until
	// the server's TCP keepalive notices (two hours by default), and the
	// rows it was recording stay out of every other instance's reach
	// (SKIP LOCKED) long after their leases lapsed.
	IdleInTransaction time.Duration
}

// SQLiteFile is the embedded database's file name in its data directory.
const SQLiteFile = "qhronos.db"

// OpenSQLite opens (creating if needed) the embedded database in dataDir.
func OpenSQLite(ctx context.Context, dataDir string) (*Store, error) {
	path := filepath.Join(dataDir, SQLiteFile)
	// _txlock=immediate takes the write lock at BEGIN, so concurrent
	// transactions wait on busy_timeout instead of failing to upgrade.
	dsn := "file:" + path + "?_txlock=immediate" +
		"&_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)" +
		"&_pragma=foreign_keys(on)&_pragma=synchronous(NORMAL)"
	db, err := sqlx.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	db.SetMaxOpenConns(4)
	// All four kept: a connection closed as surplus idle (database/sql keeps
	// two) is opened again in the next burst, its pragmas run again and its
	// page cache and prepared statements lost.
	db.SetMaxIdleConns(4)
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	if err := checkWritable(dataDir); err != nil {
		_ = db.Close()
		return nil, err
	}
	if err := incrementalAutoVacuum(ctx, db); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	// Opened after the file's mode is settled (incrementalAutoVacuum), with
	// the same settings: _txlock=immediate makes its BEGIN take the write
	// lock, which it then waits for only against writes outside a
	// transaction on the other pool.
	w, err := sqlx.Open("sqlite", dsn)
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	return &Store{db: db, q: db, d: sqliteDialect, full: &fullState{}, parts: &partitionWindow{}, stmts: newStmtCache(),
		writer: &writerPool{db: w, stmts: newStmtCache()}}, nil
}

// incrementalAutoVacuum makes the file run with auto_vacuum=INCREMENTAL, so
// that the archiver's PRAGMA incremental_vacuum after a purge gives the
// freed pages back to the file system. A new file takes the mode at once; a
// file created before (auto_vacuum=NONE) needs one VACUUM to switch, which
// rewrites it once, at the first start after the upgrade (it takes about as
// long as copying the file, and as much free disk again).
func incrementalAutoVacuum(ctx context.Context, db *sqlx.DB) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	var mode int
	if err := conn.QueryRowContext(ctx, `PRAGMA auto_vacuum`).Scan(&mode); err != nil {
		return fmt.Errorf("read auto_vacuum: %w", err)
	}
	const incremental = 2
	if mode == incremental {
		return nil
	}
	if _, err := conn.ExecContext(ctx, `PRAGMA auto_vacuum = INCREMENTAL`); err != nil {
		return fmt.Errorf("set auto_vacuum: %w", err)
	}
	if _, err := conn.ExecContext(ctx, `VACUUM`); err != nil {
		return fmt.Errorf("vacuum to switch auto_vacuum: %w", err)
	}
	return nil
}

// ErrNoDatabase is OpenSQLiteReadOnly's answer when the data directory
// holds no database yet.
var ErrNoDatabase = errors.New("no database yet")

// OpenSQLiteReadOnly opens the embedded database for reading only: it
// creates nothing (no directory, no file), takes no lock on the data
// directory and so works beside the server that holds it.
func OpenSQLiteReadOnly(ctx context.Context, dataDir string) (*Store, error) {
	path := filepath.Join(dataDir, SQLiteFile)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", path, ErrNoDatabase)
	}
	// A read-only open of a WAL database creates its -wal and -shm files
	// when they are absent. They are absent only when no process has the
	// database open (the server keeps them while it runs), so the file is
	// then read as immutable and nothing is created beside it.
	dsn := "file:" + path + "?mode=ro&_pragma=busy_timeout(10000)"
	if _, err := os.Stat(path + "-wal"); errors.Is(err, fs.ErrNotExist) {
		dsn = "file:" + path + "?mode=ro&immutable=1"
	}
	db, err := sqlx.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	return &Store{db: db, q: db, d: sqliteDialect, full: &fullState{}, parts: &partitionWindow{}}, nil
}

// KnownMigrations lists the migrations this binary carries for backend,
// all pending: the status of a database that does not exist yet.
func KnownMigrations(backend Backend) ([]Migration, error) {
	d := sqliteDialect
	if backend == Postgres {
		d = postgresDialect
	}
	all, err := embedded(d.migrations)
	if err != nil {
		return nil, err
	}
	out := make([]Migration, len(all))
	for i, m := range all {
		out[i] = Migration{Version: m.version, Name: m.name}
	}
	return out, nil
}

func checkWritable(dir string) error {
	f, err := os.CreateTemp(dir, ".write-check-*")
	if err != nil {
		return fmt.Errorf("data directory %s is not writable: %w", dir, err)
	}
	name := f.Name()
	_ = f.Close()
	return os.Remove(name)
}

// OpenPostgres connects to PostgreSQL at rawURL and verifies the connection
// within opts.ConnectTimeout.
func OpenPostgres(ctx context.Context, rawURL string, opts Options) (*Store, error) {
	dsn, err := postgresDSN(rawURL, opts)
	if err != nil {
		return nil, err
	}
	db, err := sqlx.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	keyedConns := keyedConns(opts.MaxOpenConns)
	if opts.MaxOpenConns > 0 {
		db.SetMaxOpenConns(opts.MaxOpenConns - keyedConns)
		db.SetMaxIdleConns(opts.MaxOpenConns - keyedConns)
	}
	db.SetConnMaxIdleTime(5 * time.Minute)
	timeout := opts.ConnectTimeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := AwaitPostgres(pctx, db, nil); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("connect to postgres: %w", redactErr(postgresDialect.mapErr(err), rawURL))
	}
	s := &Store{db: db, q: db, d: postgresDialect, asyncOutcomes: opts.AsyncOutcomeCommit, full: &fullState{},
		parts: &partitionWindow{}}
	if keyedConns > 0 {
		s.keyed = openKeyed(pctx, dsn, keyedConns)
	}
	return s, nil
}

// keyedConns is how many of a pool of maxOpen connections go to the keyed
// pool: two fifths, from a pool of 8 (smaller ones keep one pool and set
// the plan per transaction).
func keyedConns(maxOpen int) int {
	if maxOpen < 8 {
		return 0
	}
	return maxOpen * 2 / 5
}

// byKeySettings are ByKey's planner settings: lookups by key (no sequential
// or bitmap scans, no hash or merge joins, no parallel workers), each
// statement planned once per connection (see ByKey).
var byKeySettings = [][2]string{{"enable_seqscan", "off"}, {"enable_bitmapscan", "off"},
	{"enable_hashjoin", "off"}, {"enable_mergejoin", "off"}, {"max_parallel_workers_per_gather", "0"},
	{"plan_cache_mode", "force_generic_plan"}}

// planByKeySQL sets byKeySettings for the rest of a transaction. The values
// are arguments so that pgx prepares the statement once per connection:
// without any, it went as a simple query, parsed and planned on each of the
// hot path's transactions.
var planByKeySQL, planByKeyArgs = func() (string, []any) {
	sets, args := make([]string, len(byKeySettings)), make([]any, len(byKeySettings))
	for i, kv := range byKeySettings {
		sets[i], args[i] = "set_config('"+kv[0]+"', ?, true)", kv[1]
	}
	return `SELECT ` + strings.Join(sets, ", "), args
}()

// openKeyed opens the keyed pool of n connections: dsn with ByKey's
// settings as connection parameters. It returns nil, and ByKey sets them
// per transaction, when the server's sessions do not have them (a pooler
// in between ignores or refuses such parameters) or the pool cannot be
// checked.
func openKeyed(ctx context.Context, dsn string, n int) *sqlx.DB {
	u, err := url.Parse(dsn)
	if err != nil {
		return nil
	}
	q := u.Query()
	for _, kv := range byKeySettings {
		q.Set(kv[0], kv[1])
	}
	u.RawQuery = q.Encode()
	db, err := sqlx.Open("pgx", u.String())
	if err != nil {
		return nil
	}
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	// Kept however long they idle: closed after five idle minutes, as the
	// main pool's are, they were opened again (and their statements
	// planned again, WarmHotPath) in the first second of the next burst,
	// since the pool hands out its most recently used connection and the
	// quiet loop keeps only one or two of them busy (#36).
	db.SetConnMaxIdleTime(0)
	// Every connection opened (and checked) now, while the instance starts:
	// opened lazily, their backends would start in the middle of the first
	// burst, on the path of its first reads.
	conns := make([]*sqlx.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	for range n {
		c, err := db.Connx(ctx)
		if err != nil {
			_ = db.Close()
			return nil
		}
		conns = append(conns, c)
		if got, err := planSettings(ctx, c); err != nil || !plannedByKey(got) {
			_ = db.Close()
			return nil
		}
	}
	return db
}

// plannedByKey reports whether settings (planSettings) are ByKey's.
func plannedByKey(settings map[string]string) bool {
	for _, kv := range byKeySettings {
		if settings[kv[0]] != kv[1] {
			return false
		}
	}
	return true
}

// planSettings reads ByKey's planner settings as q's next statement sees
// them, in one statement.
func planSettings(ctx context.Context, q interface {
	QueryRowxContext(ctx context.Context, query string, args ...any) *sqlx.Row
}) (map[string]string, error) {
	names, cols := make([]any, len(byKeySettings)), make([]string, len(byKeySettings))
	for i, kv := range byKeySettings {
		names[i], cols[i] = kv[0], fmt.Sprintf("current_setting($%d)", i+1)
	}
	values := make([]string, len(byKeySettings))
	dest := make([]any, len(values))
	for i := range values {
		dest[i] = &values[i]
	}
	if err := q.QueryRowxContext(ctx, `SELECT `+strings.Join(cols, ", "), names...).Scan(dest...); err != nil {
		return nil, err
	}
	out := make(map[string]string, len(values))
	for i, kv := range byKeySettings {
		out[kv[0]] = values[i]
	}
	return out, nil
}

// AwaitPostgres verifies db's connection, waiting out, until ctx ends, a
// server that is there but turns connections away for now (every
// connection slot taken, or still starting up): instances started together
// with a busy or restarting database come up instead of failing, and so do
// tests beside a second copy of the suite. refused, when set, hears of each
// such refusal. A server that is not there fails at once.
func AwaitPostgres(ctx context.Context, db *sqlx.DB, refused func(error)) error {
	wait := 100 * time.Millisecond
	for {
		err := db.PingContext(ctx)
		pgErr, ok := asPgError(err)
		if err == nil || !ok || (pgErr.Code != "53300" && pgErr.Code != "57P03") {
			return err
		}
		if refused != nil {
			refused(err)
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, time.Second)
	}
}

// postgresDSN adds the connect timeout, the idle-in-transaction timeout and
// the application name to the URL.
func postgresDSN(rawURL string, opts Options) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" {
		return "", errors.New("must be a postgres:// URL with a host")
	}
	q := u.Query()
	if q.Get("connect_timeout") == "" {
		secs := int(opts.ConnectTimeout.Seconds())
		if secs <= 0 {
			secs = 5
		}
		q.Set("connect_timeout", fmt.Sprint(secs))
	}
	if opts.IdleInTransaction > 0 && q.Get("idle_in_transaction_session_timeout") == "" {
		q.Set("idle_in_transaction_session_timeout", fmt.Sprint(opts.IdleInTransaction.Milliseconds()))
	}
	if opts.ApplicationName != "" && q.Get("application_name") == "" {
		q.Set("application_name", opts.ApplicationName)
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// redactErr keeps a password in the URL out of error messages.
func redactErr(err error, rawURL string) error {
	u, perr := url.Parse(rawURL)
	if perr != nil || u.User == nil {
		return err
	}
	pw, ok := u.User.Password()
	if !ok || pw == "" || !strings.Contains(err.Error(), pw) {
		return err
	}
	msg := strings.ReplaceAll(err.Error(), pw, "xxxxx")
	if errors.Is(err, model.ErrUnavailable) {
		// The message already says so; keep the sentinel, drop the cause.
		return fmt.Errorf("%w%s", model.ErrUnavailable, strings.TrimPrefix(msg, model.ErrUnavailable.Error()))
	}
	return errors.New(msg)
}

// Backend reports which backend the store runs on.
func (s *Store) Backend() Backend { return s.d.backend }

// DB exposes the pool for health checks and tests.
func (s *Store) DB() *sqlx.DB { return s.db }

// TxDB is the pool transactions run on (the embedded SQLite's writer; DB
// elsewhere), for tests that set a connection's limits.
func (s *Store) TxDB() *sqlx.DB {
	if s.writer != nil {
		return s.writer.db
	}
	return s.db
}

// Close closes the pools.
func (s *Store) Close() error {
	err := closePool(s.db, s.stmts)
	if s.writer != nil {
		err = errors.Join(err, closePool(s.writer.db, s.writer.stmts))
	}
	if s.keyed != nil {
		err = errors.Join(err, s.keyed.Close())
	}
	return err
}

// closePool closes db and the statements prepared on it (stmts: none when
// nil).
func closePool(db *sqlx.DB, stmts *stmtCache) error {
	if stmts == nil {
		return db.Close()
	}
	stmts.close()
	err := db.Close() // a preparation waiting for a connection gives up
	stmts.wait()
	return err
}

// Ping checks the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }

// WithTx runs fn in one transaction, committed when fn returns nil.
func (s *Store) WithTx(ctx context.Context, fn func(tx *Store) error) error {
	if _, inTx := s.q.(*sqlx.Tx); inTx {
		return fn(s)
	}
	var conn *sqlx.Conn
	var tx *sqlx.Tx
	var err error
	if s.d == postgresDialect {
		// The transaction on a connection held by name, so that COPY can
		// reach the same session (database/sql's Tx does not expose it).
		if conn, err = s.db.Connx(ctx); err != nil {
			return fmt.Errorf("begin transaction: %w", s.d.mapErr(err))
		}
		defer conn.Close()
		tx, err = conn.BeginTxx(ctx, nil)
	}
	db, stmts := s.db, s.stmts
	if s.writer != nil {
		db, stmts = s.writer.db, s.writer.stmts
	}
	if conn == nil {
		tx, err = db.BeginTxx(ctx, nil)
	}
	if err != nil {
		return fmt.Errorf("begin transaction: %w", s.d.mapErr(err))
	}
	// The transaction's store prepares its statements on the pool the
	// transaction runs on (Tx.Stmt takes only statements of its own pool).
	if err := fn(&Store{db: db, q: tx, d: s.d, asyncOutcomes: s.asyncOutcomes, full: s.full, parts: s.parts, conn: conn,
		stmts: stmts, writer: s.writer, keyed: s.keyed, byKey: s.byKey}); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := s.note(tx.Commit(), true); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// ByKey runs fn in a transaction whose statements PostgreSQL plans as
// lookups by key: no sequential or bitmap scans, no hash or merge joins,
// no parallel workers (a batch of probes is done before they start).
// The hot path's statements each read or write a batch of rows named by id.
// Planned from statistics that lag a burst (autovacuum analyzes a table a
// minute after it grew, and never when it is off), PostgreSQL took them for
// a few rows of a small table: it hash-joined each batch of outcomes with
// every waiting row of the week and scanned all of events for each batch of
// bookkeeping, a cost per delivery that grew with the backlog. A probe per
// key costs the same whatever the statistics say. On SQLite, whose planner
// uses the primary key for such lists anyway, fn runs as is.
//
// The plan is also the generic one, made once per connection and kept.
// PostgreSQL otherwise weighs a plan made for each call's values against
// it, and for a statement over the partitioned tables with an id list
// (the check before firing, the outcomes) it kept planning each call: a
// millisecond for the check, 10–30 ms for the outcome statement, more
// database time than running them (#36: 4.3 s planning against 1.4 s
// running for 45,000 checks under a steady 1,500/s). With probes by key
// the generic plan is the custom one anyway, and it prunes the time
// slices as it runs.
//
// On the keyed pool, whose sessions have these settings from their start,
// fn runs without a transaction: each of its statements is one round trip
// instead of four (begin, settings, statement, commit), each a wake-up of
// a backend and of its caller on a busy machine (#36). fn's
// statements must then each stand alone: reads (under read committed a
// transaction gives each statement its own snapshot anyway) or single
// writes. Inside a transaction fn runs in it, with the settings for the
// rest of it.
func (s *Store) ByKey(ctx context.Context, fn func(tx *Store) error) error {
	if s.d.backend != Postgres || s.byKey {
		return fn(s)
	}
	if _, inTx := s.q.(*sqlx.Tx); !inTx && s.keyed != nil {
		return fn(s.onKeyed())
	}
	return s.ByKeyTx(ctx, fn)
}

// ByKeyTx is ByKey in one transaction (on the keyed pool when there is
// one).
func (s *Store) ByKeyTx(ctx context.Context, fn func(tx *Store) error) error {
	if _, inTx := s.q.(*sqlx.Tx); !inTx && s.keyed != nil && !s.byKey {
		return s.onKeyed().WithTx(ctx, fn)
	}
	return s.WithTx(ctx, func(tx *Store) error {
		if err := tx.planByKey(ctx); err != nil {
			return err
		}
		return fn(tx)
	})
}

// PlanSettings reads ByKey's planner settings as s's statements see them:
// in its transaction, or on a connection of its pool (for tests).
func (s *Store) PlanSettings(ctx context.Context) (map[string]string, error) {
	return planSettings(ctx, s.q)
}

// onKeyed is s on the keyed pool.
func (s *Store) onKeyed() *Store {
	return &Store{db: s.keyed, q: s.keyed, d: s.d, asyncOutcomes: s.asyncOutcomes, full: s.full, parts: s.parts,
		keyed: s.keyed, byKey: true}
}

// planByKey is ByKey's setting, for the rest of a PostgreSQL transaction
// (nothing on the keyed pool, whose sessions have it).
func (s *Store) planByKey(ctx context.Context) error {
	if s.d.backend != Postgres || s.byKey {
		return nil
	}
	_, err := s.exec(ctx, planByKeySQL, planByKeyArgs...)
	if err != nil {
		return fmt.Errorf("plan by key: %w", err)
	}
	return nil
}

func (s *Store) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	res, err := s.q.ExecContext(ctx, s.d.rebind(query), args...)
	return res, s.note(err, true)
}

func (s *Store) get(ctx context.Context, dest any, query string, args ...any) error {
	return s.note(sqlx.GetContext(ctx, s.q, dest, s.d.rebind(query), args...), false)
}

func (s *Store) selectAll(ctx context.Context, dest any, query string, args ...any) error {
	return s.note(sqlx.SelectContext(ctx, s.q, dest, s.d.rebind(query), args...), false)
}

// ts encodes an instant for the backend.
func (s *Store) ts(t time.Time) any { return s.d.instant(t) }

// tsp encodes an optional instant.
func (s *Store) tsp(t *time.Time) any {
	if t == nil {
		return nil
	}
	return s.ts(*t)
}

func utc(t time.Time) time.Time { return t.UTC() }

func utcp(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// DatabaseNow reads the database's clock (PostgreSQL clock_timestamp());
// SQLite runs in this process, so its clock is the local one.
func (s *Store) DatabaseNow(ctx context.Context) (time.Time, error) {
	if s.d.clockSQL == "" {
		return time.Now().UTC(), nil
	}
	var t time.Time
	if err := s.get(ctx, &t, s.d.clockSQL); err != nil {
		return time.Time{}, fmt.Errorf("read database clock: %w", err)
	}
	return t.UTC(), nil
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

func dedupe(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// prefixed qualifies a comma-separated column list with a table alias.
func prefixed(alias, columns string) string {
	parts := strings.Split(columns, ",")
	for i, p := range parts {
		parts[i] = alias + strings.TrimSpace(p)
	}
	return strings.Join(parts, ", ")
}

func stringArgs(in []string) []any {
	out := make([]any, len(in))
	for i, v := range in {
		out[i] = v
	}
	return out
}

func affected(res interface{ RowsAffected() (int64, error) }) int {
	n, err := res.RowsAffected()
	if err != nil {
		return 0
	}
	return int(n)
}

// withArg appends one argument to a copy of args.
func withArg(args []any, v any) []any {
	return append(append(make([]any, 0, len(args)+1), args...), v)
}
