package repository

import (
	"context"
	"fmt"
	"time"

	"github.com/qhronos/qhronos/internal/model"
)

// ErrRunEnded is CompleteRun's and Heartbeat's answer for an occurrence whose
// run is over (completed with another status, failed, timed out,
// cancelled) or that has no run under way (not delivered yet, or a
// delivery that failed).
var ErrRunEnded = fmt.Errorf("%w: the occurrence has no run under way", model.ErrConflict)

// inFlight is the SQL condition of a row whose delivery may be in flight:
// dispatching under an older version's per-row lease, or due and waiting
// as its bucket's owner read it. A run report or heartbeat that arrives
// then (the receiver called back before its 2xx was recorded) is kept.
var inFlight = statusSQL(`(status = {dispatching} OR (status IN {waiting} AND next_attempt_at <= ?))`)

// CompleteRun records a run's report: a running occurrence ends completed
// (succeeded) or failed at now; one whose delivery is still in flight keeps
// the report, which decides the row when the delivery is recorded
// (recordOutcome). output is JSON (nil: none). A repeat of the report that
// decided the row answers the row unchanged; any other report on a row
// with no run under way is ErrRunEnded, and the first one after a timeout
// is kept as late (it does not undo the timeout). The event's last_status
// follows, and what waited for the run to end is due now (runsEnded).
func (s *Store) CompleteRun(ctx context.Context, id, status string, output *string, now time.Time) (model.Occurrence, error) {
	var got model.Occurrence
	ended := false // no run under way: answered after the commit, which keeps a late report
	err := s.WithTx(ctx, func(tx *Store) error {
		end := model.RunEnd(status)
		var msg *string
		if end == model.OccurrenceFailed {
			m := model.RunFailedMessage
			msg = &m
		}
		var rows []changedOccurrence
		err := tx.selectAll(ctx, &rows, statusSQL(`UPDATE occurrences SET run_status = ?, run_output = ?,
			run_reported_at = ?, updated_at = ?,
			completed_at = CASE WHEN status = {running} THEN ? ELSE completed_at END,
			error_message = CASE WHEN status = {running} THEN ? ELSE error_message END,
			lease_expires_at = CASE WHEN status = {running} THEN NULL ELSE lease_expires_at END,
			status = CASE WHEN status = {running} THEN ? ELSE status END
			WHERE id = ? AND (status = {running} OR (run_status IS NULL AND `)+inFlight+`))
			RETURNING id, event_id, scheduled_at, status, reason`,
			status, output, tx.ts(now), tx.ts(now), tx.ts(now), msg, end, id, tx.ts(now))
		if err != nil {
			return fmt.Errorf("complete run: %w", err)
		}
		if got, err = tx.GetOccurrence(ctx, id); err != nil {
			return err
		}
		if len(rows) == 0 {
			if got.RunStatus != nil && *got.RunStatus == status && got.Status != model.OccurrenceTimedOut {
				return nil // the same report again: at-least-once callers repeat
			}
			if got.Status == model.OccurrenceTimedOut && got.RunStatus == nil {
				// Late: kept beside the timeout, which it does not undo.
				if _, err := tx.exec(ctx, statusSQL(`UPDATE occurrences SET run_status = ?, run_output = ?,
					run_reported_at = ? WHERE id = ? AND status = {timed_out} AND run_status IS NULL`),
					status, output, tx.ts(now), id); err != nil {
					return fmt.Errorf("keep late run report: %w", err)
				}
				if got, err = tx.GetOccurrence(ctx, id); err != nil {
					return err
				}
			}
			ended = true
			return nil
		}
		var stats rollupDeltas
		stats.finished(rows[0].EventID, "", rows[0].At.Time, rows[0].Status, rows[0].Reason, 1)
		if err := tx.addRollups(ctx, &stats); err != nil {
			return err
		}
		if err := tx.noteRunEnd(ctx, []string{got.EventID}, model.RunStatus(string(end), 0, deref(msg))); err != nil {
			return err
		}
		return tx.runsEnded(ctx, []string{rows[0].ID}, []string{got.EventID}, now)
	})
	if err == nil && ended {
		err = ErrRunEnded
	}
	return got, err
}

// Heartbeat says a run is alive: a running occurrence's deadline moves to
// now + runtime. A heartbeat for a delivery still in flight is noted
// (heartbeat_at) and leaves the deadline to the recorded outcome.
func (s *Store) Heartbeat(ctx context.Context, id string, runtime time.Duration, now time.Time) (model.Occurrence, error) {
	res, err := s.exec(ctx, statusSQL(`UPDATE occurrences SET heartbeat_at = ?, updated_at = ?,
		lease_expires_at = CASE WHEN status = {running} THEN ? ELSE lease_expires_at END
		WHERE id = ? AND (status = {running} OR (run_status IS NULL AND `)+inFlight+`))`,
		s.ts(now), s.ts(now), s.ts(now.Add(runtime)), id, s.ts(now))
	if err != nil {
		return model.Occurrence{}, fmt.Errorf("heartbeat: %w", err)
	}
	got, err := s.GetOccurrence(ctx, id)
	if err != nil {
		return got, err
	}
	if affected(res) != 1 {
		return got, ErrRunEnded
	}
	return got, nil
}

// TimeOutRuns ends at most limit running occurrences whose deadline passed
// before now: timed_out, a failure, with the reason in error_message; the
// events' last_status follows, and what waited for those runs is due now
// (runsEnded). It returns how many it ended.
func (s *Store) TimeOutRuns(ctx context.Context, now time.Time, limit int) (int, error) {
	var rows []changedOccurrence
	err := s.WithTx(ctx, func(tx *Store) error {
		err := tx.selectAll(ctx, &rows, statusSQL(`UPDATE occurrences SET status = {timed_out}, completed_at = ?,
			updated_at = ?, lease_expires_at = NULL, error_message = ?
			WHERE (id, scheduled_at) IN (SELECT id, scheduled_at FROM unfinished_occurrences
				WHERE status = {running} AND lease_expires_at < ? ORDER BY lease_expires_at LIMIT ?`)+tx.d.skipLocked+`)
			RETURNING id, event_id, scheduled_at, status, reason`,
			tx.ts(now), tx.ts(now), model.RunTimedOutMessage, tx.ts(now), limit)
		if err != nil {
			return fmt.Errorf("time out runs: %w", err)
		}
		if len(rows) == 0 {
			return nil
		}
		var stats rollupDeltas
		events := make([]string, 0, len(rows))
		for _, r := range rows {
			stats.finished(r.EventID, "", r.At.Time, r.Status, r.Reason, 1)
			events = append(events, r.EventID)
		}
		if err := tx.addRollups(ctx, &stats); err != nil {
			return err
		}
		if err := tx.noteRunEnd(ctx, events,
			model.RunStatus(string(model.OccurrenceTimedOut), 0, model.RunTimedOutMessage)); err != nil {
			return err
		}
		ids := make([]string, len(rows))
		for i := range rows {
			ids[i] = rows[i].ID
		}
		return tx.runsEnded(ctx, ids, events, now)
	})
	return len(rows), err
}

// noteRunEnd writes the last_status of events whose run just ended. The
// dispatcher's coalesced bookkeeping may land after it and say "running":
// it keeps this one when no run of the event is under way any more (see
// runningStatusSQL).
func (s *Store) noteRunEnd(ctx context.Context, eventIDs []string, lastStatus string) error {
	for start := 0; start < len(eventIDs); start += insertBatch {
		chunk := eventIDs[start:min(start+insertBatch, len(eventIDs))]
		args := append([]any{lastStatus}, stringArgs(chunk)...)
		if _, err := s.exec(ctx, `UPDATE events SET last_status = ? WHERE id IN (`+placeholders(len(chunk))+`)`,
			args...); err != nil {
			return fmt.Errorf("note ended run: %w", err)
		}
	}
	return nil
}

// runningStatusSQL is an event's last_status when the bookkeeping of a
// delivery says "running…": that, while one of its runs is under way;
// otherwise what the run's end wrote (the receiver may complete the run
// before the delivery's bookkeeping lands).
var runningStatusSQL = statusSQL(`CASE WHEN EXISTS (SELECT 1 FROM unfinished_occurrences o
	WHERE o.event_id = events.id AND o.status = {running}) THEN v.last_status ELSE events.last_status END`)

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// runsEnded frees what runs that ended outside the dispatcher held: the
// instant of each event that waited for its run (overlap buffer_one or
// buffer_all) and the runs' concurrency slots, whose keys' oldest waiters
// become due. Call it in the transaction that ended them; the caller
// announces the wake-up.
func (s *Store) runsEnded(ctx context.Context, occurrenceIDs, eventIDs []string, now time.Time) error {
	if _, err := s.releaseWaitingOf(ctx, eventIDs, now); err != nil {
		return err
	}
	_, err := s.ReleaseConcurrency(ctx, occurrenceIDs, now)
	return err
}
