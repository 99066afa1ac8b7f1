package repository

import (
	"context"
	"fmt"
)

// ChangeMark is where the notes of held changes stood at a read (see the
// held_changes migration): on PostgreSQL the read's snapshot, on SQLite
// the counter's value. The empty mark is before everything: every bucket
// has changed since it.
type ChangeMark string

// MarkChanges returns the mark of now. Taken before a read, it is a mark
// every change the read did not see comes after.
func (s *Store) MarkChanges(ctx context.Context) (ChangeMark, error) {
	var mark string
	q := `SELECT stamp FROM held_changes WHERE id = 1`
	if s.d.backend == Postgres {
		q = `SELECT pg_current_snapshot()::text`
	}
	if err := s.get(ctx, &mark, q); err != nil {
		return "", fmt.Errorf("mark held changes: %w", err)
	}
	return ChangeMark(mark), nil
}

// ChangedSince returns which of buckets may hold a row or an event changed
// since mark by someone other than its owner's outcomes, and the mark of
// its own answer (a later read of the changed rows is newer than it). On
// SQLite any change anywhere counts for every bucket.
func (s *Store) ChangedSince(ctx context.Context, mark ChangeMark, buckets []int) (map[int]bool, ChangeMark, error) {
	changed := make(map[int]bool)
	if s.d.backend != Postgres {
		now, err := s.MarkChanges(ctx)
		if err != nil {
			return nil, "", err
		}
		if now != mark {
			for _, b := range buckets {
				changed[b] = true
			}
		}
		return changed, now, nil
	}
	if mark == "" {
		for _, b := range buckets {
			changed[b] = true
		}
		now, err := s.MarkChanges(ctx)
		return changed, now, err
	}
	in := make([]int32, len(buckets))
	for i, b := range buckets {
		in[i] = int32(b)
	}
	// One statement, one snapshot: the notes it finds and the mark it
	// returns are of the same moment. A note of a transaction that had not
	// committed at mark (or began after it) is one mark does not see.
	var rows []struct {
		Mark   string `db:"mark"`
		Bucket *int   `db:"bucket"`
	}
	err := s.selectHot(ctx, &rows, `SELECT m.mark, c.bucket FROM (SELECT pg_current_snapshot()::text AS mark) m
		LEFT JOIN (SELECT DISTINCT bucket FROM held_changes WHERE bucket = ANY(?::int[])
			AND NOT pg_visible_in_snapshot(xid, ?::pg_snapshot)) c ON true`, pgArray(in), string(mark))
	if err != nil {
		return nil, "", fmt.Errorf("read held changes: %w", err)
	}
	if len(rows) == 0 {
		return nil, "", fmt.Errorf("read held changes: no answer")
	}
	for _, r := range rows {
		if r.Bucket != nil {
			changed[*r.Bucket] = true
		}
	}
	return changed, ChangeMark(rows[0].Mark), nil
}

// PruneHeldChanges deletes the notes mark sees. Owners must not ask about
// a mark older than mark afterwards (their marks serve for a bounded time,
// and mark is older than that): they would miss those changes. Notes another
// pruner is deleting at the same moment are left to it.
func (s *Store) PruneHeldChanges(ctx context.Context, mark ChangeMark) (int, error) {
	if s.d.backend != Postgres || mark == "" {
		return 0, nil // one counter: nothing accumulates
	}
	res, err := s.exec(ctx, `DELETE FROM held_changes WHERE (bucket, xid) IN (SELECT bucket, xid FROM held_changes
		WHERE pg_visible_in_snapshot(xid, ?::pg_snapshot) FOR UPDATE SKIP LOCKED)`, string(mark))
	if err != nil {
		return 0, fmt.Errorf("prune held changes: %w", err)
	}
	return int(affected(res)), nil
}
