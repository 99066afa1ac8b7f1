package repository

import (
	"context"
	"fmt"
	"time"
)

// ClaimRequest describes one batch claim by a dispatcher.
type ClaimRequest struct {
	Now        time.Time // the deployment's clock (database time)
	Ahead      time.Duration
	Limit      int
	Owner      string // instance id, for operators
	Token      string // lease token: only its holder may record outcomes
	LeaseUntil time.Time
}

// ClaimDue atomically leases up to Limit occurrences due by Now+Ahead, oldest
// first, bumping their attempt count. Concurrent claimers never receive the
// same row (PostgreSQL: FOR UPDATE SKIP LOCKED; SQLite: one writer at a time).
func (s *Store) ClaimDue(ctx context.Context, r ClaimRequest) ([]Occurrence, error) {
	lock := ""
	if s.backend == Postgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	q := `UPDATE occurrences SET status = 'dispatching', lease_token = ?, lease_owner = ?,
		lease_expires_at = ?, attempt_count = attempt_count + 1, updated_at = ?
		WHERE id IN (SELECT id FROM occurrences WHERE status IN ('pending', 'retrying')
			AND next_attempt_at <= ? ORDER BY next_attempt_at LIMIT ?` + lock + `)
		RETURNING ` + occurrenceColumns
	now := s.ts(r.Now)
	var out []Occurrence
	err := s.selectAll(ctx, &out, q, r.Token, r.Owner, s.ts(r.LeaseUntil), now,
		s.ts(r.Now.Add(r.Ahead)), r.Limit)
	if err != nil {
		return nil, fmt.Errorf("claim due occurrences: %w", err)
	}
	return normalizeAll(out), nil
}

// NextDue returns the earliest next_attempt_at of a claimable occurrence, or
// nil when none is waiting.
func (s *Store) NextDue(ctx context.Context) (*time.Time, error) {
	var rows []time.Time
	err := s.selectAll(ctx, &rows, `SELECT next_attempt_at FROM occurrences
		WHERE status IN ('pending', 'retrying') ORDER BY next_attempt_at LIMIT 1`)
	if err != nil {
		return nil, fmt.Errorf("next due occurrence: %w", err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	t := rows[0].UTC()
	return &t, nil
}

// OutcomeRecord is what a dispatcher writes after one attempt.
type OutcomeRecord struct {
	OccurrenceID string
	LeaseToken   string
	Status       OccurrenceStatus // completed, retrying, failed, awaiting_ack, cancelled
	// NextAttemptAt is required for retrying.
	NextAttemptAt *time.Time
	// AckDeadline is required for awaiting_ack: after it the rescuer retries.
	AckDeadline  *time.Time
	StatusCode   *int
	ResponseBody *string
	ErrorMessage *string
	Now          time.Time
	// Attempt is recorded with the outcome when set (not for a cancellation
	// made without attempting).
	Attempt *Attempt
}

// RecordOutcomes applies a batch of outcomes in one transaction. Each is
// fenced by its lease token: the result slice holds ErrLeaseLost for a record
// whose lease was lost (rescued or cancelled meanwhile); those write nothing,
// not even their attempt.
func (s *Store) RecordOutcomes(ctx context.Context, recs []OutcomeRecord) ([]error, error) {
	results := make([]error, len(recs))
	err := s.WithTx(ctx, func(tx *Store) error {
		var attempts []*Attempt
		for i := range recs {
			res, err := tx.recordOutcome(ctx, &recs[i])
			if err != nil {
				return err
			}
			results[i] = res
			if res == nil && recs[i].Attempt != nil {
				attempts = append(attempts, recs[i].Attempt)
			}
		}
		return tx.insertAttempts(ctx, attempts)
	})
	if err != nil {
		return nil, err
	}
	return results, nil
}

func (s *Store) recordOutcome(ctx context.Context, r *OutcomeRecord) (lost error, err error) {
	var started *time.Time
	if r.Attempt != nil {
		started = &r.Attempt.StartedAt
	}
	status, completed, ackDeadline := r.Status, (*time.Time)(nil), r.AckDeadline
	if status.Terminal() {
		completed = &r.Now
	}
	const q = `UPDATE occurrences SET status = ?, completed_at = ?, next_attempt_at = COALESCE(?, next_attempt_at),
		lease_token = NULL, lease_owner = NULL, lease_expires_at = ?, manual_retry = ?, status_code = ?,
		response_body = ?, error_message = ?, updated_at = ?, started_at = COALESCE(started_at, ?)
		WHERE id = ? AND lease_token = ? AND status = 'dispatching'`
	exec := func(extra string) (int64, error) {
		res, err := s.exec(ctx, q+extra, status, s.tsp(completed), s.tsp(r.NextAttemptAt), s.tsp(ackDeadline),
			false, r.StatusCode, r.ResponseBody, r.ErrorMessage, s.ts(r.Now), s.tsp(started), r.OccurrenceID,
			r.LeaseToken)
		if err != nil {
			return 0, fmt.Errorf("record outcome: %w", err)
		}
		return res.RowsAffected()
	}
	n := int64(0)
	if status == OccurrenceAwaitingAck {
		// The client may have acknowledged while the delivery was being
		// recorded (acked_at set): then the occurrence is complete.
		status, completed, ackDeadline = OccurrenceCompleted, &r.Now, nil
		if n, err = exec(` AND acked_at IS NOT NULL`); err != nil {
			return nil, err
		}
		if n == 0 {
			status, completed, ackDeadline = OccurrenceAwaitingAck, nil, r.AckDeadline
		}
	}
	if n == 0 {
		if n, err = exec(""); err != nil {
			return nil, err
		}
	}
	if n != 1 {
		return ErrLeaseLost, nil
	}
	return nil, nil
}

// ReleaseClaims hands leased rows back for immediate pickup without counting
// an attempt (graceful shutdown of work not started).
func (s *Store) ReleaseClaims(ctx context.Context, token string, ids []string, now time.Time) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	q := `UPDATE occurrences SET status = CASE WHEN attempt_count <= 1 THEN 'pending' ELSE 'retrying' END,
		attempt_count = attempt_count - 1, lease_token = NULL, lease_owner = NULL, lease_expires_at = NULL,
		next_attempt_at = ?, updated_at = ?
		WHERE lease_token = ? AND status = 'dispatching' AND id IN (` + placeholders(len(ids)) + `)`
	args := []any{s.ts(now), s.ts(now), token}
	for _, id := range ids {
		args = append(args, id)
	}
	res, err := s.exec(ctx, q, args...)
	if err != nil {
		return 0, fmt.Errorf("release claims: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// RescueExpired returns expired leases and unacknowledged deliveries to
// retry at now. The attempt they were on stays counted.
func (s *Store) RescueExpired(ctx context.Context, now time.Time, limit int) (int, error) {
	lock := ""
	if s.backend == Postgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	q := `UPDATE occurrences SET status = 'retrying', lease_token = NULL, lease_owner = NULL,
		lease_expires_at = NULL, next_attempt_at = ?, updated_at = ?,
		error_message = CASE WHEN status = 'awaiting_ack' THEN 'acknowledgement timed out' ELSE 'lease expired' END
		WHERE id IN (SELECT id FROM occurrences WHERE status IN ('dispatching', 'awaiting_ack')
			AND lease_expires_at < ? ORDER BY lease_expires_at LIMIT ?` + lock + `)`
	res, err := s.exec(ctx, q, s.ts(now), s.ts(now), s.ts(now), limit)
	if err != nil {
		return 0, fmt.Errorf("rescue expired leases: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// Acknowledge completes an occurrence that awaits a client acknowledgement.
// An acknowledgement racing the dispatcher (the row is still dispatching) is
// kept in acked_at and completes the row when the delivery is recorded.
// ErrNotFound when the occurrence is in neither state.
func (s *Store) Acknowledge(ctx context.Context, occurrenceID string, now time.Time) error {
	return s.WithTx(ctx, func(tx *Store) error {
		res, err := tx.exec(ctx, `UPDATE occurrences SET status = 'completed', completed_at = ?, acked_at = ?,
			lease_expires_at = NULL, updated_at = ? WHERE id = ? AND status = 'awaiting_ack'`,
			tx.ts(now), tx.ts(now), tx.ts(now), occurrenceID)
		if err != nil {
			return fmt.Errorf("acknowledge occurrence: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 1 {
			return nil
		}
		res, err = tx.exec(ctx, `UPDATE occurrences SET acked_at = ?, updated_at = ?
			WHERE id = ? AND status = 'dispatching' AND acked_at IS NULL`, tx.ts(now), tx.ts(now), occurrenceID)
		if err != nil {
			return fmt.Errorf("acknowledge occurrence: %w", err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return ErrNotFound
		}
		return nil
	})
}

// CountByStatus counts live occurrences per status (queue depth for /status).
func (s *Store) CountByStatus(ctx context.Context) (map[OccurrenceStatus]int, error) {
	var rows []struct {
		Status OccurrenceStatus `db:"status"`
		N      int              `db:"n"`
	}
	if err := s.selectAll(ctx, &rows, `SELECT status, COUNT(*) AS n FROM occurrences GROUP BY status`); err != nil {
		return nil, fmt.Errorf("count occurrences by status: %w", err)
	}
	out := make(map[OccurrenceStatus]int, len(rows))
	for _, r := range rows {
		out[r.Status] = r.N
	}
	return out, nil
}
