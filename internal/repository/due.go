package repository

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/qhronos/qhronos/internal/model"
)

// The hot path on owned buckets (#36). The owner of a bucket slot reads the
// due rows of its slots without writing anything (no claim: the rows stay
// pending or retrying), keeps what it sends in memory, and writes each
// outcome once, fenced by the slot's epoch and by the attempt count it read
// (OutcomeRecord.Epoch, .Seen): a write under an epoch the slot no longer
// has, or on a row someone changed meanwhile, changes nothing.

// DueRequest is one read of due work by a slot owner.
type DueRequest struct {
	// Until is the latest next_attempt_at read (now plus claim-ahead).
	Until time.Time
	// Slots are the ownership slots read; nil or all of them: every row.
	Slots []int
	// Skip are rows the owner already has in memory (sent, not recorded).
	Skip  []string
	Limit int
	// After, when set, is the key of a row the owner read before: every
	// row up to it that was waiting then is in the owner's memory, or was
	// settled since. Where the due index is by key (both stores since #36)
	// the read starts after it and leaves nothing out, instead of leaving
	// out Skip, which it had to pass as a list and walk past along the
	// index on every read. A row that comes back to waiting behind the key
	// (a retry, an outcome not written, a row let go) is found by a read
	// without it: the owner drops the key on any such wake-up and at least
	// once per max_sleep.
	After *DueKey
}

// DueKey is a waiting row's place in the due index: its instant, then its
// id.
type DueKey struct {
	At time.Time
	ID string
}

// KeyOf is the due key of a row as read.
func KeyOf(o *model.Occurrence) DueKey { return DueKey{At: o.NextAttemptAt, ID: o.ID} }

// ReadDue returns up to Limit occurrences of the given slots that are due
// by Until, oldest first, leaving out Skip. Nothing is written.
func (s *Store) ReadDue(ctx context.Context, r DueRequest) ([]model.Occurrence, error) {
	out, _, err := s.readDue(ctx, r, false)
	return out, err
}

// ReadDueAndNext is ReadDue that also returns, when the answer holds fewer
// than Limit rows, the earliest instant of a waiting row of the slots after
// Until (nil when there is none, or when the answer is full). With every
// row due by Until either in the answer, in Skip or up to After, that is
// the earliest instant this owner does not hold: it sleeps till then
// without asking again. The rows in Skip (or up to After), which a
// separate ask had to walk past one by one along the due index, lie at or
// before Until: the ask for the next instant starts after them.
func (s *Store) ReadDueAndNext(ctx context.Context, r DueRequest) ([]model.Occurrence, *time.Time, error) {
	return s.readDue(ctx, r, true)
}

func (s *Store) readDue(ctx context.Context, r DueRequest, withNext bool) ([]model.Occurrence, *time.Time, error) {
	where, args := s.dueWhere(r.Slots, r.Skip)
	if r.After != nil {
		where, args = s.dueAfterWhere(r.Slots, *r.After)
	}
	var out []model.Occurrence
	var next *time.Time
	err := s.ByKey(ctx, func(tx *Store) error {
		var err error
		if out, err = tx.selectDue(ctx, r, where, args); err != nil {
			return err
		}
		if !withNext || len(out) >= r.Limit {
			return nil
		}
		slotsWhere, slotArgs := s.dueWhere(r.Slots, nil)
		next, err = tx.firstWaiting(ctx, ` AND next_attempt_at > ?`+slotsWhere, append([]any{tx.ts(r.Until)}, slotArgs...))
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("read due occurrences: %w", err)
	}
	return out, next, nil
}

// selectDue reads up to r.Limit waiting rows due by r.Until that also
// match where (" AND …", with its args), oldest first by key, so that an
// answer's last row bounds everything it left out. Run it planned by key:
// the oldest rows first along the due index, stopping at the limit. Planned from statistics that lag a burst,
// PostgreSQL took the backlog for a few rows and read and sorted all of it
// (a bitmap scan) for every batch: a cost per delivery that grew with the
// backlog.
func (s *Store) selectDue(ctx context.Context, r DueRequest, where string, args []any) ([]model.Occurrence, error) {
	q := statusSQL(`SELECT `+dueColumns+` FROM queued_occurrences WHERE status IN {waiting} AND next_attempt_at <= ?`) +
		where + ` ORDER BY next_attempt_at, id LIMIT ?`
	out := make([]model.Occurrence, 0, min(r.Limit, 1024)) // scanned into without regrowth
	if err := selectListed(ctx, s, &out, dueFields, q, append(append([]any{s.ts(r.Until)}, args...), r.Limit)...); err != nil {
		return nil, err
	}
	return normalizeAll(out), nil
}

// dueAfterWhere filters waiting rows to slots and to those after key in
// the due index.
func (s *Store) dueAfterWhere(slots []int, key DueKey) (string, []any) {
	where, args := s.dueWhere(slots, nil)
	return ` AND (next_attempt_at, id) > (?, ?)` + where, append([]any{s.ts(key.At), key.ID}, args...)
}

// NextDueIn returns the earliest next_attempt_at of a waiting occurrence of
// the given slots, leaving out skip, or after the key after when it is set
// (see DueRequest.After), or nil when none is waiting.
func (s *Store) NextDueIn(ctx context.Context, slots []int, skip []string, after *DueKey) (*time.Time, error) {
	where, args := s.dueWhere(slots, skip)
	if after != nil {
		where, args = s.dueAfterWhere(slots, *after)
	}
	var next *time.Time
	err := s.ByKey(ctx, func(tx *Store) error { // as ReadDue
		var err error
		next, err = tx.firstWaiting(ctx, where, args)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("next due occurrence: %w", err)
	}
	return next, nil
}

// firstWaiting is the earliest next_attempt_at of a waiting occurrence that
// also matches where (" AND …" with its args), or nil when none does.
func (s *Store) firstWaiting(ctx context.Context, where string, args []any) (*time.Time, error) {
	var rows []time.Time
	if err := s.selectHot(ctx, &rows, statusSQL(`SELECT next_attempt_at FROM queued_occurrences WHERE status IN {waiting}`)+
		where+` ORDER BY next_attempt_at LIMIT 1`, args...); err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, nil
	}
	t := rows[0].UTC()
	return &t, nil
}

// dueWhere filters waiting rows to slots (all of them when slots is nil or
// complete) and leaves out skip (one JSON argument: a hashed anti-join on
// PostgreSQL, however many rows are in memory).
func (s *Store) dueWhere(slots []int, skip []string) (string, []any) {
	var sb strings.Builder
	var args []any
	if len(slots) > 0 && len(slots) < model.Slots {
		sb.WriteString(` AND bucket / ` + strconv.Itoa(model.SlotBuckets) + ` IN (` + placeholders(len(slots)) + `)`)
		for _, sl := range slots {
			args = append(args, sl)
		}
	}
	if len(skip) > 0 {
		ids, _ := json.Marshal(skip)
		value := "j.value"
		if s.d.backend == Postgres {
			value = "j.value::uuid"
		}
		sb.WriteString(` AND id NOT IN (SELECT ` + value + ` FROM ` + s.d.jsonStrings("?") + `)`)
		args = append(args, string(ids))
	}
	return sb.String(), args
}

// DueCheck is an occurrence's state and its event's, read just before its
// owner fires it.
type DueCheck struct {
	OccurrenceID string                 `db:"id"`
	Status       model.OccurrenceStatus `db:"status"`
	AttemptCount int                    `db:"attempt_count"`
	EventStatus  model.EventStatus      `db:"event_status"`
	EventVersion int64                  `db:"event_version"`
	EventDeleted *time.Time             `db:"deleted_at"`
}

// Unchanged reports whether the row is still waiting as its owner read it
// (seen: the attempt count then): not cancelled, recorded or rescheduled by
// anyone since.
func (c *DueCheck) Unchanged(seen int) bool {
	return c.Status.In(model.Waiting) && c.AttemptCount == seen
}

// HeldRow names a row its owner holds: its id and the instant it was read
// at.
type HeldRow struct {
	ID          string
	ScheduledAt time.Time
}

// CheckDue reads, for each row, its state and its event's. A row is matched
// on the instant it was read at too: one moved to another instant since is
// not found (so it is not fired at the old one, and the next read takes it
// at the new one), and on PostgreSQL each row is looked up in its own time
// slice only, not in every slice of the history.
func (s *Store) CheckDue(ctx context.Context, keys []HeldRow) (map[string]DueCheck, error) {
	out := make(map[string]DueCheck, len(keys))
	err := s.ByKey(ctx, func(tx *Store) error {
		start := 0
		for _, size := range s.batchSizes(len(keys), 256, insertBatch) {
			chunk := keys[start : start+size]
			start += size
			var rows string
			var args []any
			if tx.d.backend == Postgres {
				ids, instants := make([]string, len(chunk)), make([]time.Time, len(chunk))
				for i, k := range chunk {
					ids[i], instants[i] = k.ID, k.ScheduledAt.UTC()
				}
				rows, args = `SELECT * FROM unnest(?::uuid[], ?::timestamptz[])`, []any{uuidArray(ids), instants}
			} else {
				rows = `VALUES ` + strings.TrimSuffix(strings.Repeat("(?, ?), ", len(chunk)), ", ")
				args = make([]any, 0, 2*len(chunk))
				for _, k := range chunk {
					args = append(args, k.ID, tx.ts(k.ScheduledAt))
				}
			}
			var found []DueCheck
			err := tx.selectHot(ctx, &found, `WITH v(id, at) AS (`+rows+`)
				SELECT o.id, o.status, o.attempt_count, e.status AS event_status, e.version AS event_version,
				e.deleted_at FROM v JOIN occurrences o ON o.id = v.id AND o.scheduled_at = v.at
				JOIN events e ON e.id = o.event_id`, args...)
			if err != nil {
				return fmt.Errorf("check due occurrences: %w", err)
			}
			for _, r := range found {
				out[r.OccurrenceID] = r
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DeferDue makes an owned row due again at until without an attempt, with
// note as its error_message so the wait shows (an endpoint's rate limit,
// concurrency or open circuit held it). Fenced like an outcome; it reports
// whether the row was changed.
func (s *Store) DeferDue(ctx context.Context, id string, slot int, epoch int64, seen int, until time.Time, note string,
	now time.Time) (bool, error) {
	q := statusSQL(`UPDATE occurrences SET next_attempt_at = ?, error_message = ?, updated_at = ?
		WHERE id = ? AND status IN {waiting} AND attempt_count = ?
		AND EXISTS (SELECT 1 FROM bucket_slots s WHERE s.slot = ? AND s.epoch = ?)`)
	res, err := s.exec(ctx, q, s.ts(until), note, s.ts(now), id, seen, slot, epoch)
	if err != nil {
		return false, fmt.Errorf("defer due occurrence: %w", err)
	}
	return affected(res) == 1, nil
}

// attemptsToInsert returns the records whose attempts a batch records: the
// applied ones, and owned ones refused only because the row was cancelled
// while its delivery was under way (a pause or a delete cancels every
// waiting row, and nothing in the row says its owner is sending it): the
// delivery happened, so its attempt is history like any other, while the
// row keeps the state the user asked for. A record refused for its epoch or
// attempt count is another owner's business and writes nothing.
func (s *Store) attemptsToInsert(ctx context.Context, recs []OutcomeRecord, results []error) ([]int, error) {
	var out []int
	var ids []any
	for i := range recs {
		switch {
		case recs[i].Attempt == nil && len(recs[i].Deliveries) == 0:
		case results[i] == nil:
			out = append(out, i)
		case recs[i].owned():
			ids = append(ids, recs[i].OccurrenceID)
		}
	}
	if len(ids) == 0 {
		return out, nil
	}
	var rows []struct {
		ID           string `db:"id"`
		AttemptCount int    `db:"attempt_count"`
	}
	err := s.selectAll(ctx, &rows, statusSQL(`SELECT id, attempt_count FROM occurrences WHERE status IN ({cancelled}, {skipped})
		AND id IN (`)+placeholders(len(ids))+`)`, ids...)
	if err != nil {
		return nil, fmt.Errorf("read occurrences cancelled during their delivery: %w", err)
	}
	if len(rows) == 0 {
		return out, nil
	}
	var slots []SlotLease
	if err := s.selectAll(ctx, &slots, `SELECT slot, epoch FROM bucket_slots`); err != nil {
		return nil, fmt.Errorf("read slot epochs: %w", err)
	}
	epochs := make(map[int]int64, len(slots))
	for _, sl := range slots {
		epochs[sl.Slot] = sl.Epoch
	}
	cancelled := make(map[string]int, len(rows))
	for _, r := range rows {
		cancelled[r.ID] = r.AttemptCount
	}
	for i := range recs {
		r := &recs[i]
		if count, ok := cancelled[r.OccurrenceID]; ok && results[i] != nil && r.owned() && (r.Attempt != nil || len(r.Deliveries) > 0) &&
			count == r.Seen && epochs[r.Slot] == r.Epoch {
			out = append(out, i)
		}
	}
	sort.Ints(out)
	return out, nil
}
