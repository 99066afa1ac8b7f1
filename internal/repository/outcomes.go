package repository

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/qhronos/qhronos/internal/model"
)

// OutcomeRecord is what a dispatcher writes after one attempt, or after
// resolving a claimed row without one (missed, cancelled), with its effect
// on the event. A record without EventID changes only its occurrence.
type OutcomeRecord struct {
	OccurrenceID string
	LeaseToken   string
	Status       model.OccurrenceStatus // completed, retrying, failed, awaiting_ack, running, cancelled
	// NextAttemptAt is required for retrying.
	NextAttemptAt *time.Time
	// AckDeadline is required for awaiting_ack (after it the rescuer
	// retries) and running (after it the run times out).
	AckDeadline *time.Time
	// Callback is set for the records of events whose runs complete by
	// callback: a report the receiver made while the delivery was in
	// flight decides a running outcome, and is dropped by any other.
	Callback     bool
	StatusCode   *int
	ResponseBody *string
	ErrorMessage *string
	// Reason is the ledger's reason of a missed, skipped or cancelled row.
	Reason string
	Now    time.Time
	// Attempt is recorded with the outcome when set (not for a cancellation
	// made without attempting).
	Attempt *model.Attempt
	// Deliveries are the attempts of a fan-out round (an occurrence of an
	// event that targets a topic): one per subscription sent to, recorded
	// with the outcome as Attempt is.
	Deliveries []*model.Attempt
	// Fanout, when set, is the occurrence's fan-out document after the
	// round (model.Fanout as JSON).
	Fanout *string

	// Uncount undoes the attempt count of the claim: the row was resolved
	// (missed, cancelled) without an attempt.
	Uncount bool
	// EventID names the event whose bookkeeping follows the outcome.
	EventID string
	// ActionType is the event's action type, which the statistics count
	// the outcome and its attempt under; when empty it is read from the
	// event.
	ActionType string
	// Ran is set when an attempt was made: last_run_at and last_status.
	Ran        bool
	LastStatus string
	// PauseReason, when set, pauses the event (410 Gone): its pending
	// non-manual occurrences are cancelled and last_status says why.
	PauseReason string
	// WholeSeries says the occurrence is the one non-manual occurrence of
	// a one-time event read at EventVersion: a terminal outcome ends its
	// series (EventRun.SettlesAt).
	WholeSeries  bool
	EventVersion int64

	// The owned-bucket fence (#36), used when Epoch > 0 instead of the
	// lease token: the record applies only while the row's slot still has
	// the epoch its sender held and the row is still waiting with the
	// attempt count the sender read (Seen). It writes Seen+1 as the row's
	// attempt count, or Seen when Uncount (resolved without an attempt).
	Slot  int
	Epoch int64
	Seen  int
}

// attempts are the attempt rows the record writes.
func (r *OutcomeRecord) attempts() []*model.Attempt {
	if r.Attempt == nil {
		return r.Deliveries
	}
	return append([]*model.Attempt{r.Attempt}, r.Deliveries...)
}

// owned reports whether the record is fenced by its slot's epoch rather
// than by a per-row lease.
func (r *OutcomeRecord) owned() bool { return r.Epoch > 0 }

// newCount is the attempt count an owned record writes.
func (r *OutcomeRecord) newCount() int {
	if r.Uncount {
		return r.Seen
	}
	return r.Seen + 1
}

// outcomeFence is the WHERE condition under which an outcome applies to an
// occurrence row named "occurrences", with the record's values in columns of
// "v": its per-row lease (token), or its slot's epoch and the attempt count
// its sender read.
var outcomeFence = statusSQL(`((v.epoch = 0 AND occurrences.lease_token = v.token AND occurrences.status = {dispatching})
	OR (v.epoch > 0 AND occurrences.status IN {waiting} AND occurrences.attempt_count = v.seen
		AND EXISTS (SELECT 1 FROM bucket_slots s WHERE s.slot = v.slot AND s.epoch = v.epoch)))`)

// RecordOutcomes applies a batch of outcomes and their attempts in one
// transaction: the one way outcomes are written. It does not touch the
// events (no lock, no row write per delivery) except to pause one whose
// receiver answered 410: the caller notes each applied record's Run with
// NoteEventRuns afterwards, coalesced (bookkeeping.go). Each is
// fenced by its lease token: the result slice holds ErrLeaseLost for a record
// whose lease was lost (rescued or cancelled meanwhile); those write nothing,
// not even their attempt.
func (s *Store) RecordOutcomes(ctx context.Context, recs []OutcomeRecord) ([]error, error) {
	var results []error
	err := s.ByKeyTx(ctx, func(tx *Store) error {
		if s.asyncOutcomes {
			// Only this transaction: claims, creates and edits stay durable
			// at commit. A crash that forgets it leaves the rows leased,
			// and the rescuer sends them again under the same id.
			if _, err := tx.exec(ctx, `SET LOCAL synchronous_commit = off`); err != nil {
				return fmt.Errorf("relax outcome commit: %w", err)
			}
		}
		if s.d.backend == Postgres {
			// The outcome statements delete the queue rows of the rows they
			// complete (dropCompleted); the queue's trigger leaves those
			// rows alone in this transaction only (migration 0036).
			if _, err := tx.exec(ctx, `SELECT set_config('qhronos.outcome_drops_queue', 'on', true)`); err != nil {
				return fmt.Errorf("mark the outcome transaction: %w", err)
			}
		}
		var stats rollupDeltas
		outcomes := make([]*OutcomeRecord, len(recs))
		for i := range recs {
			r := &recs[i]
			outcomes[i] = r
			if r.Uncount && !r.owned() {
				if err := tx.uncount(ctx, r); err != nil {
					return err
				}
			}
		}
		var err error
		if results, err = tx.applyOutcomes(ctx, outcomes, &stats); err != nil {
			return err
		}
		withAttempt, err := tx.attemptsToInsert(ctx, recs, results)
		if err != nil {
			return err
		}
		attempts := make([]*model.Attempt, 0, len(withAttempt))
		for _, i := range withAttempt {
			for _, a := range recs[i].attempts() {
				attempts = append(attempts, a)
				stats.attempt(recs[i].ActionType, a)
			}
			if recs[i].WholeSeries && recs[i].EventID != "" {
				stats.markOneTime(recs[i].EventID)
			}
		}
		for i := range recs {
			r := &recs[i]
			if results[i] != nil {
				continue
			}
			// A 410 pause is rare and must stop the series at once: it
			// stays here. Every other effect on the event is the caller's
			// to note afterwards (NoteEventRuns, coalesced).
			if r.EventID != "" && r.PauseReason != "" {
				if err := tx.pauseGoneEvent(ctx, r); err != nil {
					return err
				}
			}
		}
		if err := tx.insertAttempts(ctx, attempts); err != nil {
			return err
		}
		return tx.addRollups(ctx, &stats)
	})
	if err != nil {
		return nil, err
	}
	return results, nil
}

// uncount gives back the attempt a claim counted, for a row resolved
// without one.
func (s *Store) uncount(ctx context.Context, r *OutcomeRecord) error {
	if _, err := s.exec(ctx, statusSQL(`UPDATE occurrences SET attempt_count = attempt_count - 1,
		started_at = CASE WHEN attempt_count <= 1 THEN NULL ELSE started_at END
		WHERE id = ? AND lease_token = ? AND status = {dispatching}`), r.OccurrenceID, r.LeaseToken); err != nil {
		return fmt.Errorf("uncount skipped attempt: %w", err)
	}
	return nil
}

// applyOutcomes writes outcomes under their leases; the result holds
// ErrLeaseLost where the lease was gone. Plain outcomes go in set-based
// statements (one statement per chunk instead of one per row); awaiting_ack
// ones and those of callback events, which may meet an early
// acknowledgement or run report, and rows ended
// with a reason (missed, skipped, cancelled: rare) go one by one. The rows
// they finish are counted in stats.
func (s *Store) applyOutcomes(ctx context.Context, recs []*OutcomeRecord, stats *rollupDeltas) ([]error, error) {
	results := make([]error, len(recs))
	var bulk []int
	for i, r := range recs {
		if r.Status == model.OccurrenceAwaitingAck || r.Callback || r.Reason != "" || r.Fanout != nil {
			lost, err := s.recordOutcome(ctx, r, stats)
			if err != nil {
				return nil, err
			}
			results[i] = lost
			continue
		}
		bulk = append(bulk, i)
	}
	start := 0
	for _, size := range s.batchSizes(len(bulk), 256, 1000) { // 15 parameters a row, or 15 arrays
		chunk := bulk[start : start+size]
		start += size
		applied, err := s.recordOutcomeSet(ctx, recs, chunk)
		if err != nil {
			return nil, err
		}
		for _, i := range chunk {
			r := recs[i]
			row, ok := applied[r.OccurrenceID+"|"+r.LeaseToken]
			if !ok {
				results[i] = model.ErrLeaseLost
				continue
			}
			stats.finished(row.EventID, r.ActionType, row.At.Time, string(r.Status), row.Reason, 1)
			if r.WholeSeries {
				stats.markOneTime(row.EventID)
			}
		}
	}
	return results, nil
}

// recordOutcomeSet is recordOutcome for many rows in one statement; it
// returns, by "id|token", the rows of the records whose lease still held
// (their instant, reason and event: what the statistics count them
// under). PostgreSQL answers that itself (RETURNING v.token). SQLite's
// RETURNING cannot name the VALUES side: when the records are for
// different rows each returned row names its record; otherwise (rare) it
// reads the held tokens first, and with its one writer (the transaction
// took the write lock at BEGIN) nothing changes between the read and the
// update.
func (s *Store) recordOutcomeSet(ctx context.Context, recs []*OutcomeRecord, idx []int) (map[string]heldRow, error) {
	if !s.d.returnsFromValues && uniqueOccurrences(recs, idx) {
		// SQLite returns the rows it changed, without the token (its
		// RETURNING sees the updated table only): one record per row here,
		// so the row names its record.
		applied := make(map[string]heldRow, len(idx))
		byID := make(map[string]*OutcomeRecord, len(idx))
		for _, i := range idx {
			byID[recs[i].OccurrenceID] = recs[i]
		}
		start := 0
		for _, size := range preparedChunks(len(idx), 256) {
			var rows []heldRow
			if err := s.updateOutcomes(ctx, recs, idx[start:start+size], &rows); err != nil {
				return nil, err
			}
			start += size
			for _, r := range rows {
				r.Token = byID[r.ID].LeaseToken
				applied[r.ID+"|"+r.Token] = r
			}
		}
		return applied, nil
	}
	var held map[string]heldRow
	if !s.d.returnsFromValues {
		var err error
		if held, err = s.heldRecords(ctx, recs, idx); err != nil {
			return nil, err
		}
		var keep []int
		for _, i := range idx {
			if _, ok := held[recs[i].OccurrenceID+"|"+recs[i].LeaseToken]; ok {
				keep = append(keep, i)
			}
		}
		// The rows that held, in power-of-two statements (see
		// preparedChunks); RETURNING is not needed: held says it all.
		start := 0
		for _, size := range preparedChunks(len(keep), 256) {
			if err := s.updateOutcomes(ctx, recs, keep[start:start+size], nil); err != nil {
				return nil, err
			}
			start += size
		}
		return held, nil
	}
	var rows []heldRow
	if err := s.updateOutcomes(ctx, recs, idx, &rows); err != nil {
		return nil, err
	}
	applied := make(map[string]heldRow, len(rows))
	for _, r := range rows {
		applied[r.ID+"|"+r.Token] = r
	}
	return applied, nil
}

// updateOutcomes is recordOutcomeSet's statement for the records idx:
// with returned set (PostgreSQL), it also reads back the rows whose fence
// held.
func (s *Store) updateOutcomes(ctx context.Context, recs []*OutcomeRecord, idx []int, returned *[]heldRow) error {
	// With every row's instant known (the dispatcher's records carry it),
	// the update is matched on it too: on the partitioned tables each row
	// is looked up in its own slice only.
	pruned := true
	for _, i := range idx {
		if recordInstant(recs[i]).IsZero() {
			pruned = false
		}
	}
	var sb strings.Builder
	var args []any
	if s.d.backend == Postgres {
		sb.WriteString(`WITH v AS (SELECT * FROM ` + outcomeArrays + `)`)
		args = outcomeArrayArgs(recs, idx, pruned)
	} else {
		sb.WriteString(`WITH v(` + outcomeFields + `) AS (VALUES `)
		args = s.outcomeValues(&sb, recs, idx, pruned)
		sb.WriteString(`)`)
	}
	sb.WriteString(statusSQL(`
		UPDATE occurrences SET status = v.status, completed_at = v.completed_at,
		next_attempt_at = COALESCE(v.next_attempt_at, occurrences.next_attempt_at), lease_token = NULL,
		lease_owner = NULL, lease_expires_at = NULL, manual_retry = false, status_code = v.status_code,
		response_body = v.response_body, error_message = v.error_message, updated_at = v.updated_at,
		started_at = COALESCE(occurrences.started_at, v.started_at),
		attempt_count = CASE WHEN v.epoch > 0 THEN v.count ELSE occurrences.attempt_count END
		FROM v WHERE occurrences.id = v.id AND `) + outcomeFence)
	if pruned {
		sb.WriteString(` AND occurrences.scheduled_at = v.scheduled_at`)
	}
	if returned == nil {
		if _, err := s.execHot(ctx, sb.String(), args...); err != nil {
			return fmt.Errorf("record outcomes: %w", err)
		}
		return nil
	}
	q := sb.String()
	if s.d.returnsFromValues {
		q = dropCompleted(q, `occurrences.id, v.token AS lease_token, occurrences.scheduled_at, occurrences.reason,
			occurrences.event_id`, `id, lease_token, scheduled_at, reason, event_id`)
	} else {
		q += ` RETURNING id, '' AS lease_token, scheduled_at, reason, event_id`
	}
	// Scanned by pgx on PostgreSQL (selectListed), not through database/sql
	// and sqlx's reflection: a row a delivery in every outcome batch.
	if err := selectListed(ctx, s, returned, (*heldRow).fields, q, args...); err != nil {
		return fmt.Errorf("record outcomes: %w", err)
	}
	return nil
}

// dropCompleted makes update, a PostgreSQL UPDATE of occurrences (after
// its own WITH list, if any), also delete the occurrence_queue rows of the
// occurrences it completed, and return the columns named by selected out of
// returning (which this adds occurrences.status to). That update is the
// owner's outcome, which the queue's trigger leaves alone in
// RecordOutcomes' transaction (0036): one delete in the outcome statement
// instead of a trigger call a delivery.
func dropCompleted(update, returning, selected string) string {
	with := `WITH `
	if strings.HasPrefix(update, `WITH `) {
		i := strings.Index(update, `UPDATE occurrences`)
		with, update = update[:i]+`, `, update[i:]
	}
	return with + `changed AS (` + update + ` RETURNING ` + returning + `, occurrences.status),
		dropped AS (DELETE FROM occurrence_queue q USING changed WHERE q.id = changed.id AND changed.status = ` +
		quote(string(model.OccurrenceCompleted)) + `)
		SELECT ` + selected + ` FROM changed`
}

// uniqueOccurrences reports whether the records idx are for different
// occurrences.
func uniqueOccurrences(recs []*OutcomeRecord, idx []int) bool {
	seen := make(map[string]bool, len(idx))
	for _, i := range idx {
		if seen[recs[i].OccurrenceID] {
			return false
		}
		seen[recs[i].OccurrenceID] = true
	}
	return true
}

// outcomeFields are the columns of a batch of outcomes, in order.
const outcomeFields = `id, token, status, completed_at, next_attempt_at, status_code, response_body, error_message,
	updated_at, started_at, scheduled_at, slot, epoch, seen, count`

// outcomeArrays is a batch of outcomes as PostgreSQL reads it: one array
// per column. The statement's text is the same for every batch, so each
// connection parses it once and plans it cheaply; as a VALUES list it was
// parsed and planned anew for every batch size, two thirds of its time.
const outcomeArrays = `unnest(?::uuid[], ?::text[], ?::text[], ?::timestamptz[], ?::timestamptz[], ?::int[], ?::text[],
	?::text[], ?::timestamptz[], ?::timestamptz[], ?::timestamptz[], ?::int[], ?::bigint[], ?::int[], ?::int[])
	AS u(` + outcomeFields + `)`

// outcomeArrayArgs are outcomeArrays' arguments for the records idx.
func outcomeArrayArgs(recs []*OutcomeRecord, idx []int, pruned bool) []any {
	n := len(idx)
	ids, tokens, statuses := make([]string, n), make([]string, n), make([]string, n)
	completed, next, updated, started, at := make([]*time.Time, n), make([]*time.Time, n), make([]time.Time, n),
		make([]*time.Time, n), make([]*time.Time, n)
	codes, bodies, errs := make([]*int, n), make([]*string, n), make([]*string, n)
	slots, epochs, seen, counts := make([]int, n), make([]int64, n), make([]int, n), make([]int, n)
	for k, i := range idx {
		r := recs[i]
		ids[k], tokens[k], statuses[k] = r.OccurrenceID, r.LeaseToken, string(r.Status)
		if r.Status.Terminal() {
			completed[k] = utcp(&r.Now)
		}
		next[k], updated[k] = utcp(r.NextAttemptAt), r.Now.UTC()
		if r.Attempt != nil {
			started[k] = utcp(&r.Attempt.StartedAt)
		}
		if pruned {
			t := recordInstant(r)
			at[k] = utcp(&t)
		}
		codes[k], bodies[k], errs[k] = r.StatusCode, r.ResponseBody, r.ErrorMessage
		slots[k], epochs[k], seen[k], counts[k] = r.Slot, r.Epoch, r.Seen, r.newCount()
	}
	return []any{uuidArray(ids), tokens, statuses, pgArray(completed), pgArray(next), pgArray(codes),
		pgArray(bodies), pgArray(errs), updated, pgArray(started), pgArray(at), slots, epochs, seen, counts}
}

// outcomeValues writes the VALUES rows of the records idx (SQLite) and
// returns their arguments.
func (s *Store) outcomeValues(sb *strings.Builder, recs []*OutcomeRecord, idx []int, pruned bool) []any {
	row := s.d.typedRow("uuid", "text", "text", "timestamptz", "timestamptz", "int", "text", "text",
		"timestamptz", "timestamptz", "timestamptz", "int", "bigint", "int", "int")
	args := make([]any, 0, 15*len(idx))
	for k, i := range idx {
		r := recs[i]
		if k > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(row)
		var completed, started *time.Time
		if r.Status.Terminal() {
			completed = &r.Now
		}
		if r.Attempt != nil {
			started = &r.Attempt.StartedAt
		}
		var at *time.Time
		if pruned {
			t := recordInstant(r)
			at = &t
		}
		args = append(args, r.OccurrenceID, r.LeaseToken, r.Status, s.tsp(completed), s.tsp(r.NextAttemptAt),
			r.StatusCode, r.ResponseBody, r.ErrorMessage, s.ts(r.Now), s.tsp(started), s.tsp(at),
			r.Slot, r.Epoch, r.Seen, r.newCount())
	}
	return args
}

// heldRow is a row recorded under its lease: what the statistics count
// its outcome under besides the record's status.
type heldRow struct {
	ID      string        `db:"id"`
	Token   string        `db:"lease_token"`
	At      rollupInstant `db:"scheduled_at"`
	Reason  *string       `db:"reason"`
	EventID string        `db:"event_id"`
}

// fields lists the row's fields in the order updateOutcomes' RETURNING
// names them (selectListed).
func (r *heldRow) fields(into []any) []any {
	return append(into, &r.ID, &r.Token, &r.At, &r.Reason, &r.EventID)
}

// recordInstant is the instant of the record's occurrence when its attempt
// carries it (zero otherwise).
func recordInstant(r *OutcomeRecord) time.Time {
	if r.Attempt == nil {
		return time.Time{}
	}
	return r.Attempt.ScheduledAt
}

// heldRecords returns, by "id|token", the rows of the given records whose
// fence holds (SQLite's half of recordOutcomeSet): it reads the rows and the
// slots' epochs and applies outcomeFence in Go, which the one writer makes
// exact.
func (s *Store) heldRecords(ctx context.Context, recs []*OutcomeRecord, idx []int) (map[string]heldRow, error) {
	args := make([]any, len(idx))
	for k, i := range idx {
		args[k] = recs[i].OccurrenceID
	}
	var rows []struct {
		heldRow
		Status       model.OccurrenceStatus `db:"status"`
		AttemptCount int                    `db:"attempt_count"`
	}
	err := s.selectHot(ctx, &rows, `SELECT id, COALESCE(lease_token, '') AS lease_token, scheduled_at, reason, event_id,
		status, attempt_count FROM occurrences WHERE id IN (`+placeholders(len(idx))+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("read occurrences to record: %w", err)
	}
	var slots []SlotLease
	if err := s.selectHot(ctx, &slots, `SELECT slot, epoch FROM bucket_slots`); err != nil {
		return nil, fmt.Errorf("read slot epochs to record: %w", err)
	}
	epochs := make(map[int]int64, len(slots))
	for _, sl := range slots {
		epochs[sl.Slot] = sl.Epoch
	}
	byID := make(map[string]int, len(rows))
	for k := range rows {
		byID[rows[k].ID] = k
	}
	held := map[string]heldRow{}
	for _, i := range idx {
		r := recs[i]
		k, ok := byID[r.OccurrenceID]
		if !ok {
			continue
		}
		row := rows[k]
		switch {
		case r.owned():
			if row.Status.In(model.Waiting) && row.AttemptCount == r.Seen && epochs[r.Slot] == r.Epoch {
				row.Token = ""
				held[r.OccurrenceID+"|"] = row.heldRow
			}
		case row.Status == model.OccurrenceDispatching && row.Token != "" && row.Token == r.LeaseToken:
			held[r.OccurrenceID+"|"+r.LeaseToken] = row.heldRow
		}
	}
	return held, nil
}

func (s *Store) recordOutcome(ctx context.Context, r *OutcomeRecord, stats *rollupDeltas) (lost error, err error) {
	var started *time.Time
	if all := r.attempts(); len(all) > 0 {
		started = &all[0].StartedAt
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
	lease, errMsg, run := "?", "?", ""
	switch {
	case r.Status == model.OccurrenceAwaitingAck:
		status, completed, args = statusSQL(`CASE WHEN acked_at IS NULL THEN {awaiting_ack} ELSE {completed} END`), "acked_at", nil
	case r.Status == model.OccurrenceRunning:
		// The receiver may have reported the run before its 2xx was
		// recorded: the report decides the row now.
		status = statusSQL(`CASE WHEN run_status IS NULL THEN {running} WHEN run_status = ` +
			quote(model.RunSucceeded) + ` THEN {completed} ELSE {failed} END`)
		completed, args = "run_reported_at", nil
		lease = "CASE WHEN run_status IS NULL THEN " + s.d.cast("timestamptz") + " END"
		errMsg = "CASE WHEN run_status = " + quote(model.RunFailed) + " THEN " + quote(model.RunFailedMessage) +
			" ELSE " + s.d.cast("text") + " END"
	case r.Callback:
		// A report made during an attempt that did not start a run is
		// stale: the next attempt starts the run afresh.
		run = `run_status = NULL, run_output = NULL, run_reported_at = NULL, `
	}
	q := `UPDATE occurrences SET ` + run + `status = ` + status + `, completed_at = ` + completed + statusSQL(`,
		next_attempt_at = COALESCE(?, next_attempt_at), lease_token = NULL, lease_owner = NULL,
		lease_expires_at = `+lease+`, manual_retry = ?, status_code = ?, response_body = ?, error_message = `+errMsg+`,
		updated_at = ?, started_at = COALESCE(started_at, ?), reason = COALESCE(?, reason),
		fanout_json = COALESCE(?, fanout_json), attempt_count = CASE WHEN v.epoch > 0 THEN v.count ELSE occurrences.attempt_count END
		FROM (SELECT `) + s.d.cast("text") + ` AS token, ` + s.d.cast("int") + ` AS slot, ` + s.d.cast("bigint") +
		` AS epoch, ` + s.d.cast("int") + ` AS seen, ` + s.d.cast("int") + ` AS count) v
		WHERE occurrences.id = ? AND ` + outcomeFence
	var reason any
	if r.Reason != "" {
		reason = r.Reason
	}
	args = append(args, s.tsp(r.NextAttemptAt), s.tsp(r.AckDeadline), false, r.StatusCode, r.ResponseBody,
		r.ErrorMessage, s.ts(r.Now), s.tsp(started), reason, r.Fanout, r.LeaseToken, r.Slot, r.Epoch, r.Seen, r.newCount(),
		r.OccurrenceID)
	if s.d.backend == Postgres {
		q = dropCompleted(q, `occurrences.id, occurrences.event_id, occurrences.scheduled_at, occurrences.reason`,
			`id, event_id, scheduled_at, status, reason`)
	} else {
		q += ` RETURNING id, event_id, scheduled_at, status, reason`
	}
	var rows []changedOccurrence
	if err := s.selectAll(ctx, &rows, q, args...); err != nil {
		return nil, fmt.Errorf("record outcome: %w", err)
	}
	if len(rows) != 1 {
		return model.ErrLeaseLost, nil
	}
	o := rows[0]
	stats.finished(o.EventID, r.ActionType, o.At.Time, o.Status, o.Reason, 1)
	if r.WholeSeries {
		stats.markOneTime(o.EventID)
	}
	return nil, nil
}

// Acknowledge completes an occurrence that awaits a client acknowledgement.
// An acknowledgement racing the dispatcher (the delivery is in flight: the
// row is still due and waiting as its owner read it, or dispatching under an
// older version's per-row lease) is kept in acked_at and completes the row
// when the delivery is recorded. One statement, so it cannot fall between
// the states. ErrNotFound when the occurrence is in none of them.
// The event's last_status follows: "awaiting_ack" becomes "completed" once
// none of its rows awaits an acknowledgement any more.
func (s *Store) Acknowledge(ctx context.Context, occurrenceID string, now time.Time) error {
	return s.WithTx(ctx, func(tx *Store) error {
		// A row that awaited its acknowledgement is completed now (one
		// still dispatching stays so): the statistics count it.
		var rows []changedOccurrence
		err := tx.selectAll(ctx, &rows, statusSQL(`UPDATE occurrences SET acked_at = ?, updated_at = ?,
			completed_at = CASE WHEN status = {awaiting_ack} THEN ? ELSE completed_at END,
			lease_expires_at = CASE WHEN status = {awaiting_ack} THEN NULL ELSE lease_expires_at END,
			status = CASE WHEN status = {awaiting_ack} THEN {completed} ELSE status END
			WHERE id = ? AND (status = {awaiting_ack} OR (acked_at IS NULL
				AND (status = {dispatching} OR (status IN {waiting} AND next_attempt_at <= ?))))
			RETURNING id, event_id, scheduled_at, status, reason`),
			s.ts(now), s.ts(now), s.ts(now), occurrenceID, s.ts(now))
		if err != nil {
			return fmt.Errorf("acknowledge occurrence: %w", err)
		}
		if len(rows) != 1 {
			return model.ErrNotFound
		}
		var stats rollupDeltas
		stats.finished(rows[0].EventID, "", rows[0].At.Time, rows[0].Status, rows[0].Reason, 1)
		if err := tx.addRollups(ctx, &stats); err != nil {
			return err
		}
		_, err = tx.exec(ctx, `UPDATE events SET last_status = `+ackedStatusSQL+`
			WHERE id = (SELECT event_id FROM occurrences WHERE id = ?) AND last_status = `+quote(string(model.OccurrenceAwaitingAck)),
			occurrenceID)
		if err != nil {
			return fmt.Errorf("note acknowledged run: %w", err)
		}
		return nil
	})
}

// ackedStatusSQL is an event's last_status when an outcome or an
// acknowledgement says "awaiting_ack": still that while one of its rows
// awaits an acknowledgement, "completed" once none does (the client may
// acknowledge before the delivery is recorded; the row is then completed
// at once).
var ackedStatusSQL = statusSQL(`CASE WHEN EXISTS (SELECT 1 FROM unfinished_occurrences o
	WHERE o.event_id = events.id AND o.status = {awaiting_ack}) THEN {awaiting_ack} ELSE {completed} END`)

// pauseGoneEvent pauses an event whose receiver answered 410 and cancels its
// pending non-manual occurrences.
func (s *Store) pauseGoneEvent(ctx context.Context, r *OutcomeRecord) error {
	const why = "the receiver answered 410 Gone"
	res, err := s.exec(ctx, statusSQL(`UPDATE events SET status = ?, last_status = ?, updated_at = ?,
		paused_at = ?, paused_until = NULL, pause_reason = ?, paused_by = 'scheduler', pause_catch_up = ?,
		version = version + 1 WHERE id = ? AND status = {active}`),
		model.EventPaused, r.PauseReason, s.ts(r.Now), s.ts(r.Now), why, model.PauseSkip, r.EventID)
	if err != nil {
		return fmt.Errorf("pause gone event: %w", err)
	}
	if affected(res) == 1 {
		err := s.AppendHistory(ctx, model.HistoryEntry{EventID: r.EventID, At: r.Now, Subject: "scheduler",
			Channel: "scheduler", Action: model.HistoryPause, Reason: why,
			Changes: json.RawMessage(`{"status":{"from":"active","to":"paused"}}`)})
		if err != nil {
			return err
		}
	}
	_, err = s.CancelFutureOccurrences(ctx, r.EventID, time.Time{}, true, model.ReasonPaused, r.Now)
	return err
}

// insertAttempts records attempts, many rows per statement.
func (s *Store) insertAttempts(ctx context.Context, attempts []*model.Attempt) error {
	for _, a := range attempts {
		if a.ID == "" {
			a.ID = model.NewID()
		}
	}
	if s.d.backend == Postgres {
		if s.conn != nil && allInstantsKnown(attempts) {
			return s.copyAttempts(ctx, attempts)
		}
		return s.insertAttemptArrays(ctx, attempts)
	}
	const perStatement = 128 // 18 parameters a row; a power of two (preparedChunks)
	// An attempt carries its occurrence's instant (the partition key on
	// PostgreSQL); the dispatcher knows it, other callers may leave it zero
	// and the occurrence's row supplies it.
	const row = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
		COALESCE(?, (SELECT o.scheduled_at FROM occurrences o WHERE o.id = ?)), ?, ?), `
	start := 0
	for _, size := range preparedChunks(len(attempts), perStatement) {
		chunk := attempts[start : start+size]
		start += size
		args := make([]any, 0, 18*len(chunk))
		for _, a := range chunk {
			var at any
			if !a.ScheduledAt.IsZero() {
				at = s.ts(a.ScheduledAt)
			}
			args = append(args, a.ID, a.OccurrenceID, a.EventID, a.Attempt, a.Manual, s.ts(a.StartedAt), a.DurationMS,
				a.StatusCode, a.Outcome, a.Error, a.ResponseExcerpt, a.Truncated, a.LatenessMS, a.EndpointID,
				at, a.OccurrenceID, a.RequestJSON, a.SubscriptionID)
		}
		q := `INSERT INTO attempts (` + attemptColumns + `) VALUES ` +
			strings.TrimSuffix(strings.Repeat(row, len(chunk)), ", ")
		if _, err := s.execHot(ctx, q, args...); err != nil {
			return fmt.Errorf("insert attempts: %w", err)
		}
	}
	return nil
}

// allInstantsKnown reports whether every attempt carries its occurrence's
// instant, as the dispatcher's do.
func allInstantsKnown(attempts []*model.Attempt) bool {
	for _, a := range attempts {
		if a.ScheduledAt.IsZero() {
			return false
		}
	}
	return true
}

// copyAttempts is insertAttempts on a PostgreSQL transaction when every
// attempt knows its instant (the dispatcher's batches): COPY in binary
// sends each value as it is, where the array insert had PostgreSQL unpack
// sixteen arrays and qhronosd grow a bind message of the whole batch (a
// sent request is most of an attempt's bytes).
func (s *Store) copyAttempts(ctx context.Context, attempts []*model.Attempt) error {
	rows := make([][]any, len(attempts))
	for k, a := range attempts {
		rows[k] = []any{a.ID, a.OccurrenceID, a.EventID, a.Attempt, a.Manual, a.StartedAt.UTC(), a.DurationMS,
			a.StatusCode, a.Outcome, a.Error, a.ResponseExcerpt, a.Truncated, a.LatenessMS, a.EndpointID,
			a.ScheduledAt.UTC(), a.RequestJSON, a.SubscriptionID}
	}
	// uuid columns: id, occurrence_id, event_id, endpoint_id, subscription_id
	if err := s.copyRowsBuffered(ctx, "attempts", attemptColumns, rows, 0, 1, 2, 13, 16); err != nil {
		return fmt.Errorf("insert attempts: %w", err)
	}
	return nil
}

// insertAttemptArrays is insertAttempts on PostgreSQL: the batch as one
// array per column, one statement of the same text whatever its size
// (see outcomeArrays).
func (s *Store) insertAttemptArrays(ctx context.Context, attempts []*model.Attempt) error {
	if len(attempts) == 0 {
		return nil
	}
	n := len(attempts)
	ids, occs, events, outcomes := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	numbers, manual, truncated := make([]int, n), make([]bool, n), make([]bool, n)
	started, at := make([]time.Time, n), make([]*time.Time, n)
	durations, lateness := make([]int64, n), make([]int64, n)
	codes, errs, excerpts, endpoints := make([]*int, n), make([]*string, n), make([]*string, n), make([]*string, n)
	requests, subscriptions := make([]*string, n), make([]*string, n)
	for k, a := range attempts {
		ids[k], occs[k], events[k], outcomes[k] = a.ID, a.OccurrenceID, a.EventID, a.Outcome
		numbers[k], manual[k], truncated[k] = a.Attempt, a.Manual, a.Truncated
		started[k], durations[k], lateness[k] = a.StartedAt.UTC(), a.DurationMS, a.LatenessMS
		codes[k], errs[k], excerpts[k], endpoints[k] = a.StatusCode, a.Error, a.ResponseExcerpt, a.EndpointID
		requests[k], subscriptions[k] = a.RequestJSON, a.SubscriptionID
		if !a.ScheduledAt.IsZero() {
			at[k] = utcp(&a.ScheduledAt)
		}
	}
	q := `INSERT INTO attempts (` + attemptColumns + `)
		SELECT id, occurrence_id, event_id, attempt, manual, started_at, duration_ms, status_code, outcome, error,
			response_excerpt, truncated, lateness_ms, endpoint_id,
			COALESCE(at, (SELECT o.scheduled_at FROM occurrences o WHERE o.id = u.occurrence_id)), request_json,
			subscription_id
		FROM unnest(?::uuid[], ?::uuid[], ?::uuid[], ?::int[], ?::bool[], ?::timestamptz[], ?::bigint[], ?::int[],
			?::text[], ?::text[], ?::text[], ?::bool[], ?::bigint[], ?::uuid[], ?::timestamptz[], ?::text[], ?::uuid[])
		AS u(id, occurrence_id, event_id, attempt, manual, started_at, duration_ms, status_code, outcome, error,
			response_excerpt, truncated, lateness_ms, endpoint_id, at, request_json, subscription_id)`
	if _, err := s.exec(ctx, q, uuidArray(ids), uuidArray(occs), uuidArray(events), numbers, manual, started,
		durations, pgArray(codes), outcomes, pgArray(errs), pgArray(excerpts), truncated, lateness,
		nullableUUIDArray(endpoints), pgArray(at), pgArray(requests), nullableUUIDArray(subscriptions)); err != nil {
		return fmt.Errorf("insert attempts: %w", err)
	}
	return nil
}
