package repository

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/qhronos/qhronos/internal/model"
)

const endpointHealthColumns = `state, state_changed_at, disabled_reason, opened_at, cool_down_until, trial_token,
	trial_until, consecutive_failures, window_start, window_total, window_failures, last_error, last_error_at,
	last_success_at`

// healthRow is an endpoint_health row.
type healthRow struct {
	State               string     `db:"state"`
	StateChangedAt      time.Time  `db:"state_changed_at"`
	DisabledReason      string     `db:"disabled_reason"`
	OpenedAt            *time.Time `db:"opened_at"`
	CoolDownUntil       *time.Time `db:"cool_down_until"`
	TrialToken          *string    `db:"trial_token"`
	TrialUntil          *time.Time `db:"trial_until"`
	ConsecutiveFailures int        `db:"consecutive_failures"`
	WindowStart         *time.Time `db:"window_start"`
	WindowTotal         int        `db:"window_total"`
	WindowFailures      int        `db:"window_failures"`
	LastError           string     `db:"last_error"`
	LastErrorAt         *time.Time `db:"last_error_at"`
	LastSuccessAt       *time.Time `db:"last_success_at"`
}

func (r *healthRow) health() model.EndpointHealth {
	h := model.EndpointHealth{State: model.EndpointState(r.State), StateChangedAt: utc(r.StateChangedAt),
		DisabledReason: r.DisabledReason, OpenedAt: utcp(r.OpenedAt), CoolDownUntil: utcp(r.CoolDownUntil),
		TrialUntil: utcp(r.TrialUntil), ConsecutiveFailures: r.ConsecutiveFailures, WindowStart: utcp(r.WindowStart),
		WindowTotal: r.WindowTotal, WindowFailures: r.WindowFailures, LastError: r.LastError,
		LastErrorAt: utcp(r.LastErrorAt), LastSuccessAt: utcp(r.LastSuccessAt)}
	if r.TrialToken != nil {
		h.TrialToken = *r.TrialToken
	}
	return h
}

// UpdateEndpointHealth changes an endpoint's health in one transaction: it
// reads the row under a lock, lets change decide (it reports whether it
// changed anything) and writes the result. Every instance's breaker goes
// through it, so their transitions are serialized and each happens once; a
// circuit transition (circuitChange) is recorded in the endpoint's circuit
// history in the same transaction. It returns the health before and after.
func (s *Store) UpdateEndpointHealth(ctx context.Context, id string, now time.Time,
	change func(h model.EndpointHealth) (model.EndpointHealth, bool)) (before, after model.EndpointHealth, err error) {
	if uuid.Validate(id) != nil {
		return before, after, fmt.Errorf("update endpoint health: %w", model.ErrNotFound)
	}
	err = s.WithTx(ctx, func(tx *Store) error {
		var r healthRow
		q := `SELECT ` + endpointHealthColumns + ` FROM endpoint_health WHERE endpoint_id = ?` + tx.d.forUpdate
		if err := tx.get(ctx, &r, q, id); err != nil {
			return err
		}
		before = r.health()
		next, changed := change(before)
		after = before
		if !changed {
			return nil
		}
		after = next
		var token *string
		if next.TrialToken != "" {
			token = &next.TrialToken
		}
		_, err := tx.exec(ctx, `UPDATE endpoint_health SET state = ?, state_changed_at = ?, disabled_reason = ?,
			opened_at = ?, cool_down_until = ?, trial_token = ?, trial_until = ?, consecutive_failures = ?,
			window_start = ?, window_total = ?, window_failures = ?, last_error = ?, last_error_at = ?,
			last_success_at = ?, updated_at = ? WHERE endpoint_id = ?`,
			string(next.State), tx.ts(next.StateChangedAt), next.DisabledReason, tx.tsp(next.OpenedAt),
			tx.tsp(next.CoolDownUntil), token, tx.tsp(next.TrialUntil), next.ConsecutiveFailures,
			tx.tsp(next.WindowStart), next.WindowTotal, next.WindowFailures, next.LastError, tx.tsp(next.LastErrorAt),
			tx.tsp(next.LastSuccessAt), tx.ts(now), id)
		if err != nil {
			return err
		}
		if e, ok := circuitChange(id, before, next, now); ok {
			return tx.appendCircuitEntry(ctx, e)
		}
		return nil
	})
	if err != nil {
		return before, after, fmt.Errorf("update endpoint health: %w", err)
	}
	return before, after, nil
}

// OpenCircuits lists the endpoints whose circuit is open, oldest first,
// with their circuit overrides' source (the disabler's scan).
func (s *Store) OpenCircuits(ctx context.Context, limit int) ([]string, error) {
	var ids []string
	err := s.selectAll(ctx, &ids, `SELECT h.endpoint_id FROM endpoint_health h JOIN endpoints e ON e.id = h.endpoint_id
		WHERE h.state = ? AND e.deleted_at IS NULL ORDER BY h.opened_at LIMIT ?`, string(model.EndpointOpen), limit)
	if err != nil {
		return nil, fmt.Errorf("list open circuits: %w", err)
	}
	return ids, nil
}
