package repository

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/qhronos/qhronos/internal/model"
)

// Concurrency keys (#37): the occurrences of every event naming a key share
// its limit of runs in flight. The rows of one key lie in many buckets, so
// the key's state is shared through the database: a slot row per occurrence
// in flight, taken under the key's row lock, and the waiting rows (pending,
// reason concurrency_wait) in due order.

// waitingSQL is the condition of a row that waits for its key's slot; it
// matches the predicate of occurrence_queue_concurrency_wait (and
// occurrences_concurrency_wait on SQLite) word for word.
var waitingSQL = statusSQL(`o.reason = '` + model.ReasonConcurrencyWait + `' AND o.status = {pending}`)

// ConcurrencyRequest asks for a slot of a concurrency key for an occurrence about
// to fire. When none is free, the row is parked — pending, reason
// concurrency_wait, due again at Recheck with Note as its error_message —
// under the same fence as DeferDue (its slot's epoch and the attempt count
// read).
type ConcurrencyRequest struct {
	Key                   string
	OccurrenceID, EventID string
	ScheduledAt           time.Time
	// Waiting says the row is parked already (its reason is cleared when it
	// takes the slot).
	Waiting      bool
	Slot         int
	Epoch        int64
	Seen         int
	Recheck, Now time.Time
	Note         string
}

// ErrConcurrencyFenced is AcquireConcurrency's answer when the row could not be parked:
// its bucket slot moved to another owner, or someone changed the row.
var ErrConcurrencyFenced = errors.New("concurrency: the row changed or its bucket moved")

// AcquireConcurrency gives r's occurrence a slot of its key and reports true, or
// parks it and reports false. A slot is free when the key is not paused and
// its slots in flight plus the rows ahead of this one (earlier instant, then
// id; parked or due, without a slot) stay under the limit: an instant
// overtakes an earlier one only into a slot both fit in. An
// occurrence that holds a slot already (a retry, or a row a stopped owner
// had taken it for) keeps it.
func (s *Store) AcquireConcurrency(ctx context.Context, r ConcurrencyRequest) (bool, error) {
	acquired := false
	err := s.WithTx(ctx, func(tx *Store) error {
		if _, err := tx.exec(ctx, `INSERT INTO concurrency_keys (key, created_at) VALUES (?, ?)
			ON CONFLICT (key) DO NOTHING`, r.Key, tx.ts(r.Now)); err != nil {
			return fmt.Errorf("register concurrency key: %w", err)
		}
		var paused bool
		if err := tx.get(ctx, &paused, `SELECT paused FROM concurrency_keys WHERE key = ?`+tx.d.forUpdate,
			r.Key); err != nil {
			return fmt.Errorf("lock concurrency key: %w", err)
		}
		var held int
		if err := tx.get(ctx, &held, `SELECT COUNT(*) FROM concurrency_slots WHERE occurrence_id = ?`,
			r.OccurrenceID); err != nil {
			return fmt.Errorf("read concurrency slot: %w", err)
		}
		if held > 0 {
			acquired = true
			return nil
		}
		st, err := tx.keyState(ctx, r.Key)
		if err != nil {
			return err
		}
		// Ahead are the key's earlier instants that may fire and hold no
		// slot: parked, or due and not asked yet (their owner, maybe
		// another instance, has yet to reach them).
		var ahead int
		if err := tx.get(ctx, &ahead, statusSQL(`SELECT COUNT(*) FROM unfinished_occurrences o JOIN events e ON e.id = o.event_id
			WHERE e.concurrency_key = ? AND o.status = {pending} AND o.id <> ?
			AND (o.scheduled_at < ? OR (o.scheduled_at = ? AND o.id < ?))
			AND (o.reason = ? OR o.next_attempt_at <= ?)
			AND NOT EXISTS (SELECT 1 FROM concurrency_slots sl WHERE sl.occurrence_id = o.id)`),
			r.Key, r.OccurrenceID, tx.ts(r.ScheduledAt), tx.ts(r.ScheduledAt), r.OccurrenceID,
			model.ReasonConcurrencyWait, tx.ts(r.Now)); err != nil {
			return fmt.Errorf("count rows waiting for the key: %w", err)
		}
		if !paused && st.InFlight+ahead < st.Limit {
			if _, err := tx.exec(ctx, `INSERT INTO concurrency_slots (occurrence_id, key, event_id, scheduled_at,
				acquired_at) VALUES (?, ?, ?, ?, ?)`, r.OccurrenceID, r.Key, r.EventID, tx.ts(r.ScheduledAt),
				tx.ts(r.Now)); err != nil {
				return fmt.Errorf("take concurrency slot: %w", err)
			}
			if r.Waiting {
				// The wait ends: the row takes back the reason it had
				// (backfill), kept aside while it waited.
				if _, err := tx.exec(ctx, `UPDATE occurrences SET error_message = NULL,
					reason = (SELECT w.reason FROM concurrency_waits w WHERE w.occurrence_id = occurrences.id)
					WHERE id = ? AND reason = ?`, r.OccurrenceID, model.ReasonConcurrencyWait); err != nil {
					return fmt.Errorf("end the wait for a slot: %w", err)
				}
				if _, err := tx.exec(ctx, `DELETE FROM concurrency_waits WHERE occurrence_id = ?`, r.OccurrenceID); err != nil {
					return fmt.Errorf("end the wait for a slot: %w", err)
				}
			}
			acquired = true
			return nil
		}
		if !r.Waiting {
			if _, err := tx.exec(ctx, `INSERT INTO concurrency_waits (occurrence_id, reason)
				SELECT id, reason FROM occurrences WHERE id = ? AND reason IS NOT NULL AND reason <> ?
				ON CONFLICT (occurrence_id) DO NOTHING`, r.OccurrenceID, model.ReasonConcurrencyWait); err != nil {
				return fmt.Errorf("keep the reason of a row waiting for its key: %w", err)
			}
		}
		res, err := tx.exec(ctx, statusSQL(`UPDATE occurrences SET reason = ?, next_attempt_at = ?, error_message = ?,
			updated_at = ? WHERE id = ? AND status IN {waiting} AND attempt_count = ?
			AND EXISTS (SELECT 1 FROM bucket_slots s WHERE s.slot = ? AND s.epoch = ?)`),
			model.ReasonConcurrencyWait, tx.ts(r.Recheck), r.Note, tx.ts(r.Now), r.OccurrenceID, r.Seen, r.Slot, r.Epoch)
		if err != nil {
			return fmt.Errorf("park a row waiting for its key: %w", err)
		}
		if affected(res) != 1 {
			return ErrConcurrencyFenced
		}
		return nil
	})
	return acquired, err
}

// keyLimitState is a key's limit (the smallest its live events name, 1 when
// none does any more) and its slots in flight.
type keyLimitState struct {
	Limit    int `db:"lim"`
	InFlight int `db:"in_flight"`
}

func (s *Store) keyState(ctx context.Context, key string) (keyLimitState, error) {
	var st keyLimitState
	err := s.get(ctx, &st, `SELECT
		COALESCE((SELECT MIN(concurrency_limit) FROM events WHERE concurrency_key = ? AND deleted_at IS NULL), 1) AS lim,
		(SELECT COUNT(*) FROM concurrency_slots WHERE key = ?) AS in_flight`, key, key)
	if err != nil {
		return st, fmt.Errorf("read concurrency key: %w", err)
	}
	return st, nil
}

// ReleaseConcurrency frees the slots of occurrences that ended and makes the
// oldest rows waiting for each of their keys due at now, as many as the
// key has room for. It reports whether it made any row due.
func (s *Store) ReleaseConcurrency(ctx context.Context, occurrenceIDs []string, now time.Time) (bool, error) {
	if len(occurrenceIDs) == 0 {
		return false, nil
	}
	released := false
	err := s.WithTx(ctx, func(tx *Store) error {
		var keys []string
		in := `occurrence_id IN (` + placeholders(len(occurrenceIDs)) + `)`
		if err := tx.selectAll(ctx, &keys, `SELECT DISTINCT key FROM concurrency_slots WHERE `+in,
			stringArgs(occurrenceIDs)...); err != nil {
			return fmt.Errorf("read concurrency slots: %w", err)
		}
		if len(keys) == 0 {
			return nil
		}
		if _, err := tx.exec(ctx, `DELETE FROM concurrency_slots WHERE `+in, stringArgs(occurrenceIDs)...); err != nil {
			return fmt.Errorf("free concurrency slots: %w", err)
		}
		for _, key := range keys {
			ok, err := tx.releaseWaiters(ctx, key, now)
			if err != nil {
				return err
			}
			released = released || ok
		}
		return nil
	})
	return released, err
}

// releaseWaiters makes the oldest rows waiting for key due at now, as many
// as it has free slots (none while it is paused).
func (s *Store) releaseWaiters(ctx context.Context, key string, now time.Time) (bool, error) {
	var paused bool
	err := s.get(ctx, &paused, `SELECT paused FROM concurrency_keys WHERE key = ?`, key)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return false, fmt.Errorf("read concurrency key: %w", err)
	}
	if paused {
		return false, nil
	}
	st, err := s.keyState(ctx, key)
	if err != nil {
		return false, err
	}
	free := st.Limit - st.InFlight
	if free <= 0 {
		return false, nil
	}
	res, err := s.exec(ctx, `UPDATE occurrences SET next_attempt_at = ?
		WHERE next_attempt_at > ? AND (id, scheduled_at) IN (SELECT o.id, o.scheduled_at FROM unfinished_occurrences o
			JOIN events e ON e.id = o.event_id
			WHERE `+waitingSQL+` AND e.concurrency_key = ? ORDER BY o.scheduled_at, o.id LIMIT ?)`,
		s.ts(now), s.ts(now), key, free)
	if err != nil {
		return false, fmt.Errorf("release rows waiting for their key: %w", err)
	}
	return affected(res) > 0, nil
}

// maxSweptConcurrency bounds one sweep of slots whose occurrence ended.
const maxSweptConcurrency = 1000

// SweepConcurrency frees the slots whose occurrence ended without the code that
// ended it freeing them (a cancellation, a skip, an outcome whose release
// failed, a crash between the two) and releases their keys' waiters. It
// returns how many it freed and whether it made any row due.
func (s *Store) SweepConcurrency(ctx context.Context, now time.Time) (int, bool, error) {
	var ids []string
	err := s.selectAll(ctx, &ids, statusSQL(`SELECT sl.occurrence_id FROM concurrency_slots sl
		WHERE NOT EXISTS (SELECT 1 FROM occurrences o WHERE o.id = sl.occurrence_id
			AND o.scheduled_at = sl.scheduled_at AND o.status IN {unfinished})
		LIMIT ?`), maxSweptConcurrency)
	if err != nil {
		return 0, false, fmt.Errorf("find slots of ended occurrences: %w", err)
	}
	released, err := s.ReleaseConcurrency(ctx, ids, now)
	if err != nil {
		return len(ids), released, err
	}
	// Reasons kept for rows that stopped waiting another way (cancelled,
	// skipped by an operator) have nobody to go back to.
	if _, err := s.exec(ctx, `DELETE FROM concurrency_waits WHERE NOT EXISTS (SELECT 1 FROM occurrences o
		WHERE o.id = concurrency_waits.occurrence_id AND `+waitingSQL+`)`); err != nil {
		return len(ids), released, fmt.Errorf("forget reasons of rows no longer waiting: %w", err)
	}
	return len(ids), released, nil
}

// ConcurrencyKey is a key's state: its limit, its occurrences in flight and
// waiting, and whether an operator paused it.
type ConcurrencyKey struct {
	Key      string     `db:"key"`
	Limit    int        `db:"lim"`
	InFlight int        `db:"in_flight"`
	Waiting  int        `db:"waiting"`
	Paused   bool       `db:"paused"`
	PausedAt *time.Time `db:"paused_at"`
	PausedBy *string    `db:"paused_by"`
}

// ConcurrencyKeyFilter selects keys: those named by a live event within
// the scope (every key in use when unrestricted, also one whose events
// are gone while its runs are still in flight), after After in key order.
type ConcurrencyKeyFilter struct {
	Key          string // exactly this key ("" for any)
	After        string
	Limit        int
	Scope        []string
	Unrestricted bool
}

// ListConcurrencyKeys returns the keys f selects, in key order.
func (s *Store) ListConcurrencyKeys(ctx context.Context, f ConcurrencyKeyFilter) ([]ConcurrencyKey, error) {
	named := `SELECT DISTINCT ev.concurrency_key AS key FROM events ev
		WHERE ev.concurrency_key IS NOT NULL AND ev.deleted_at IS NULL`
	var args []any
	if !f.Unrestricted {
		if len(f.Scope) == 0 {
			return []ConcurrencyKey{}, nil
		}
		named += ` AND EXISTS (SELECT 1 FROM event_tags t WHERE t.event_id = ev.id AND t.tag IN (` +
			placeholders(len(f.Scope)) + `))`
		args = append(args, stringArgs(f.Scope)...)
	} else {
		named += ` UNION SELECT DISTINCT key FROM concurrency_slots`
	}
	where := `k.key > ?`
	args = append(args, f.After)
	if f.Key != "" {
		where = `k.key = ?`
		args[len(args)-1] = f.Key
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	args = append(args, limit)
	out := []ConcurrencyKey{}
	err := s.selectAll(ctx, &out, `SELECT k.key,
		COALESCE((SELECT MIN(e.concurrency_limit) FROM events e WHERE e.concurrency_key = k.key AND e.deleted_at IS NULL), 1) AS lim,
		(SELECT COUNT(*) FROM concurrency_slots sl WHERE sl.key = k.key) AS in_flight,
		(SELECT COUNT(*) FROM unfinished_occurrences o JOIN events e ON e.id = o.event_id
			WHERE `+waitingSQL+` AND e.concurrency_key = k.key) AS waiting,
		COALESCE(c.paused, ?) AS paused, c.paused_at, c.paused_by
		FROM (`+named+`) k LEFT JOIN concurrency_keys c ON c.key = k.key
		WHERE `+where+` ORDER BY k.key LIMIT ?`, append([]any{false}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("list concurrency keys: %w", err)
	}
	return out, nil
}

// ConcurrencyKeyTags returns the tags of every live event naming key, one
// list per event (the API decides who may see and pause it).
func (s *Store) ConcurrencyKeyTags(ctx context.Context, key string) ([][]string, error) {
	var ids []string
	if err := s.selectAll(ctx, &ids, `SELECT id FROM events WHERE concurrency_key = ? AND deleted_at IS NULL`,
		key); err != nil {
		return nil, fmt.Errorf("read the events of a concurrency key: %w", err)
	}
	var rows []struct {
		EventID string `db:"event_id"`
		Tag     string `db:"tag"`
	}
	if len(ids) > 0 {
		if err := s.selectAll(ctx, &rows, `SELECT event_id, tag FROM event_tags WHERE event_id IN (`+
			placeholders(len(ids))+`)`, stringArgs(ids)...); err != nil {
			return nil, fmt.Errorf("read the tags of a concurrency key's events: %w", err)
		}
	}
	byEvent := make(map[string][]string, len(ids))
	for _, id := range ids {
		byEvent[id] = []string{}
	}
	for _, r := range rows {
		byEvent[r.EventID] = append(byEvent[r.EventID], r.Tag)
	}
	out := make([][]string, 0, len(ids))
	for _, id := range ids {
		out = append(out, byEvent[id])
	}
	return out, nil
}

// PauseConcurrencyKey pauses a key (no occurrence of it takes a slot; the
// runs in flight go on) or resumes it, which makes its oldest waiters due
// at now as far as it has room. It reports whether a resume made any due.
func (s *Store) PauseConcurrencyKey(ctx context.Context, key string, paused bool, by string, now time.Time) (bool, error) {
	released := false
	err := s.WithTx(ctx, func(tx *Store) error {
		if _, err := tx.exec(ctx, `INSERT INTO concurrency_keys (key, created_at) VALUES (?, ?)
			ON CONFLICT (key) DO NOTHING`, key, tx.ts(now)); err != nil {
			return fmt.Errorf("register concurrency key: %w", err)
		}
		var at any
		var who *string
		if paused {
			at, who = tx.ts(now), &by
		}
		if _, err := tx.exec(ctx, `UPDATE concurrency_keys SET paused = ?, paused_at = ?, paused_by = ? WHERE key = ?`,
			paused, at, who, key); err != nil {
			return fmt.Errorf("pause concurrency key: %w", err)
		}
		if paused {
			return nil
		}
		var err error
		released, err = tx.releaseWaiters(ctx, key, now)
		return err
	})
	return released, err
}
