package repository

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/qhronos/qhronos/internal/model"
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
func (s *Store) ClaimDue(ctx context.Context, r ClaimRequest) ([]model.Occurrence, error) {
	q := `UPDATE occurrences SET status = 'dispatching', lease_token = ?, lease_owner = ?,
		lease_expires_at = ?, attempt_count = attempt_count + 1, updated_at = ?
		WHERE id IN (SELECT id FROM occurrences WHERE status IN ('pending', 'retrying')
			AND next_attempt_at <= ? ORDER BY next_attempt_at LIMIT ?` + s.d.skipLocked + `)
		RETURNING ` + occurrenceColumns
	now := s.ts(r.Now)
	var out []model.Occurrence
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
	Status       model.OccurrenceStatus // completed, retrying, failed, awaiting_ack, cancelled
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
	Attempt *model.Attempt
}

// RecordOutcomes applies a batch of outcomes in one transaction. Each is
// fenced by its lease token: the result slice holds ErrLeaseLost for a record
// whose lease was lost (rescued or cancelled meanwhile); those write nothing,
// not even their attempt.
func (s *Store) RecordOutcomes(ctx context.Context, recs []OutcomeRecord) ([]error, error) {
	var results []error
	err := s.WithTx(ctx, func(tx *Store) error {
		ptrs := make([]*OutcomeRecord, len(recs))
		for i := range recs {
			ptrs[i] = &recs[i]
		}
		var err error
		if results, err = tx.applyOutcomes(ctx, ptrs); err != nil {
			return err
		}
		var attempts []*model.Attempt
		for i := range recs {
			if results[i] == nil && recs[i].Attempt != nil {
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

// applyOutcomes writes outcomes under their leases; the result holds
// ErrLeaseLost where the lease was gone. On PostgreSQL plain outcomes go in
// set-based statements (one round trip per chunk instead of one per row);
// awaiting_ack ones, which may meet an early acknowledgement, go one by one.
func (s *Store) applyOutcomes(ctx context.Context, recs []*OutcomeRecord) ([]error, error) {
	results := make([]error, len(recs))
	var bulk []int
	for i, r := range recs {
		if !s.d.updateFromValues || r.Status == model.OccurrenceAwaitingAck {
			lost, err := s.recordOutcome(ctx, r)
			if err != nil {
				return nil, err
			}
			results[i] = lost
			continue
		}
		bulk = append(bulk, i)
	}
	const perStatement = 500 // 10 parameters a row
	for start := 0; start < len(bulk); start += perStatement {
		chunk := bulk[start:min(start+perStatement, len(bulk))]
		applied, err := s.recordOutcomeSet(ctx, recs, chunk)
		if err != nil {
			return nil, err
		}
		for _, i := range chunk {
			if !applied[recs[i].OccurrenceID+"|"+recs[i].LeaseToken] {
				results[i] = model.ErrLeaseLost
			}
		}
	}
	return results, nil
}

// outcomeValuesRow is one typed row of recordOutcomeSet's VALUES list.
var outcomeValuesRow = postgresDialect.typedRow("uuid", "text", "text", "timestamptz", "timestamptz", "int", "text",
	"text", "timestamptz", "timestamptz")

// recordOutcomeSet is recordOutcome for many rows in one PostgreSQL
// statement; it returns "id|token" of the records whose lease still held.
func (s *Store) recordOutcomeSet(ctx context.Context, recs []*OutcomeRecord, idx []int) (map[string]bool, error) {
	var sb strings.Builder
	sb.WriteString(`UPDATE occurrences o SET status = v.status, completed_at = v.completed_at,
		next_attempt_at = COALESCE(v.next_attempt_at, o.next_attempt_at), lease_token = NULL, lease_owner = NULL,
		lease_expires_at = NULL, manual_retry = false, status_code = v.status_code, response_body = v.response_body,
		error_message = v.error_message, updated_at = v.updated_at, started_at = COALESCE(o.started_at, v.started_at)
		FROM (VALUES `)
	args := make([]any, 0, 10*len(idx))
	for k, i := range idx {
		r := recs[i]
		if k > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(outcomeValuesRow)
		var completed, started *time.Time
		if r.Status.Terminal() {
			completed = &r.Now
		}
		if r.Attempt != nil {
			started = &r.Attempt.StartedAt
		}
		args = append(args, r.OccurrenceID, r.LeaseToken, r.Status, s.tsp(completed), s.tsp(r.NextAttemptAt),
			r.StatusCode, r.ResponseBody, r.ErrorMessage, s.ts(r.Now), s.tsp(started))
	}
	sb.WriteString(`) AS v(id, token, status, completed_at, next_attempt_at, status_code, response_body,
		error_message, updated_at, started_at)
		WHERE o.id = v.id AND o.lease_token = v.token AND o.status = 'dispatching'
		RETURNING o.id, v.token`)
	var rows []struct {
		ID    string `db:"id"`
		Token string `db:"token"`
	}
	if err := s.selectAll(ctx, &rows, sb.String(), args...); err != nil {
		return nil, fmt.Errorf("record outcomes: %w", err)
	}
	applied := make(map[string]bool, len(rows))
	for _, r := range rows {
		applied[r.ID+"|"+r.Token] = true
	}
	return applied, nil
}

func (s *Store) recordOutcome(ctx context.Context, r *OutcomeRecord) (lost error, err error) {
	var started *time.Time
	if r.Attempt != nil {
		started = &r.Attempt.StartedAt
	}
	// A delivery waiting for its acknowledgement is already complete when the
	// client acknowledged it first (acked_at set): one statement decides, so
	// a concurrent Acknowledge either lands before it (and is seen here) or
	// after it (and sees awaiting_ack).
	status, completed := "?", "?"
	args := []any{r.Status}
	if r.Status.Terminal() {
		args = append(args, s.ts(r.Now))
	} else {
		args = append(args, nil)
	}
	if r.Status == model.OccurrenceAwaitingAck {
		status, completed, args = `CASE WHEN acked_at IS NULL THEN 'awaiting_ack' ELSE 'completed' END`, "acked_at", nil
	}
	q := `UPDATE occurrences SET status = ` + status + `, completed_at = ` + completed + `,
		next_attempt_at = COALESCE(?, next_attempt_at), lease_token = NULL, lease_owner = NULL,
		lease_expires_at = ?, manual_retry = ?, status_code = ?, response_body = ?, error_message = ?,
		updated_at = ?, started_at = COALESCE(started_at, ?)
		WHERE id = ? AND lease_token = ? AND status = 'dispatching'`
	args = append(args, s.tsp(r.NextAttemptAt), s.tsp(r.AckDeadline), false, r.StatusCode, r.ResponseBody,
		r.ErrorMessage, s.ts(r.Now), s.tsp(started), r.OccurrenceID, r.LeaseToken)
	res, err := s.exec(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("record outcome: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return model.ErrLeaseLost, nil
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

// LeaseKey names one leased row: the occurrence and the token it is held by.
type LeaseKey struct {
	ID    string `db:"id"`
	Token string `db:"lease_token"`
}

// RenewLeases extends to until the lease of every given row still
// dispatching under its token (a dispatcher's heartbeat: one statement per
// few hundred rows for all it holds) and returns the rows renewed. A row
// missing from the answer is no longer held by its token — rescued,
// revoked, released or already recorded — and its holder must not fire or
// record it. The WHERE clause is the fence: a rescued row has lost its
// token, so a late renewal changes nothing. Rows are found by primary key;
// a row held under another of the given tokens is renewed but answered
// under that token, so a caller comparing pairs still sees its own lost.
func (s *Store) RenewLeases(ctx context.Context, rows []LeaseKey, until time.Time) ([]LeaseKey, error) {
	const perStatement = 400
	var out []LeaseKey
	for start := 0; start < len(rows); start += perStatement {
		chunk := rows[start:min(start+perStatement, len(rows))]
		tokens := map[string]bool{}
		args := make([]any, 0, 1+2*len(chunk))
		args = append(args, s.ts(until))
		for _, r := range chunk {
			args = append(args, r.ID)
		}
		for _, r := range chunk {
			if !tokens[r.Token] {
				tokens[r.Token] = true
				args = append(args, r.Token)
			}
		}
		var got []LeaseKey
		err := s.selectAll(ctx, &got, `UPDATE occurrences SET lease_expires_at = ?
			WHERE status = 'dispatching' AND id IN (`+placeholders(len(chunk))+`)
			AND lease_token IN (`+placeholders(len(tokens))+`)
			RETURNING id, lease_token`, args...)
		if err != nil {
			return nil, fmt.Errorf("renew leases: %w", err)
		}
		out = append(out, got...)
	}
	return out, nil
}

// RescueDispatching returns every dispatching row, expired or not, to retry
// at now. Only a process that knows no other one can hold a lease may call
// it: the embedded server at start, under its data-directory lock, finds the
// leases of its own killed predecessor and needs not wait for them to
// expire. Unacknowledged deliveries keep their deadline.
func (s *Store) RescueDispatching(ctx context.Context, now time.Time) (int, error) {
	res, err := s.exec(ctx, `UPDATE occurrences SET status = 'retrying', lease_token = NULL, lease_owner = NULL,
		lease_expires_at = NULL, next_attempt_at = ?, updated_at = ?, error_message = 'lease of a stopped process'
		WHERE status = 'dispatching'`, s.ts(now), s.ts(now))
	if err != nil {
		return 0, fmt.Errorf("rescue leases of a stopped process: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// RescueExpired returns expired leases and unacknowledged deliveries to
// retry at now. The attempt they were on stays counted.
func (s *Store) RescueExpired(ctx context.Context, now time.Time, limit int) (int, error) {
	q := `UPDATE occurrences SET status = 'retrying', lease_token = NULL, lease_owner = NULL,
		lease_expires_at = NULL, next_attempt_at = ?, updated_at = ?,
		error_message = CASE WHEN status = 'awaiting_ack' THEN 'acknowledgement timed out' ELSE 'lease expired' END
		WHERE id IN (SELECT id FROM occurrences WHERE status IN ('dispatching', 'awaiting_ack')
			AND lease_expires_at < ? ORDER BY lease_expires_at LIMIT ?` + s.d.skipLocked + `)`
	res, err := s.exec(ctx, q, s.ts(now), s.ts(now), s.ts(now), limit)
	if err != nil {
		return 0, fmt.Errorf("rescue expired leases: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// Acknowledge completes an occurrence that awaits a client acknowledgement.
// An acknowledgement racing the dispatcher (the row is still dispatching) is
// kept in acked_at and completes the row when the delivery is recorded. One
// statement, so it cannot fall between the two states. ErrNotFound when the
// occurrence is in neither.
func (s *Store) Acknowledge(ctx context.Context, occurrenceID string, now time.Time) error {
	res, err := s.exec(ctx, `UPDATE occurrences SET acked_at = ?, updated_at = ?,
		completed_at = CASE WHEN status = 'awaiting_ack' THEN ? ELSE completed_at END,
		lease_expires_at = CASE WHEN status = 'awaiting_ack' THEN NULL ELSE lease_expires_at END,
		status = CASE WHEN status = 'awaiting_ack' THEN 'completed' ELSE status END
		WHERE id = ? AND (status = 'awaiting_ack' OR (status = 'dispatching' AND acked_at IS NULL))`,
		s.ts(now), s.ts(now), s.ts(now), occurrenceID)
	if err != nil {
		return fmt.Errorf("acknowledge occurrence: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return model.ErrNotFound
	}
	return nil
}

// CountWaiting counts the occurrences still to be worked on, per status
// (pending, dispatching, retrying, awaiting_ack): the queue of /status. The
// states are literals, so the partial indexes on exactly those states serve
// the count and the finished history is never scanned.
func (s *Store) CountWaiting(ctx context.Context) (map[model.OccurrenceStatus]int, error) {
	var rows []struct {
		Status model.OccurrenceStatus `db:"status"`
		N      int                    `db:"n"`
	}
	err := s.selectAll(ctx, &rows, `SELECT status, COUNT(*) AS n FROM occurrences
		WHERE status IN ('pending', 'retrying') OR status IN ('dispatching', 'awaiting_ack') GROUP BY status`)
	if err != nil {
		return nil, fmt.Errorf("count waiting occurrences: %w", err)
	}
	out := make(map[model.OccurrenceStatus]int, len(rows))
	for _, r := range rows {
		out[r.Status] = r.N
	}
	return out, nil
}
