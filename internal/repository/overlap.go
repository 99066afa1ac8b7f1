package repository

import (
	"context"
	"fmt"
	"time"

	"github.com/qhronos/qhronos/internal/model"
)

// OverlapRow is an occurrence an instant's overlap policy weighs: a run of
// the same event in progress, or an earlier instant still pending.
type OverlapRow struct {
	ID          string                 `db:"id"`
	Status      model.OccurrenceStatus `db:"status"`
	ScheduledAt rollupInstant          `db:"scheduled_at"`
}

// maxOverlapRows bounds what OverlapRows reads: the policies only need to
// know whether a run is in progress and whether an instant already waits,
// and cancel_previous cancels the rest on a later instant.
const maxOverlapRows = 1000

// OverlapRows returns the occurrences of an event other than self that
// are in progress (model.InProgress; a row its owner is delivering stays
// pending and is known only to that dispatcher) and the pending ones
// scheduled before before, oldest first. Each half reads an index of its
// own states: the event's waiting rows, and the held ones.
func (s *Store) OverlapRows(ctx context.Context, eventID, self string, before time.Time) ([]OverlapRow, error) {
	var rows []OverlapRow
	err := s.selectAll(ctx, &rows, statusSQL(`SELECT id, status, scheduled_at FROM unfinished_occurrences
		WHERE event_id = ? AND id <> ? AND status IN {waiting} AND (status = {retrying} OR scheduled_at < ?)
		UNION ALL
		SELECT id, status, scheduled_at FROM unfinished_occurrences WHERE event_id = ? AND id <> ? AND status IN {held}
		ORDER BY scheduled_at LIMIT ?`), eventID, self, s.ts(before), eventID, self, maxOverlapRows)
	if err != nil {
		return nil, fmt.Errorf("read the event's runs in progress: %w", err)
	}
	return rows, nil
}

// CancelOverlapped ends the given occurrences, those still unfinished,
// cancelled with reason overlap: a newer instant of an event whose policy
// is cancel_previous started. A running run's receiver that reports it
// afterwards is refused (ErrRunEnded); a delivery of one still in flight
// is recorded as an attempt while the row stays cancelled; their
// concurrency slots are freed. It returns how many it ended.
func (s *Store) CancelOverlapped(ctx context.Context, ids []string, now time.Time) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	msg := "cancelled: a newer instant of the event started (overlap: cancel_previous)"
	var rows []changedOccurrence
	err := s.WithTx(ctx, func(tx *Store) error {
		var err error
		rows, err = tx.updateOccurrences(ctx, `status = ?, reason = ?, error_message = ?, updated_at = ?,
			completed_at = ?, lease_expires_at = NULL`,
			[]any{model.OccurrenceCancelled, model.ReasonOverlap, msg, tx.ts(now), tx.ts(now)},
			statusSQL(`status IN {unfinished} AND id IN (`)+placeholders(len(ids))+`)`, stringArgs(ids))
		if err != nil {
			return err
		}
		// Their concurrency slots go to the key's next waiters (the new
		// instant asks for one after this).
		_, err = tx.ReleaseConcurrency(ctx, ids, now)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("cancel overlapped runs: %w", err)
	}
	return len(rows), nil
}

// ReleaseWaiting makes the earliest instant of an event that waits for a
// run to end (pending, its instant past, due again only later: parked by
// the buffer_one or buffer_all policy) due at now. It reports whether one
// was released; the dispatcher that owns it fires it on its next read.
func (s *Store) ReleaseWaiting(ctx context.Context, eventID string, now time.Time) (bool, error) {
	res, err := s.exec(ctx, statusSQL(`UPDATE occurrences SET next_attempt_at = ?, updated_at = ?
		WHERE (id, scheduled_at) IN (SELECT id, scheduled_at FROM unfinished_occurrences WHERE event_id = ?
			AND status = {pending} AND scheduled_at <= ? AND next_attempt_at > ? ORDER BY scheduled_at LIMIT 1)`),
		s.ts(now), s.ts(now), eventID, s.ts(now), s.ts(now))
	if err != nil {
		return false, fmt.Errorf("release a waiting instant: %w", err)
	}
	return affected(res) == 1, nil
}

// releaseWaitingOf releases the waiting instant of each of the events
// whose overlap policy buffers instants (runs of them just ended outside
// the dispatcher: a completion, a timeout). It reports whether any was.
func (s *Store) releaseWaitingOf(ctx context.Context, eventIDs []string, now time.Time) (bool, error) {
	if len(eventIDs) == 0 {
		return false, nil
	}
	var buffered []string
	if err := s.selectAll(ctx, &buffered, `SELECT id FROM events WHERE overlap IN (?, ?) AND id IN (`+
		placeholders(len(eventIDs))+`)`, append([]any{model.OverlapBufferOne, model.OverlapBufferAll},
		stringArgs(eventIDs)...)...); err != nil {
		return false, fmt.Errorf("read buffering events: %w", err)
	}
	released := false
	for _, id := range buffered {
		ok, err := s.ReleaseWaiting(ctx, id, now)
		if err != nil {
			return false, err
		}
		released = released || ok
	}
	return released, nil
}
