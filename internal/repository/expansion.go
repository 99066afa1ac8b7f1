package repository

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/qhronos/qhronos/internal/model"
)

// SeriesEnd is the expander cursor of an event whose series has no instant
// left to materialize (a one-time event after its instant was expanded, or a
// finished RRULE). An active event whose cursor is SeriesEnd and that has no
// unfinished occurrence is settled to inactive.
var SeriesEnd = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)

// unfinishedStatuses are the occurrence states that may still fire or are
// waiting for an outcome.
const unfinishedStatuses = `('pending', 'retrying', 'dispatching', 'awaiting_ack')`

// EventsToExpand returns active events whose cursor is behind horizon (or
// that were never expanded), ordered by id after afterID, at most limit.
func (s *Store) EventsToExpand(ctx context.Context, horizon time.Time, afterID string, limit int) ([]model.Event, error) {
	q := `SELECT ` + eventColumns + ` FROM events WHERE status = 'active' AND deleted_at IS NULL
		AND (expanded_until IS NULL OR expanded_until < ?) AND id > ? ORDER BY id LIMIT ?`
	after := afterID
	if after == "" {
		after = s.d.minUUID
	}
	var rows []eventRow
	if err := s.selectAll(ctx, &rows, q, s.ts(horizon), after, limit); err != nil {
		return nil, fmt.Errorf("list events to expand: %w", err)
	}
	return decodeEvents(rows)
}

// EventsByID returns the events with the given ids, deleted ones included
// (the dispatcher must see deletions to refuse stale occurrences).
func (s *Store) EventsByID(ctx context.Context, ids []string) (map[string]model.Event, error) {
	out := make(map[string]model.Event, len(ids))
	ids = dedupe(ids)
	for start := 0; start < len(ids); start += insertBatch {
		chunk := ids[start:min(start+insertBatch, len(ids))]
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		var rows []eventRow
		q := `SELECT ` + eventColumns + ` FROM events WHERE id IN (` + placeholders(len(chunk)) + `)`
		if err := s.selectAll(ctx, &rows, q, args...); err != nil {
			return nil, fmt.Errorf("get events by id: %w", err)
		}
		evs, err := decodeEvents(rows)
		if err != nil {
			return nil, err
		}
		for _, e := range evs {
			out[e.ID] = e
		}
	}
	return out, nil
}

func decodeEvents(rows []eventRow) ([]model.Event, error) {
	out := make([]model.Event, 0, len(rows))
	for i := range rows {
		e, err := rows[i].event()
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// ExpansionUpdate is the expander's bookkeeping for one event.
type ExpansionUpdate struct {
	EventID string
	// Version fences the update: expansion computed from an older version of
	// the event (edited meanwhile) must not be kept.
	Version       int64
	ExpandedUntil time.Time
	// NextRunAt is used when no unfinished occurrence is waiting.
	NextRunAt *time.Time
	Now       time.Time
}

// ExpansionResult reports what SetExpansion changed.
type ExpansionResult struct {
	NextRunAt *time.Time
	// Inactive is set when the series ended and nothing is left to fire, so
	// the event was settled to inactive (its version bumped).
	Inactive bool
}

// SetExpansion moves an event's cursor and next_run_at, and settles it to
// inactive when its series ended with nothing unfinished. It does not bump
// the version (these fields are read-only bookkeeping) unless the status
// changes. ErrStaleVersion when the event changed since it was read.
func (s *Store) SetExpansion(ctx context.Context, u ExpansionUpdate) (ExpansionResult, error) {
	var res ExpansionResult
	err := s.WithTx(ctx, func(tx *Store) error {
		next, err := tx.nextPending(ctx, u.EventID)
		if err != nil {
			return err
		}
		if next == nil {
			next = u.NextRunAt
		}
		r, err := tx.exec(ctx, `UPDATE events SET expanded_until = ?, next_run_at = ?
			WHERE id = ? AND version = ? AND status = 'active' AND deleted_at IS NULL`,
			tx.ts(u.ExpandedUntil), tx.tsp(next), u.EventID, u.Version)
		if err != nil {
			return fmt.Errorf("set expansion cursor: %w", err)
		}
		if n, _ := r.RowsAffected(); n != 1 {
			return model.ErrStaleVersion
		}
		res.NextRunAt = utcp(next)
		if !u.ExpandedUntil.Equal(SeriesEnd) {
			return nil // the series goes on: nothing to settle
		}
		settled, err := tx.settleEvents(ctx, []string{u.EventID}, u.Now)
		if err != nil {
			return err
		}
		res.Inactive = settled > 0
		if res.Inactive {
			res.NextRunAt = nil
		}
		return nil
	})
	return res, err
}

// nextPending is the earliest instant at which an occurrence of the event is
// waiting to be attempted.
func (s *Store) nextPending(ctx context.Context, eventID string) (*time.Time, error) {
	var rows []time.Time
	err := s.selectAll(ctx, &rows, `SELECT next_attempt_at FROM occurrences WHERE event_id = ?
		AND status IN ('pending', 'retrying') ORDER BY next_attempt_at LIMIT 1`, eventID)
	if err != nil {
		return nil, fmt.Errorf("next pending occurrence: %w", err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	t := rows[0].UTC()
	return &t, nil
}

// settleEventsWhere selects active events whose series ended (cursor at
// SeriesEnd) and that have no unfinished, non-manual occurrence.
const settleEventsWhere = `status = 'active' AND deleted_at IS NULL AND expanded_until >= ?
	AND NOT EXISTS (SELECT 1 FROM occurrences o WHERE o.event_id = events.id AND o.manual = ?
		AND o.status IN ` + unfinishedStatuses + `)`

// settleEvents marks the given events inactive when their series is over.
func (s *Store) settleEvents(ctx context.Context, ids []string, now time.Time) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	args := []any{model.EventInactive, s.ts(now), s.ts(SeriesEnd), false}
	for _, id := range ids {
		args = append(args, id)
	}
	r, err := s.exec(ctx, `UPDATE events SET status = ?, next_run_at = NULL, updated_at = ?, version = version + 1
		WHERE `+settleEventsWhere+` AND id IN (`+placeholders(len(ids))+`)`, args...)
	if err != nil {
		return 0, fmt.Errorf("settle ended events: %w", err)
	}
	n, _ := r.RowsAffected()
	return int(n), nil
}

// SettleEndedEvents marks up to limit active events inactive whose series
// ended and whose occurrences are all terminal (a sweep that catches events
// finished by an acknowledgement or a rescue).
func (s *Store) SettleEndedEvents(ctx context.Context, now time.Time, limit int) (int, error) {
	var ids []string
	err := s.selectAll(ctx, &ids, `SELECT id FROM events WHERE `+settleEventsWhere+` ORDER BY id LIMIT ?`,
		s.ts(SeriesEnd), false, limit)
	if err != nil {
		return 0, fmt.Errorf("find ended events: %w", err)
	}
	return s.settleEvents(ctx, ids, now)
}

// Reposition sets an event's expander cursor without a version check (pause,
// resume and edits run it inside the transaction that changed the event).
func (s *Store) Reposition(ctx context.Context, eventID string, cursor *time.Time) error {
	if _, err := s.exec(ctx, `UPDATE events SET expanded_until = ? WHERE id = ?`, s.tsp(cursor), eventID); err != nil {
		return fmt.Errorf("reposition expansion cursor: %w", err)
	}
	return nil
}

// ClearNextRun forgets an event's next_run_at (it is paused).
func (s *Store) ClearNextRun(ctx context.Context, eventID string) error {
	if _, err := s.exec(ctx, `UPDATE events SET next_run_at = NULL WHERE id = ?`, eventID); err != nil {
		return fmt.Errorf("clear next run: %w", err)
	}
	return nil
}

// CancelFutureOccurrences cancels an event's occurrences scheduled at or
// after from that have not fired: pending and retrying rows, and rows a
// dispatcher has claimed but is still holding until their instant (their
// lease is revoked, so the dispatcher's pre-fire check drops them). Manual
// triggers are kept when keepManual. Used by pause and edit.
func (s *Store) CancelFutureOccurrences(ctx context.Context, eventID string, from time.Time, keepManual bool, now time.Time) (int, error) {
	q := `UPDATE occurrences SET status = 'cancelled', lease_token = NULL, lease_owner = NULL,
		lease_expires_at = NULL, updated_at = ?, completed_at = ?
		WHERE event_id = ? AND scheduled_at >= ? AND (status IN ('pending', 'retrying')
			OR (status = 'dispatching' AND scheduled_at > ?))`
	args := []any{s.ts(now), s.ts(now), eventID, s.ts(from), s.ts(now)}
	if keepManual {
		q += ` AND manual = ?`
		args = append(args, false)
	}
	r, err := s.exec(ctx, q, args...)
	if err != nil {
		return 0, fmt.Errorf("cancel future occurrences: %w", err)
	}
	n, _ := r.RowsAffected()
	return int(n), nil
}

// LatestOverdue returns, per event, the newest scheduled instant of its
// unfinished non-manual occurrences scheduled at or before cutoff (the one
// a catch_up=latest event still fires).
func (s *Store) LatestOverdue(ctx context.Context, eventIDs []string, cutoff time.Time) (map[string]time.Time, error) {
	out := map[string]time.Time{}
	for _, id := range dedupe(eventIDs) {
		var rows []time.Time
		err := s.selectAll(ctx, &rows, `SELECT scheduled_at FROM occurrences WHERE event_id = ? AND manual = ?
			AND status IN `+unfinishedStatuses+` AND scheduled_at <= ? ORDER BY scheduled_at DESC LIMIT 1`,
			id, false, s.ts(cutoff))
		if err != nil {
			return nil, fmt.Errorf("latest overdue occurrence: %w", err)
		}
		if len(rows) == 1 {
			out[id] = rows[0].UTC()
		}
	}
	return out, nil
}

// LeaseCheck is an occurrence's lease and its event's state just before a
// dispatcher fires it.
type LeaseCheck struct {
	OccurrenceID string            `db:"id"`
	Held         bool              `db:"-"`
	LeaseToken   *string           `db:"lease_token"`
	Status       string            `db:"status"`
	EventStatus  model.EventStatus `db:"event_status"`
	EventVersion int64             `db:"event_version"`
	EventDeleted *time.Time        `db:"deleted_at"`
}

// CheckLeases reads, for each claimed occurrence, whether token still holds
// its lease and the current state of its event.
func (s *Store) CheckLeases(ctx context.Context, token string, ids []string) (map[string]LeaseCheck, error) {
	out := make(map[string]LeaseCheck, len(ids))
	for start := 0; start < len(ids); start += insertBatch {
		chunk := ids[start:min(start+insertBatch, len(ids))]
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		var rows []LeaseCheck
		err := s.selectAll(ctx, &rows, `SELECT o.id, o.lease_token, o.status, e.status AS event_status,
			e.version AS event_version, e.deleted_at FROM occurrences o JOIN events e ON e.id = o.event_id
			WHERE o.id IN (`+placeholders(len(chunk))+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("check leases: %w", err)
		}
		for _, r := range rows {
			r.Held = r.Status == string(model.OccurrenceDispatching) && r.LeaseToken != nil && *r.LeaseToken == token
			out[r.OccurrenceID] = r
		}
	}
	return out, nil
}

// DispatchRecord is one outcome a dispatcher writes, with its effect on the
// event.
type DispatchRecord struct {
	OutcomeRecord
	// Uncount undoes the attempt count of the claim: the row was resolved
	// (missed, cancelled) without an attempt.
	Uncount bool
	// EventID names the event whose bookkeeping follows the outcome.
	EventID string
	// Ran is set when an attempt was made: last_run_at and last_status.
	Ran        bool
	LastStatus string
	// PauseReason, when set, pauses the event (410 Gone): its pending
	// non-manual occurrences are cancelled and last_status says why.
	PauseReason string
}

// RecordDispatch applies a batch of outcomes and their event bookkeeping in
// one transaction. Each outcome is fenced by its lease token; a record whose
// lease was lost gets ErrLeaseLost in the result slice and changes nothing.
func (s *Store) RecordDispatch(ctx context.Context, recs []DispatchRecord) ([]error, error) {
	var results []error
	err := s.WithTx(ctx, func(tx *Store) error {
		outcomes := make([]*OutcomeRecord, len(recs))
		for i := range recs {
			r := &recs[i]
			outcomes[i] = &r.OutcomeRecord
			if r.Uncount {
				if _, err := tx.exec(ctx, `UPDATE occurrences SET attempt_count = attempt_count - 1,
					started_at = CASE WHEN attempt_count <= 1 THEN NULL ELSE started_at END
					WHERE id = ? AND lease_token = ? AND status = 'dispatching'`, r.OccurrenceID, r.LeaseToken); err != nil {
					return fmt.Errorf("uncount skipped attempt: %w", err)
				}
			}
		}
		var err error
		if results, err = tx.applyOutcomes(ctx, outcomes); err != nil {
			return err
		}
		var attempts []*model.Attempt
		events := map[string]*DispatchRecord{} // the latest applied record of each event
		var order []string
		for i := range recs {
			r := &recs[i]
			if results[i] != nil {
				continue
			}
			if r.Attempt != nil {
				attempts = append(attempts, r.Attempt)
			}
			if r.EventID == "" {
				continue
			}
			if r.PauseReason != "" {
				if err := tx.pauseGoneEvent(ctx, r); err != nil {
					return err
				}
			}
			if prev, seen := events[r.EventID]; !seen {
				order = append(order, r.EventID)
			} else if !r.Ran && prev.Ran {
				continue // keep the record that says when the event last ran
			}
			events[r.EventID] = r
		}
		if err := tx.insertAttempts(ctx, attempts); err != nil {
			return err
		}
		// A fixed order keeps concurrent recorders from deadlocking on events.
		sort.Strings(order)
		if err := tx.noteEventRuns(ctx, order, events); err != nil {
			return err
		}
		_, err = tx.settleEvents(ctx, order, latestNow(recs))
		return err
	})
	if err != nil {
		return nil, err
	}
	return results, nil
}

func latestNow(recs []DispatchRecord) time.Time {
	var t time.Time
	for _, r := range recs {
		if r.Now.After(t) {
			t = r.Now
		}
	}
	return t
}

// noteEventRun updates last_run_at, last_status and next_run_at after an
// outcome, and pauses the event when the receiver is gone.
func (s *Store) noteEventRuns(ctx context.Context, ids []string, recs map[string]*DispatchRecord) error {
	const perStatement = 500 // 4 parameters a row
	for start := 0; start < len(ids); start += perStatement {
		chunk := ids[start:min(start+perStatement, len(ids))]
		var sb strings.Builder
		args := make([]any, 0, 4*len(chunk))
		for k, id := range chunk {
			r := recs[id]
			var lastRun *time.Time
			var lastStatus *string
			if r.Ran {
				at := r.Now
				if r.Attempt != nil {
					at = r.Attempt.StartedAt
				}
				status := r.LastStatus
				if r.PauseReason != "" {
					status = r.PauseReason
				}
				lastRun, lastStatus = &at, &status
			}
			if k > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString(s.d.typedRow("uuid", "timestamptz", "text", "timestamptz"))
			args = append(args, id, s.tsp(lastRun), lastStatus, s.ts(r.Now))
		}
		// next_run_at is the earliest waiting occurrence; with none waiting, a
		// future next_run_at the expander computed beyond its window is kept
		// and a stale one dropped.
		q := `WITH v(id, last_run_at, last_status, now) AS (VALUES ` + sb.String() + `)
			UPDATE events SET
				last_run_at = COALESCE((SELECT v.last_run_at FROM v WHERE v.id = events.id), last_run_at),
				last_status = COALESCE((SELECT v.last_status FROM v WHERE v.id = events.id), last_status),
				next_run_at = COALESCE(
					(SELECT MIN(o.next_attempt_at) FROM occurrences o
						WHERE o.event_id = events.id AND o.status IN ('pending', 'retrying')),
					CASE WHEN status = 'active' AND next_run_at > (SELECT v.now FROM v WHERE v.id = events.id)
						THEN next_run_at END)
			WHERE id IN (SELECT id FROM v)`
		if _, err := s.exec(ctx, q, args...); err != nil {
			return fmt.Errorf("note event runs: %w", err)
		}
	}
	return nil
}

// pauseGoneEvent pauses an event whose receiver answered 410 and cancels its
// pending non-manual occurrences.
func (s *Store) pauseGoneEvent(ctx context.Context, r *DispatchRecord) error {
	if _, err := s.exec(ctx, `UPDATE events SET status = ?, last_status = ?, updated_at = ?,
		version = version + 1 WHERE id = ? AND status = 'active'`,
		model.EventPaused, r.PauseReason, s.ts(r.Now), r.EventID); err != nil {
		return fmt.Errorf("pause gone event: %w", err)
	}
	_, err := s.CancelFutureOccurrences(ctx, r.EventID, time.Time{}, true, r.Now)
	return err
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
