package repository

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/jmoiron/sqlx"

	"github.com/qhronos/qhronos/internal/model"
)

// NewEvent is one event of a batch create: the event (ID, timestamps and
// version set by the caller), its first history entry and its first
// occurrences (pending or planned-skipped, not manual).
type NewEvent struct {
	Event   *model.Event
	History model.HistoryEntry
	First   []model.Planned
}

// Rows per multi-row statement of CreateEvents, each kept under SQLite's
// 32,766 and PostgreSQL's 65,535 parameters per statement.
const (
	eventsPerStatement      = 500  // 50 parameters an event
	tagsPerStatement        = 5000 // 2 a tag
	historyPerStatement     = 2000 // 8 an entry
	occurrencesPerStatement = 2000 // 13 an occurrence
)

// CreateEvents writes new events with their tags, history entries and
// first occurrences in a few multi-row statements (one per table and per
// chunk) instead of one statement per event: what a batch create writes.
// It runs in one transaction (the caller's, when it has one), so a failure
// leaves nothing of any of them.
func (s *Store) CreateEvents(ctx context.Context, evs []NewEvent) error {
	if len(evs) == 0 {
		return nil
	}
	return s.WithTx(ctx, func(tx *Store) error {
		// The first occurrences need their partitions (a one-off far ahead
		// gets one on demand), in this transaction as a single create does.
		var instants []time.Time
		for _, ne := range evs {
			instants = append(instants, plannedInstants(ne.First)...)
		}
		if err := tx.EnsurePartitionsFor(ctx, instants, evs[0].Event.CreatedAt); err != nil {
			return err
		}
		// First rows already finished (skipped by a calendar, say) count in
		// the statistics, whichever way they are written.
		var stats rollupDeltas
		for _, ne := range evs {
			stats.planned(ne.Event.ID, ne.Event.Action.Type, ne.First)
		}
		if err := tx.addRollups(ctx, &stats); err != nil {
			return err
		}
		if tx.conn != nil {
			return tx.copyEvents(ctx, evs)
		}
		for start := 0; start < len(evs); start += eventsPerStatement {
			chunk := evs[start:min(start+eventsPerStatement, len(evs))]
			args := make([]any, 0, 50*len(chunk))
			for _, ne := range chunk {
				args = append(args, tx.eventArgs(ne.Event)...)
			}
			q := insertEventSQL + strings.Repeat(", "+eventValues, len(chunk)-1)
			if _, err := tx.exec(ctx, q, args...); err != nil {
				return fmt.Errorf("insert events: %w", err)
			}
		}
		if err := tx.insertManyTags(ctx, evs); err != nil {
			return err
		}
		if err := tx.insertManyHistory(ctx, evs); err != nil {
			return err
		}
		return tx.insertManyFirst(ctx, evs)
	})
}

// eventValues is one row of insertEventSQL's VALUES list.
var eventValues = "(" + strings.TrimSuffix(strings.Repeat("?, ", strings.Count(eventColumns, ",")+1), ", ") + ")"

func (s *Store) insertManyTags(ctx context.Context, evs []NewEvent) error {
	var args []any
	flush := func() error {
		if len(args) == 0 {
			return nil
		}
		q := `INSERT INTO event_tags (event_id, tag) VALUES ` +
			strings.TrimSuffix(strings.Repeat("(?, ?), ", len(args)/2), ", ")
		_, err := s.exec(ctx, q, args...)
		args = args[:0]
		if err != nil {
			return fmt.Errorf("insert event tags: %w", err)
		}
		return nil
	}
	for _, ne := range evs {
		for _, t := range dedupe(ne.Event.Tags) {
			args = append(args, ne.Event.ID, t)
			if len(args) == 2*tagsPerStatement {
				if err := flush(); err != nil {
					return err
				}
			}
		}
	}
	return flush()
}

func (s *Store) insertManyHistory(ctx context.Context, evs []NewEvent) error {
	var args []any
	flush := func() error {
		if len(args) == 0 {
			return nil
		}
		q := insertHistorySQL + strings.Repeat(", (?, ?, ?, ?, ?, ?, ?, ?)", len(args)/8-1)
		_, err := s.exec(ctx, q, args...)
		args = args[:0]
		if err != nil {
			return fmt.Errorf("append history: %w", err)
		}
		return nil
	}
	for _, ne := range evs {
		if ne.History.Action == "" {
			continue
		}
		h, err := prepareEntry(ne.History)
		if err != nil {
			return err
		}
		args = append(args, s.historyArgs(h)...)
		if len(args) == 8*historyPerStatement {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// insertManyFirst writes the events' first occurrences. They are new
// events: no row can be in the way, so there is no conflict clause (as in
// CreateEventRecorded).
func (s *Store) insertManyFirst(ctx context.Context, evs []NewEvent) error {
	var values []string
	var args []any
	n := 0
	flush := func() error {
		if n == 0 {
			return nil
		}
		q := `INSERT INTO occurrences (` + occurrenceInsertColumns + `) VALUES ` + strings.Join(values, ", ")
		_, err := s.exec(ctx, q, args...)
		values, args, n = values[:0], args[:0], 0
		if err != nil {
			return fmt.Errorf("insert occurrences: %w", err)
		}
		return nil
	}
	for _, ne := range evs {
		rows := ne.First
		for len(rows) > 0 {
			take := min(len(rows), occurrencesPerStatement-n)
			v, a := s.occurrenceValues(ne.Event.ID, rows[:take], false, ne.Event.CreatedAt)
			values, args, n = append(values, v), append(args, a...), n+take
			rows = rows[take:]
			if n == occurrencesPerStatement {
				if err := flush(); err != nil {
					return err
				}
			}
		}
	}
	return flush()
}

// Savepoint runs fn inside a savepoint of the current transaction: when fn
// fails, what it wrote is undone and the transaction goes on (on
// PostgreSQL a failed statement would otherwise abort it). Outside a
// transaction it is WithTx.
func (s *Store) Savepoint(ctx context.Context, fn func(tx *Store) error) error {
	if !s.inTx() {
		return s.WithTx(ctx, fn)
	}
	if _, err := s.exec(ctx, `SAVEPOINT qhronos_item`); err != nil {
		return fmt.Errorf("savepoint: %w", err)
	}
	if err := fn(s); err != nil {
		for _, q := range []string{`ROLLBACK TO SAVEPOINT qhronos_item`, `RELEASE SAVEPOINT qhronos_item`} {
			if _, rerr := s.exec(ctx, q); rerr != nil {
				return fmt.Errorf("undo savepoint after %v: %w", err, rerr)
			}
		}
		return err
	}
	if _, err := s.exec(ctx, `RELEASE SAVEPOINT qhronos_item`); err != nil {
		return fmt.Errorf("release savepoint: %w", err)
	}
	return nil
}

func (s *Store) inTx() bool {
	_, ok := s.q.(*sqlx.Tx)
	return ok
}

// copyEvents is CreateEvents on PostgreSQL: the four tables written with
// COPY inside the transaction, which spares the multi-row statements'
// parsing, planning and parameter binding (thousands of parameters a
// batch). The rows and their values are the multi-row path's.
func (s *Store) copyEvents(ctx context.Context, evs []NewEvent) error {
	rows := make([][]any, len(evs))
	for i, ne := range evs {
		rows[i] = s.eventArgs(ne.Event)
	}
	if err := s.copyRows(ctx, "events", eventColumns, rows, 0, 38); err != nil {
		return fmt.Errorf("insert events: %w", err)
	}
	rows = rows[:0]
	for _, ne := range evs {
		for _, t := range dedupe(ne.Event.Tags) {
			rows = append(rows, []any{ne.Event.ID, t})
		}
	}
	if err := s.copyRows(ctx, "event_tags", "event_id, tag", rows, 0); err != nil {
		return fmt.Errorf("insert event tags: %w", err)
	}
	rows = rows[:0]
	for _, ne := range evs {
		if ne.History.Action == "" {
			continue
		}
		h, err := prepareEntry(ne.History)
		if err != nil {
			return err
		}
		rows = append(rows, s.historyArgs(h))
	}
	if err := s.copyRows(ctx, "event_history", historyColumns, rows, 0, 1); err != nil {
		return fmt.Errorf("append history: %w", err)
	}
	rows = rows[:0]
	for _, ne := range evs {
		now := s.ts(ne.Event.CreatedAt)
		for _, r := range ne.First {
			rows = append(rows, s.occurrenceRow(ne.Event.ID, r, false, now))
		}
	}
	if err := s.copyRows(ctx, "occurrences", occurrenceInsertColumns, rows, 0, 1); err != nil {
		return fmt.Errorf("insert occurrences: %w", err)
	}
	return nil
}

// copyRows writes rows into table's columns (a comma-separated list) with
// COPY on the transaction's connection. uuidCols are the positions of uuid
// columns: their text ids are sent as 16 bytes (pgx would otherwise try
// each string as a uuid, fail with a formatted error, then parse it).
func (s *Store) copyRows(ctx context.Context, table, columns string, rows [][]any, uuidCols ...int) error {
	if len(rows) == 0 {
		return nil
	}
	names := strings.Split(columns, ",")
	for i, n := range names {
		names[i] = strings.TrimSpace(n)
	}
	binaryIDs(rows, uuidCols)
	err := s.onPgx(table, func(c *pgx.Conn) error {
		_, err := c.CopyFrom(ctx, pgx.Identifier{table}, names, pgx.CopyFromRows(rows))
		return err
	})
	return s.note(err, true)
}

// binaryIDs replaces the text ids in rows' uuidCols with their 16 bytes.
func binaryIDs(rows [][]any, uuidCols []int) {
	for _, row := range rows {
		for _, c := range uuidCols {
			row[c] = uuidValue(row[c])
		}
	}
}

// onPgx runs f on the pgx connection under the transaction's, to copy
// into table.
func (s *Store) onPgx(table string, f func(*pgx.Conn) error) error {
	return rawPgx(s.conn, "copy into "+table, f)
}

// rawPgx runs f on the pgx connection under conn; what names the work in
// the error of a connection that is not pgx's.
func rawPgx(conn *sqlx.Conn, what string, f func(*pgx.Conn) error) error {
	return conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("%s: not a pgx connection (%T)", what, dc)
		}
		return f(c.Conn())
	})
}

// copyBuffers are the buffers copyRowsBuffered encodes into. pgx's CopyFrom
// grows a new one from a few bytes for every call, through a pipe and a
// goroutine: 7–9 % of the bytes qhronosd allocated in a burst, for the
// attempts' rows alone (BENCHMARKS.md, "#36: fifteenth step").
var copyBuffers = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledCopy bounds the buffers kept for reuse (a batch of attempts with
// their recorded requests is a few hundred kilobytes).
const maxPooledCopy = 4 << 20

// pgCopyHeader opens PostgreSQL's binary COPY format: signature, flags, no
// header extension.
const pgCopyHeader = "PGCOPY\n\377\r\n\000\000\000\000\000\000\000\000\000"

// copyRowsBuffered is copyRows encoding the rows itself, with pgx's own
// binary encoders, into a pooled buffer sent as one COPY: for the hot path,
// whose values are of plain types (no text to parse into a column's type,
// which pgx's CopyFrom would try).
func (s *Store) copyRowsBuffered(ctx context.Context, table, columns string, rows [][]any, uuidCols ...int) error {
	if len(rows) == 0 {
		return nil
	}
	binaryIDs(rows, uuidCols)
	bp := copyBuffers.Get().(*[]byte)
	err := s.onPgx(table, func(c *pgx.Conn) error {
		// Named, so described once per connection (pgx keeps the answer).
		sd, err := c.Prepare(ctx, "qhronos_copy_"+table, "SELECT "+columns+" FROM "+table)
		if err != nil {
			return err
		}
		buf := append((*bp)[:0], pgCopyHeader...)
		for _, row := range rows {
			if len(row) != len(sd.Fields) {
				return fmt.Errorf("copy into %s: %d values for %d columns", table, len(row), len(sd.Fields))
			}
			buf = binary.BigEndian.AppendUint16(buf, uint16(len(row)))
			for i, v := range row {
				at := len(buf)
				buf = binary.BigEndian.AppendUint32(buf, math.MaxUint32) // -1: NULL unless encoded
				out, err := c.TypeMap().Encode(sd.Fields[i].DataTypeOID, pgtype.BinaryFormatCode, v, buf)
				if err != nil {
					return fmt.Errorf("copy into %s, column %s: %w", table, sd.Fields[i].Name, err)
				}
				if out != nil {
					buf = out
					binary.BigEndian.PutUint32(buf[at:], uint32(len(buf)-at-4))
				}
			}
		}
		buf = binary.BigEndian.AppendUint16(buf, math.MaxUint16) // -1: the end
		*bp = buf
		_, err = c.PgConn().CopyFrom(ctx, bytes.NewReader(buf),
			"COPY "+table+" ("+columns+") FROM STDIN BINARY")
		return err
	})
	if cap(*bp) <= maxPooledCopy {
		copyBuffers.Put(bp)
	}
	return s.note(err, true)
}

// uuidValue is a text id (or a nil or pointer one) as the 16 bytes of a
// uuid; anything else, or text that is not a uuid, is left for PostgreSQL
// to refuse as it would in an INSERT.
func uuidValue(v any) any {
	switch id := v.(type) {
	case string:
		if u, err := uuid.Parse(id); err == nil {
			return [16]byte(u)
		}
	case *string:
		if id == nil {
			return nil
		}
		return uuidValue(*id)
	}
	return v
}
