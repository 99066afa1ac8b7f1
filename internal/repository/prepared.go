package repository

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"math/bits"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jmoiron/sqlx"
)

// The embedded SQLite parses a statement's text each time database/sql
// runs it without a prepared statement, and the hot path's texts are long:
// a batch of outcomes or attempts is a VALUES list with a dozen
// placeholders a row. Parsing was 16 % of the embedded burst's CPU, on the
// one writer's critical path. The hot path's statements are therefore
// prepared once per connection and kept (stmtCache), and their batches are
// cut into power-of-two row counts (preparedChunks), so that a handful of
// texts serve every batch size. PostgreSQL needs none of this: pgx prepares
// and caches each text per connection by itself, and its batches are
// arrays with one text whatever their size.

// stmtCache holds the statements prepared on the store's pool, by text.
// It never evicts: only statements from a bounded set of texts (a few per
// call site, by preparedChunks) go through it; evicting one in use by
// another goroutine would close it under that goroutine.
//
// A text is prepared in the background the first time it is asked for,
// and that call runs unprepared: preparing on the pool takes a connection,
// and the caller, inside a transaction, already holds one; with every
// connection held by such callers, none would ever come free.
type stmtCache struct {
	mu sync.Mutex
	m  map[string]*sqlx.Stmt // nil value: being prepared
	wg sync.WaitGroup
}

func newStmtCache() *stmtCache { return &stmtCache{m: map[string]*sqlx.Stmt{}} }

// get returns the statement for query, or nil while it is being prepared
// on db (started by the first get).
func (c *stmtCache) get(db *sqlx.DB, query string) *sqlx.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.m[query]; ok || c.m == nil {
		return st
	}
	c.m[query] = nil
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		st, err := db.Preparex(query)
		c.mu.Lock()
		defer c.mu.Unlock()
		switch {
		case c.m == nil: // closed meanwhile
			if err == nil {
				_ = st.Close()
			}
		case err != nil:
			delete(c.m, query) // the next get tries again
		default:
			c.m[query] = st
		}
	}()
	return nil
}

// close closes every statement (the store is closing); a preparation
// still under way closes its own when it ends (wait).
func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.m {
		if st != nil {
			_ = st.Close()
		}
	}
	c.m = nil
}

// wait returns when no preparation is under way.
func (c *stmtCache) wait() { c.wg.Wait() }

// prepared returns the cached statement for query, bound to the store's
// transaction when it is one (release closes that copy; the statement
// prepared on the connection stays), or nil while it is being prepared.
func (s *Store) prepared(ctx context.Context, query string) (st *sqlx.Stmt, release func()) {
	if st = s.stmts.get(s.db, query); st == nil {
		return nil, nil
	}
	if tx, ok := s.q.(*sqlx.Tx); ok {
		st = tx.StmtxContext(ctx, st)
		return st, func() { _ = st.Close() }
	}
	return st, func() {}
}

// execHot is exec for a hot-path statement whose text comes from a bounded
// set (see stmtCache): prepared once per connection where the store keeps
// a cache.
func (s *Store) execHot(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if s.stmts == nil {
		return s.exec(ctx, query, args...)
	}
	st, release := s.prepared(ctx, s.d.rebind(query))
	if st == nil {
		return s.exec(ctx, query, args...)
	}
	defer release()
	res, err := st.ExecContext(ctx, args...)
	return res, s.note(err, true)
}

// selectHot is selectAll for a hot-path statement (see execHot).
func (s *Store) selectHot(ctx context.Context, dest any, query string, args ...any) error {
	if s.stmts == nil {
		return s.selectAll(ctx, dest, query, args...)
	}
	st, release := s.prepared(ctx, s.d.rebind(query))
	if st == nil {
		return s.selectAll(ctx, dest, query, args...)
	}
	defer release()
	return s.note(st.SelectContext(ctx, dest, args...), false)
}

// preparedChunks cuts n rows into statement sizes that are powers of two,
// the largest first, none above limit (itself a power of two): at most
// log2(limit)+1 texts per call site, so that each is prepared once.
func preparedChunks(n, limit int) []int {
	var sizes []int
	for n > 0 {
		size := min(limit, 1<<(bits.Len(uint(n))-1))
		sizes = append(sizes, size)
		n -= size
	}
	return sizes
}

// batchSizes cuts a batch of n rows into statements: on SQLite
// power-of-two sizes up to sqliteMax (preparedChunks); on PostgreSQL, whose
// batches are arrays under one text, pgMax rows each.
func (s *Store) batchSizes(n, sqliteMax, pgMax int) []int {
	if s.d.backend == Postgres {
		return fixedChunks(n, pgMax)
	}
	return preparedChunks(n, sqliteMax)
}

// fixedChunks cuts n rows into statements of size rows, the last one
// shorter.
func fixedChunks(n, size int) []int {
	var sizes []int
	for ; n > 0; n -= size {
		sizes = append(sizes, min(n, size))
	}
	return sizes
}

// selectListed is selectHot for rows scanned straight into the fields that
// fields appends to into (one list, refilled for each row), in the query's
// column order. sqlx finds a row's fields by
// reflection, column by column, for every row; for the rows a dispatcher
// reads (a due occurrence and its 45-column event per delivery in a burst)
// that was a third of each read's CPU in qhronosd.
func selectListed[T any](ctx context.Context, s *Store, dest *[]T, fields func(r *T, into []any) []any, query string,
	args ...any) error {
	if s.d.backend == Postgres {
		if done, err := selectListedPgx(ctx, s, dest, fields, query, args...); done {
			return err
		}
	}
	var rows *sql.Rows
	var err error
	if s.stmts != nil {
		if st, release := s.prepared(ctx, s.d.rebind(query)); st != nil {
			defer release()
			rows, err = st.QueryContext(ctx, args...)
		}
	}
	if rows == nil && err == nil {
		rows, err = s.q.QueryContext(ctx, s.d.rebind(query), args...)
	}
	if err != nil {
		return s.note(err, false)
	}
	defer func() { _ = rows.Close() }()
	return s.note(appendRows(rows, dest, fields), false)
}

// listedRows are the rows of a query, through database/sql or pgx.
type listedRows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// appendRows scans rows into the fields that fields appends to into (one
// list, refilled for each row) of new elements of dest.
func appendRows[T any](rows listedRows, dest *[]T, fields func(r *T, into []any) []any) error {
	var into []any
	for rows.Next() {
		// Scanned in place: a row of many columns is large to copy.
		var zero T
		*dest = append(*dest, zero)
		into = fields(&(*dest)[len(*dest)-1], into[:0])
		if err := rows.Scan(into...); err != nil {
			*dest = (*dest)[:len(*dest)-1]
			return err
		}
	}
	return rows.Err()
}

// selectListedPgx is selectListed on PostgreSQL, scanned by pgx itself on
// the connection under database/sql: database/sql hands every column over
// as a boxed driver.Value and converts it again into its field, 78 values a
// delivery in a burst (a due row and its event), which pgx decodes straight
// into the fields (BenchmarkEventsByID: 37 → 21 allocations an event). It
// runs on the transaction's connection when there is one, else on a
// connection of s's pool; done is false when neither is at hand (then
// selectListed goes through database/sql).
func selectListedPgx[T any](ctx context.Context, s *Store, dest *[]T, fields func(r *T, into []any) []any, query string,
	args ...any) (done bool, err error) {
	query = s.d.rebind(query)
	if s.conn != nil {
		return true, s.note(scanPgx(ctx, s.conn, dest, fields, query, args), false)
	}
	db, ok := s.q.(*sqlx.DB)
	if !ok {
		return false, nil
	}
	// A pooled connection found broken (the server restarted or ended the
	// session, a network cut) is dropped and the read tried on another,
	// twice at most, as database/sql does for a connection broken before
	// a query was sent.
	for try := 0; ; try++ {
		conn, err := db.Connx(ctx)
		if err != nil {
			return true, s.note(err, false)
		}
		err = scanPgx(ctx, conn, dest, fields, query, args)
		_ = conn.Close()
		if !errors.Is(err, driver.ErrBadConn) || try == 2 {
			return true, s.note(err, false)
		}
	}
}

// scanPgx runs query on conn's pgx connection and appends its rows to dest.
// When the connection broke under it (an error that left it closed, the
// context still live), dest is as it was and the error wraps
// driver.ErrBadConn, which has database/sql drop the connection: a read
// can be tried again on another.
func scanPgx[T any](ctx context.Context, conn *sqlx.Conn, dest *[]T, fields func(r *T, into []any) []any, query string,
	args []any) error {
	had := len(*dest)
	return rawPgx(conn, "select", func(c *pgx.Conn) error {
		rows, err := c.Query(ctx, query, args...)
		if err == nil {
			err = appendRows(rows, dest, fields)
			rows.Close() // before asking whether the connection broke
		}
		if err != nil && c.IsClosed() && ctx.Err() == nil {
			*dest = (*dest)[:had]
			return fmt.Errorf("%w: %w", driver.ErrBadConn, err)
		}
		return err
	})
}
