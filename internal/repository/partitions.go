package repository

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/qhronos/qhronos/internal/model"
)

// On PostgreSQL occurrences and attempts (and their archive) are range
// partitioned by the occurrence's scheduled_at, one partition a week
// (migration 0012 says why). This file keeps the partitions there: created
// ahead by the maintenance loop, on demand for instants beyond, detached to
// the archive past retention and dropped after purge_after. SQLite keeps
// plain tables and every method here is a no-op or the row-level path.

// partitionWindow remembers the weeks the maintenance loop made sure of, so
// the insert path needs no round trip for the instants of the present. Only
// the maintenance loop sets it (from a run that covered [lo, hi)); the
// archiver detaches nothing that recent, so the window stays true between
// runs.
type partitionWindow struct {
	mu     sync.Mutex
	lo, hi time.Time
}

func (w *partitionWindow) covers(t time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return !w.lo.IsZero() && !t.Before(w.lo) && t.Before(w.hi)
}

func (w *partitionWindow) set(lo, hi time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lo, w.hi = lo, hi
}

// Partitioned reports whether history is time-partitioned (PostgreSQL).
func (s *Store) Partitioned() bool { return s != nil && s.d != nil && s.d.backend == Postgres }

// week is the Monday 00:00 UTC at or before t (qhronos_week in SQL).
func week(t time.Time) time.Time {
	t = t.UTC()
	d := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	return d.AddDate(0, 0, -((int(d.Weekday()) + 6) % 7))
}

// EnsurePartitions makes every week from the one holding from to the one
// holding to a weekly partition of the live tables (qhronos_ensure_partitions),
// then remembers [week(from), end of to's week) as covered. It returns how
// many weeks it went over; SQLite has nothing to do.
func (s *Store) EnsurePartitions(ctx context.Context, from, to time.Time) (int, error) {
	if !s.Partitioned() {
		return 0, nil
	}
	var n int
	err := s.WithTx(ctx, func(tx *Store) error {
		// Creating a partition waits for nothing the hot path holds
		// (ATTACH takes SHARE UPDATE EXCLUSIVE); a split of a far-future
		// partition does wait, and gives up rather than queue the hot path
		// behind it.
		if _, err := tx.exec(ctx, `SET LOCAL lock_timeout = '10s'`); err != nil {
			return err
		}
		return tx.get(ctx, &n, `SELECT qhronos_ensure_partitions(?, ?)`, tx.ts(from), tx.ts(to))
	})
	if err != nil {
		return 0, fmt.Errorf("ensure partitions: %w", err)
	}
	s.parts.set(week(from), week(to).AddDate(0, 0, 7))
	return n, nil
}

// EnsurePartitionsFor gives every instant a live partition before rows are
// inserted at them: nothing to do for instants inside the window the
// maintenance loop keeps, one call of qhronos_ensure_partition_for per
// other week (a one-off in 9999 gets a coarse far-future partition). It
// runs in the caller's transaction, so a partition exists exactly when the
// rows that needed it commit.
func (s *Store) EnsurePartitionsFor(ctx context.Context, instants []time.Time, now time.Time) error {
	if !s.Partitioned() {
		return nil
	}
	var weeks []time.Time
	seen := map[time.Time]bool{}
	for _, t := range instants {
		t = model.RoundUp(t)
		if s.parts.covers(t) {
			continue
		}
		if w := week(t); !seen[w] {
			seen[w] = true
			weeks = append(weeks, w)
		}
	}
	for _, w := range weeks {
		if _, err := s.exec(ctx, `SELECT qhronos_ensure_partition_for(?, ?)`, s.ts(w), s.ts(now)); err != nil {
			return fmt.Errorf("ensure partition for %s: %w", w.Format(time.RFC3339), err)
		}
	}
	return nil
}

// Partition is one time slice of a partitioned table.
type Partition struct {
	Name string    `db:"name" json:"name"`
	From time.Time `db:"lo" json:"from"`
	To   time.Time `db:"hi" json:"to"`
}

// Partitions lists table's partitions in time order (nil on SQLite).
func (s *Store) Partitions(ctx context.Context, table string) ([]Partition, error) {
	if !s.Partitioned() {
		return nil, nil
	}
	var out []Partition
	// 'infinity' (the last century's upper bound) does not scan into a
	// time.Time; it reads as year 10000.
	err := s.selectAll(ctx, &out, `SELECT name, lo, LEAST(hi, '10000-01-01T00:00:00Z'::timestamptz) AS hi
		FROM qhronos_partitions(?) ORDER BY lo`, table)
	if err != nil {
		return nil, fmt.Errorf("list partitions of %s: %w", table, err)
	}
	for i := range out {
		out[i].From, out[i].To = out[i].From.UTC(), out[i].To.UTC()
	}
	return out, nil
}

// partitionOf names the partition of table with p's bounds (the names end
// in _pFROM_TO).
func partitionOf(table string, p Partition) string {
	return table + p.Name[strings.LastIndex(p.Name, "_p"):]
}

// lockLayout serializes, until the transaction ends, the transactions that
// change the partition layout: two archivers (an instance that lost the
// archiver lock mid-run, or runs unlocked when coordination is away), the
// maintenance loop and qhronos_ensure_partitions share it.
func (s *Store) lockLayout(ctx context.Context) error {
	if _, err := s.exec(ctx, `SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.qhronos_partitions'))`); err != nil {
		return fmt.Errorf("lock the partition layout: %w", err)
	}
	return nil
}

// attachedTo reports whether table is (still) a partition of parent;
// parent "" asks whether it is a plain table, attached nowhere.
func (s *Store) attachedTo(ctx context.Context, table, parent string) (bool, error) {
	var ok bool
	q := `SELECT EXISTS (SELECT 1 FROM pg_inherits WHERE inhrelid = to_regclass(?) AND inhparent = to_regclass(?))`
	args := []any{table, parent}
	if parent == "" {
		q = `SELECT EXISTS (SELECT 1 FROM pg_class WHERE oid = to_regclass(?) AND NOT relispartition)`
		args = args[:1]
	}
	if err := s.get(ctx, &ok, q, args...); err != nil {
		return false, fmt.Errorf("look up %s: %w", table, err)
	}
	return ok, nil
}

// isUndefinedTable reports PostgreSQL's "relation does not exist"
// (42P01): a partition listed a moment ago that another archiver has
// since detached and dropped.
func isUndefinedTable(err error) bool {
	pgErr, ok := asPgError(err)
	return ok && pgErr.Code == "42P01"
}

// errGone ends a transaction whose partition another archiver took first.
var errGone = errors.New("partition already taken")

// archiveSlices is ArchiveOccurrences on PostgreSQL. A live slice whose week
// ended before the cutoff is detached whole, with its attempts, and attached
// to the archive (or dropped when b.Delete): no row is rewritten, nothing is
// left for vacuum. A slice that still holds a row that may fire, or one that
// finished within retention, is never detached: that row would vanish from
// the live tables. Its eligible rows move row by row instead (the old path,
// bounded by b.Limit), and the slice goes whole once the last straggler has
// finished and aged. Rows of the slice holding the cutoff wait for their
// week to end: history is archived at most a week after retention.
func (s *Store) archiveSlices(ctx context.Context, b ArchiveBatch) (ArchiveCounts, error) {
	var out ArchiveCounts
	// A run that died between detaching a slice and attaching it to the
	// archive left the slice as a plain table: finish it first.
	orphans, err := s.detachedSlices(ctx)
	if err != nil {
		return out, err
	}
	for _, p := range orphans {
		n, err := s.finishSlice(ctx, p, b)
		if err != nil {
			return out, err
		}
		out = out.Add(n)
	}
	parts, err := s.Partitions(ctx, "occurrences")
	if err != nil {
		return out, err
	}
	for _, p := range parts {
		if p.To.After(b.Cutoff) || p.To.After(b.Now) {
			break
		}
		stragglers, err := s.sliceHasStragglers(ctx, p, b.Cutoff)
		if isUndefinedTable(err) {
			continue // another archiver took and dropped it since the listing
		}
		if err != nil {
			return out, err
		}
		if !stragglers {
			stragglers, err = s.detachSlice(ctx, p, b.Cutoff)
			if errors.Is(err, errGone) {
				continue
			}
			if err != nil {
				return out, err
			}
		}
		if stragglers {
			n, err := s.archiveSliceRows(ctx, p, b)
			if err != nil {
				return out, err
			}
			out = out.Add(n)
			if out.Occurrences >= b.Limit {
				return out, nil // the archiver calls again for the rest
			}
			continue
		}
		n, err := s.finishSlice(ctx, p, b)
		if err != nil {
			return out, err
		}
		out = out.Add(n)
	}
	return out, nil
}

// sliceHasStragglers reports whether the slice p holds a row that must
// stay live: one that may still fire (its mirror in occurrence_queue) or one
// that changed at or after the cutoff: an attempt started then (in p's
// attempts slice, by attempts_by_time), or a row that ended otherwise than
// completed then (occurrence_ends). Occurrences keep no index on when they
// finished, so that an outcome's update stays in place (0036); a completed
// row finishes with its last attempt, or with an acknowledgement or a run's
// report, bounded by their deadlines, after it.
func (s *Store) sliceHasStragglers(ctx context.Context, p Partition, cutoff time.Time) (bool, error) {
	var found bool
	lo, hi := s.ts(p.From), s.ts(p.To)
	err := s.get(ctx, &found, `SELECT EXISTS (SELECT 1 FROM occurrence_queue WHERE scheduled_at >= ? AND scheduled_at < ?)
		OR EXISTS (SELECT 1 FROM occurrence_ends WHERE scheduled_at >= ? AND scheduled_at < ? AND updated_at >= ?)
		OR EXISTS (SELECT 1 FROM `+partitionOf("attempts", p)+` WHERE started_at >= ?)`,
		lo, hi, lo, hi, s.ts(cutoff), s.ts(cutoff))
	if err != nil {
		return false, fmt.Errorf("look for stragglers in %s: %w", p.Name, err)
	}
	return found, nil
}

// archiveSliceRows moves one batch of the slice's eligible rows the old way.
func (s *Store) archiveSliceRows(ctx context.Context, p Partition, b ArchiveBatch) (ArchiveCounts, error) {
	if !b.Delete {
		_, err := s.exec(ctx, `SELECT qhronos_create_slice('_archive', ?, ?)`, s.ts(p.From), s.ts(p.To))
		if err != nil {
			return ArchiveCounts{}, fmt.Errorf("create archive slice for %s: %w", p.Name, err)
		}
	}
	return s.archiveRows(ctx, b, statusSQL(`SELECT id FROM `+p.Name+` WHERE status IN {finished}
		AND COALESCE(completed_at, updated_at) < ? AND scheduled_at < ? LIMIT ?`))
}

// detachSlice detaches a slice and its attempts from the live tables in a
// short transaction of its own: DETACH holds ACCESS EXCLUSIVE on the live
// parents until the commit, so nothing slow may follow it there. It looks
// for stragglers again once detached (a replay may have requeued a row
// since the first look) and then undoes the detach, reporting true. A
// foreign key to events (slices of databases from before migration 19)
// goes here too, so that the slow second step takes no lock on events.
func (s *Store) detachSlice(ctx context.Context, p Partition, cutoff time.Time) (stragglers bool, err error) {
	occ, att := p.Name, partitionOf("attempts", p)
	err = s.WithTx(ctx, func(tx *Store) error {
		// It gives up rather than make the hot path queue behind it for
		// long; the next run tries again.
		if _, err := tx.exec(ctx, `SET LOCAL lock_timeout = '5s'`); err != nil {
			return err
		}
		if err := tx.lockLayout(ctx); err != nil {
			return err
		}
		if ok, err := tx.attachedTo(ctx, occ, "occurrences"); err != nil || !ok {
			return cmp.Or(err, errGone)
		}
		for _, q := range []string{`ALTER TABLE attempts DETACH PARTITION ` + att,
			`ALTER TABLE occurrences DETACH PARTITION ` + occ} {
			if _, err := tx.exec(ctx, q); err != nil {
				return fmt.Errorf("detach %s: %w", p.Name, err)
			}
		}
		found, err := tx.sliceHasStragglers(ctx, p, cutoff)
		if err != nil {
			return err
		}
		if found {
			stragglers = true
			return errUndo
		}
		// The mirrors of its rows that ended otherwise than completed leave
		// with it (the archive has its own indexes).
		if _, err := tx.exec(ctx, `DELETE FROM occurrence_ends WHERE scheduled_at >= ? AND scheduled_at < ?`,
			tx.ts(p.From), tx.ts(p.To)); err != nil {
			return fmt.Errorf("forget the ended rows of %s: %w", p.Name, err)
		}
		var fks []string
		err = tx.selectAll(ctx, &fks, `SELECT conname FROM pg_constraint WHERE conrelid = to_regclass(?) AND contype = 'f'`, occ)
		if err != nil {
			return fmt.Errorf("list foreign keys of %s: %w", occ, err)
		}
		for _, fk := range fks {
			if _, err := tx.exec(ctx, `ALTER TABLE `+occ+` DROP CONSTRAINT `+quoteIdent(fk)); err != nil {
				return fmt.Errorf("drop foreign key of %s: %w", occ, err)
			}
		}
		return nil
	})
	if errors.Is(err, errUndo) {
		return true, nil
	}
	if errors.Is(err, errGone) {
		return false, errGone
	}
	return stragglers, err
}

// errUndo rolls back a transaction that found it had nothing to do.
var errUndo = errors.New("undo")

// detachedSlices lists live slices detached by a run that ended before
// attaching them to the archive: plain tables named like live partitions.
func (s *Store) detachedSlices(ctx context.Context) ([]Partition, error) {
	var names []string
	err := s.selectAll(ctx, &names, `SELECT relname FROM pg_class WHERE relnamespace = current_schema()::regnamespace
		AND relkind = 'r' AND NOT relispartition AND relname ~ '^occurrences_p[0-9]{8}_[0-9]{8}$'
		AND to_regclass('attempts' || substr(relname, 12)) IS NOT NULL`)
	if err != nil {
		return nil, fmt.Errorf("look for detached slices: %w", err)
	}
	var out []Partition
	for _, n := range names {
		lo, err1 := time.Parse("20060102", n[len("occurrences_p"):len("occurrences_p")+8])
		hi, err2 := time.Parse("20060102", n[len(n)-8:])
		if err1 != nil || err2 != nil {
			continue
		}
		out = append(out, Partition{Name: n, From: lo, To: hi})
	}
	return out, nil
}

// finishSlice takes a detached slice to the archive (or drops it when
// b.Delete) in one transaction; the live tables are not locked by it.
func (s *Store) finishSlice(ctx context.Context, p Partition, b ArchiveBatch) (ArchiveCounts, error) {
	occ, att := p.Name, partitionOf("attempts", p)
	var out ArchiveCounts
	err := s.WithTx(ctx, func(tx *Store) error {
		if err := tx.lockLayout(ctx); err != nil {
			return err
		}
		if ok, err := tx.attachedTo(ctx, occ, ""); err != nil || !ok {
			return cmp.Or(err, errGone)
		}
		if err := tx.get(ctx, &out.Occurrences, `SELECT COUNT(*) FROM `+occ); err != nil {
			return fmt.Errorf("count %s: %w", occ, err)
		}
		if err := tx.get(ctx, &out.Attempts, `SELECT COUNT(*) FROM `+att); err != nil {
			return fmt.Errorf("count %s: %w", att, err)
		}
		if b.Delete {
			if _, err := tx.exec(ctx, `DROP TABLE `+att+`, `+occ); err != nil {
				return fmt.Errorf("drop %s: %w", p.Name, err)
			}
			return nil
		}
		return tx.attachToArchive(ctx, p, occ, att, b.Now)
	})
	if errors.Is(err, errGone) {
		return ArchiveCounts{}, nil
	}
	if err != nil {
		return ArchiveCounts{}, err
	}
	return out, nil
}

// attachToArchive turns a detached live slice into an archive slice: it
// drops the dispatcher's indexes (meaningless in the archive), stamps
// archived_at (a column added with a constant default is a catalog change,
// no rewrite), takes in the rows an earlier straggler move put in the
// archive's slice of the same week, and attaches. ATTACH scans the slice
// once to check its bounds, holding only SHARE UPDATE EXCLUSIVE on the
// archive parents.
func (s *Store) attachToArchive(ctx context.Context, p Partition, occ, att string, now time.Time) error {
	var liveOnly []string
	err := s.selectAll(ctx, &liveOnly, `SELECT c.relname FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid
		WHERE x.indrelid = to_regclass(?) AND x.indpred IS NOT NULL`, occ)
	if err != nil {
		return fmt.Errorf("list live indexes of %s: %w", occ, err)
	}
	stmts := make([]string, 0, len(liveOnly)+4)
	for _, ix := range liveOnly {
		stmts = append(stmts, `DROP INDEX `+quoteIdent(ix))
	}
	stamp := quoteLiteral(now.UTC().Format(time.RFC3339Nano))
	for _, t := range []string{occ, att} {
		stmts = append(stmts, `ALTER TABLE `+t+` ADD COLUMN archived_at timestamptz NOT NULL DEFAULT `+stamp,
			`ALTER TABLE `+t+` ALTER COLUMN archived_at DROP DEFAULT`)
	}
	for _, q := range stmts {
		if _, err := s.exec(ctx, q); err != nil {
			return fmt.Errorf("prepare %s for the archive: %w", p.Name, err)
		}
	}
	archived, err := s.Partitions(ctx, "occurrences_archive")
	if err != nil {
		return err
	}
	for _, a := range archived {
		if !a.From.Before(p.To) || !a.To.After(p.From) {
			continue
		}
		if !a.From.Equal(p.From) || !a.To.Equal(p.To) {
			return fmt.Errorf("archive partition %s overlaps %s with other bounds", a.Name, p.Name)
		}
		for _, pair := range [][2]string{{"occurrences", occ}, {"attempts", att}} {
			from := partitionOf(pair[0]+"_archive", a)
			cols := occurrenceColumns + ", archived_at"
			if pair[0] == "attempts" {
				cols = attemptColumns + ", archived_at"
			}
			for _, q := range []string{`INSERT INTO ` + pair[1] + ` (` + cols + `) SELECT ` + cols + ` FROM ` + from,
				`ALTER TABLE ` + pair[0] + `_archive DETACH PARTITION ` + from, `DROP TABLE ` + from} {
				if _, err := s.exec(ctx, q); err != nil {
					return fmt.Errorf("merge %s into %s: %w", from, pair[1], err)
				}
			}
		}
	}
	bounds := ` FOR VALUES FROM (` + quoteLiteral(p.From.Format(time.RFC3339Nano)) + `) TO (` +
		quoteLiteral(p.To.Format(time.RFC3339Nano)) + `)`
	for _, pair := range [][2]string{{"occurrences", occ}, {"attempts", att}} {
		name := partitionOf(pair[0]+"_archive", p)
		for _, q := range []string{`ALTER TABLE ` + pair[1] + ` RENAME TO ` + name,
			`ALTER TABLE ` + pair[0] + `_archive ATTACH PARTITION ` + name + bounds} {
			if _, err := s.exec(ctx, q); err != nil {
				return fmt.Errorf("attach %s to the archive: %w", p.Name, err)
			}
		}
	}
	return nil
}

// purgeSlices is PurgeArchive's occurrences and attempts on PostgreSQL: an
// archive slice archived wholly before the cutoff is dropped (the disk goes
// back to the operating system at once); a slice holding rows archived on
// both sides of the cutoff (rows moved one by one) loses those rows by
// DELETE, at most limit a table per call.
func (s *Store) purgeSlices(ctx context.Context, cutoff time.Time, limit int) (ArchiveCounts, error) {
	parts, err := s.Partitions(ctx, "occurrences_archive")
	if err != nil {
		return ArchiveCounts{}, err
	}
	var out ArchiveCounts
	for _, p := range parts {
		occ, att := p.Name, partitionOf("attempts_archive", p)
		var n ArchiveCounts
		err := s.WithTx(ctx, func(tx *Store) error {
			if err := tx.lockLayout(ctx); err != nil {
				return err
			}
			if ok, err := tx.attachedTo(ctx, occ, "occurrences_archive"); err != nil || !ok {
				return err // another purge dropped it
			}
			var newest struct {
				Occurrences *time.Time `db:"occ"`
				Attempts    *time.Time `db:"att"`
			}
			err := tx.get(ctx, &newest, `SELECT (SELECT MAX(archived_at) FROM `+occ+`) AS occ,
				(SELECT MAX(archived_at) FROM `+att+`) AS att`)
			if err != nil {
				return fmt.Errorf("read %s: %w", occ, err)
			}
			if (newest.Occurrences == nil || newest.Occurrences.Before(cutoff)) &&
				(newest.Attempts == nil || newest.Attempts.Before(cutoff)) {
				return tx.dropArchiveSlice(ctx, occ, att, &n)
			}
			for _, t := range []struct {
				name string
				into *int
			}{{att, &n.Attempts}, {occ, &n.Occurrences}} {
				res, err := tx.exec(ctx, `DELETE FROM `+t.name+` WHERE ctid = ANY(ARRAY(SELECT ctid FROM `+t.name+
					` WHERE archived_at < ? LIMIT ?))`, tx.ts(cutoff), limit)
				if err != nil {
					return fmt.Errorf("purge %s: %w", t.name, err)
				}
				*t.into = affected(res)
			}
			return nil
		})
		if err != nil {
			return out, err
		}
		out = out.Add(n)
	}
	// Dropped slices are done in one call; only row deletes may need more.
	return out, nil
}

// dropArchiveSlice counts an archive slice and drops it.
func (s *Store) dropArchiveSlice(ctx context.Context, occ, att string, n *ArchiveCounts) error {
	if _, err := s.exec(ctx, `SET LOCAL lock_timeout = '5s'`); err != nil {
		return err
	}
	if err := s.lockLayout(ctx); err != nil {
		return err
	}
	if ok, err := s.attachedTo(ctx, occ, "occurrences_archive"); err != nil || !ok {
		return err // another purge dropped it
	}
	if err := s.get(ctx, &n.Occurrences, `SELECT COUNT(*) FROM `+occ); err != nil {
		return fmt.Errorf("count %s: %w", occ, err)
	}
	if err := s.get(ctx, &n.Attempts, `SELECT COUNT(*) FROM `+att); err != nil {
		return fmt.Errorf("count %s: %w", att, err)
	}
	for _, q := range []string{`ALTER TABLE attempts_archive DETACH PARTITION ` + att,
		`ALTER TABLE occurrences_archive DETACH PARTITION ` + occ, `DROP TABLE ` + att + `, ` + occ} {
		if _, err := s.exec(ctx, q); err != nil {
			return fmt.Errorf("drop %s: %w", occ, err)
		}
	}
	return nil
}

// PartitionSummary is what /status shows of the partitions.
type PartitionSummary struct {
	Live    int       `json:"live"`
	Archive int       `json:"archive"`
	Oldest  time.Time `json:"oldest,omitzero"`
	// AheadUntil is where the weekly slices ahead of now end.
	AheadUntil time.Time `json:"ahead_until,omitzero"`
}

// SummarizePartitions counts the partitions and finds where the contiguous
// weekly slices starting at now's week end.
func (s *Store) SummarizePartitions(ctx context.Context, now time.Time) (PartitionSummary, error) {
	live, err := s.Partitions(ctx, "occurrences")
	if err != nil {
		return PartitionSummary{}, err
	}
	archive, err := s.Partitions(ctx, "occurrences_archive")
	if err != nil {
		return PartitionSummary{}, err
	}
	out := PartitionSummary{Live: len(live), Archive: len(archive)}
	if len(live) > 0 {
		out.Oldest = live[0].From
	}
	sort.Slice(live, func(i, j int) bool { return live[i].From.Before(live[j].From) })
	end := week(now)
	for _, p := range live {
		if p.From.Equal(end) && p.To.Sub(p.From) == 7*24*time.Hour {
			end = p.To
		}
	}
	if !end.Equal(week(now)) {
		out.AheadUntil = end
	}
	return out, nil
}

func quoteIdent(s string) string   { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
func quoteLiteral(s string) string { return `'` + strings.ReplaceAll(s, `'`, `''`) + `'` }
