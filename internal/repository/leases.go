package repository

import (
	"context"
	"fmt"
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
// The picked rows are matched on (id, scheduled_at): on the partitioned
// tables that lets the update visit only the slice of each row (run-time
// pruning) instead of probing every slice's index for the id.
func (s *Store) ClaimDue(ctx context.Context, r ClaimRequest) ([]model.Occurrence, error) {
	q := statusSQL(`UPDATE occurrences SET status = {dispatching}, lease_token = ?, lease_owner = ?,
		lease_expires_at = ?, attempt_count = attempt_count + 1, updated_at = ?
		WHERE (id, scheduled_at) IN (SELECT id, scheduled_at FROM unfinished_occurrences WHERE status IN {waiting}
			AND next_attempt_at <= ? ORDER BY next_attempt_at LIMIT ?`) + s.d.skipLocked + `)
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
	err := s.selectAll(ctx, &rows, statusSQL(`SELECT next_attempt_at FROM unfinished_occurrences
		WHERE status IN {waiting} ORDER BY next_attempt_at LIMIT 1`))
	if err != nil {
		return nil, fmt.Errorf("next due occurrence: %w", err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	t := rows[0].UTC()
	return &t, nil
}

// ReleaseClaims hands leased rows back for immediate pickup without counting
// an attempt (graceful shutdown of work not started).
func (s *Store) ReleaseClaims(ctx context.Context, token string, ids []string, now time.Time) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	q := statusSQL(`UPDATE occurrences SET status = CASE WHEN attempt_count <= 1 THEN {pending} ELSE {retrying} END,
		attempt_count = attempt_count - 1, lease_token = NULL, lease_owner = NULL, lease_expires_at = NULL,
		next_attempt_at = ?, updated_at = ?
		WHERE lease_token = ? AND status = {dispatching} AND id IN (`) + placeholders(len(ids)) + `)`
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
//
// Rows another transaction has locked are skipped, not waited for: they are
// nearly always being recorded by this same dispatcher (whose caller knows
// and does not count them lost), and waiting made the heartbeat and the
// outcome writer lock the same rows in different orders — lock waits and
// deadlocks, each stalling deliveries for deadlock_timeout. A row skipped
// for any other reason is reported lost: its job is dropped unfired and the
// row comes back when its lease expires, never twice.
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
		err := s.selectAll(ctx, &got, statusSQL(`UPDATE occurrences SET lease_expires_at = ?
			WHERE id IN (SELECT id FROM occurrences WHERE status = {dispatching} AND id IN (`)+placeholders(len(chunk))+`)
			AND lease_token IN (`+placeholders(len(tokens))+`)`+s.d.skipLocked+`)
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
	res, err := s.exec(ctx, statusSQL(`UPDATE occurrences SET status = {retrying}, lease_token = NULL, lease_owner = NULL,
		lease_expires_at = NULL, next_attempt_at = ?, updated_at = ?, error_message = 'lease of a stopped process',
		`+lapsedClaim+`
		WHERE (id, scheduled_at) IN (SELECT id, scheduled_at FROM unfinished_occurrences WHERE status = {dispatching})
		AND status = {dispatching}`), s.ts(now), s.ts(now))
	if err != nil {
		return 0, fmt.Errorf("rescue leases of a stopped process: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// MaxFreeLapses bounds how many lapsed claims of one occurrence go
// uncharged: a row whose dispatch keeps killing or wedging its instance is
// charged from then on, so it still ends after its attempts.
const MaxFreeLapses = 10

// lapsedClaim notes, in a rescue's SET list, a dispatching row's lapsed
// claim: nothing of it was recorded (an outcome ends the lease in the same
// transaction as its attempt row), so it is not charged to the retry budget
// while the row has free lapses left. An unacknowledged delivery was sent:
// it stays charged.
var lapsedClaim = statusSQL(fmt.Sprintf(
	`lapses = CASE WHEN status = {dispatching} AND lapses < %d THEN lapses + 1 ELSE lapses END`, MaxFreeLapses))

// RescueExpired returns expired leases and unacknowledged deliveries to
// retry at now (a run past its deadline is TimeOutRuns'). An acknowledgement that timed out stays charged as an
// attempt; a lapsed claim does not (lapsedClaim).
func (s *Store) RescueExpired(ctx context.Context, now time.Time, limit int) (int, error) {
	q := statusSQL(`UPDATE occurrences SET status = {retrying}, lease_token = NULL, lease_owner = NULL,
		lease_expires_at = NULL, next_attempt_at = ?, updated_at = ?,
		error_message = CASE WHEN status = {awaiting_ack} THEN 'acknowledgement timed out' ELSE 'lease expired' END,
		`+lapsedClaim+`
		WHERE (id, scheduled_at) IN (SELECT id, scheduled_at FROM unfinished_occurrences
			WHERE status IN ({dispatching}, {awaiting_ack}) AND lease_expires_at < ? ORDER BY lease_expires_at LIMIT ?`) +
		s.d.skipLocked + `)`
	res, err := s.exec(ctx, q, s.ts(now), s.ts(now), s.ts(now), limit)
	if err != nil {
		return 0, fmt.Errorf("rescue expired leases: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
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
