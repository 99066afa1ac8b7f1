package repository

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/qhronos/qhronos/internal/model"
)

const circuitColumns = `id, endpoint_id, at, change, from_state, to_state, reason, consecutive_failures, subject,
	channel`

// circuitRow is a CircuitEntry as stored.
type circuitRow struct {
	ID                  string    `db:"id"`
	EndpointID          string    `db:"endpoint_id"`
	At                  time.Time `db:"at"`
	Change              string    `db:"change"`
	FromState           string    `db:"from_state"`
	ToState             string    `db:"to_state"`
	Reason              string    `db:"reason"`
	ConsecutiveFailures int       `db:"consecutive_failures"`
	Subject             string    `db:"subject"`
	Channel             string    `db:"channel"`
}

// circuitChange is the circuit history entry of a health change made by
// the breaker (UpdateEndpointHealth), or false when the change is not a
// circuit transition: counters, a trial's mark, healthy ⇄ degraded.
// It reads the transition off before and after, so every caller of
// UpdateEndpointHealth records the same way and none can forget to.
func circuitChange(id string, before, after model.EndpointHealth, now time.Time) (model.CircuitEntry, bool) {
	e := model.CircuitEntry{EndpointID: id, At: now, From: before.State, To: after.State,
		ConsecutiveFailures: after.ConsecutiveFailures, Reason: after.LastError}
	wasOpen := before.State == model.EndpointOpen
	switch {
	case after.State == model.EndpointOpen && !wasOpen:
		e.Change = model.CircuitOpened
	case after.State == model.EndpointOpen && before.TrialToken != "" && after.TrialToken == "" &&
		after.ConsecutiveFailures > before.ConsecutiveFailures:
		// EndTrial's failure: the mark cleared and one more failure
		// counted (giving a trial back clears the mark alone).
		e.Change = model.CircuitReopened
	case wasOpen && (after.State == model.EndpointHealthy || after.State == model.EndpointDegraded):
		e.Change, e.Reason = model.CircuitClosed, ""
	case after.State == model.EndpointDisabled && before.State != model.EndpointDisabled:
		e.Change, e.Reason = model.CircuitDisabled, after.DisabledReason
		if after.LastError != "" {
			e.Reason += ": " + after.LastError
		}
	default:
		return e, false
	}
	return e, true
}

// appendCircuitEntry records e and trims the endpoint's history to its
// newest model.CircuitHistoryKeep entries. Run it in the transaction of the
// change it records: the health row's lock orders the writers of one
// endpoint, so every transition is written once, whichever instance made
// it.
func (s *Store) appendCircuitEntry(ctx context.Context, e model.CircuitEntry) error {
	if e.ID == "" {
		// Time-ordered, so entries of one microsecond keep their order.
		id, err := uuid.NewV7()
		if err != nil {
			return fmt.Errorf("append circuit history: %w", err)
		}
		e.ID = id.String()
	}
	_, err := s.exec(ctx, `INSERT INTO endpoint_circuit_history (`+circuitColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, e.ID, e.EndpointID, s.ts(e.At.UTC().Truncate(time.Microsecond)),
		e.Change, string(e.From), string(e.To), e.Reason, e.ConsecutiveFailures, e.Subject, e.Channel)
	if err != nil {
		return fmt.Errorf("append circuit history: %w", err)
	}
	// Bounded growth: transitions are rare, so trimming on each one costs
	// nothing worth a background job.
	if err := s.keepNewest(ctx, "endpoint_circuit_history", "endpoint_id", e.EndpointID,
		model.CircuitHistoryKeep); err != nil {
		return fmt.Errorf("trim circuit history: %w", err)
	}
	return nil
}

// keepNewest deletes table's rows of one owner (ownerColumn = owner) but
// its newest keep by (at, id): the bounded lists of circuit transitions
// and sent notices.
func (s *Store) keepNewest(ctx context.Context, table, ownerColumn, owner string, keep int) error {
	_, err := s.exec(ctx, `DELETE FROM `+table+` WHERE `+ownerColumn+` = ? AND id NOT IN
		(SELECT id FROM `+table+` WHERE `+ownerColumn+` = ? ORDER BY at DESC, id DESC LIMIT ?)`, owner, owner, keep)
	return err
}

// newestFirstPage is the WHERE clause and arguments of one page of a
// newest-first (at, id) listing of one owner, strictly before before when
// set.
func (s *Store) newestFirstPage(ownerColumn, owner string, before *model.PageCursor) (string, []any) {
	where, args := ownerColumn+` = ?`, []any{owner}
	if before != nil {
		at := s.ts(before.At)
		// The redundant bound lets the (owner, at, id) index start at the
		// cursor.
		where += ` AND at <= ? AND (at < ? OR (at = ? AND id < ?))`
		args = append(args, at, at, at, before.ID)
	}
	return where, args
}

// ListCircuitHistory returns one page of an endpoint's circuit history,
// newest first, strictly before f.Before when set. The caller checks that
// the principal may read the endpoint.
func (s *Store) ListCircuitHistory(ctx context.Context, endpointID string, before *model.PageCursor,
	limit int) ([]model.CircuitEntry, error) {
	if uuid.Validate(endpointID) != nil {
		return []model.CircuitEntry{}, nil
	}
	where, args := s.newestFirstPage("endpoint_id", endpointID, before)
	var rows []circuitRow
	err := s.selectAll(ctx, &rows, `SELECT `+circuitColumns+` FROM endpoint_circuit_history WHERE `+where+
		` ORDER BY at DESC, id DESC LIMIT ?`, append(args, pageLimit(limit))...)
	if err != nil {
		return nil, fmt.Errorf("list circuit history: %w", err)
	}
	out := make([]model.CircuitEntry, 0, len(rows))
	for _, r := range rows {
		out = append(out, model.CircuitEntry{ID: r.ID, EndpointID: r.EndpointID, At: utc(r.At), Change: r.Change,
			From: model.EndpointState(r.FromState), To: model.EndpointState(r.ToState), Reason: r.Reason,
			ConsecutiveFailures: r.ConsecutiveFailures, Subject: r.Subject, Channel: r.Channel})
	}
	return out, nil
}

// pageLimit is a listing's limit, 50 when none was given.
func pageLimit(limit int) int {
	if limit <= 0 {
		return 50
	}
	return limit
}
