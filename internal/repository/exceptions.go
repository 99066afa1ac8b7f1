package repository

import (
	"context"
	"fmt"
	"time"

	"github.com/qhronos/qhronos/internal/model"
)

const exceptionColumns = `event_id, at, action, to_at, reason, created_by, created_at`

// Exceptions returns an event's exceptions at or after from, in order.
func (s *Store) Exceptions(ctx context.Context, eventID string, from time.Time) ([]model.Exception, error) {
	var out []model.Exception
	err := s.selectAll(ctx, &out, `SELECT `+exceptionColumns+` FROM event_exceptions WHERE event_id = ? AND at >= ?
		ORDER BY at`, eventID, s.ts(from))
	if err != nil {
		return nil, fmt.Errorf("list exceptions: %w", err)
	}
	for i := range out {
		out[i].At, out[i].CreatedAt, out[i].To = utc(out[i].At), utc(out[i].CreatedAt), utcp(out[i].To)
	}
	if out == nil {
		out = []model.Exception{}
	}
	return out, nil
}

// PutException stores ex, replacing the event's exception at the same
// instant.
func (s *Store) PutException(ctx context.Context, ex model.Exception) error {
	_, err := s.exec(ctx, `INSERT INTO event_exceptions (`+exceptionColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (event_id, at) DO UPDATE SET action = excluded.action, to_at = excluded.to_at,
		reason = excluded.reason, created_by = excluded.created_by, created_at = excluded.created_at`,
		ex.EventID, s.ts(ex.At), ex.Action, s.tsp(ex.To), ex.Reason, ex.CreatedBy, s.ts(ex.CreatedAt))
	if err != nil {
		return fmt.Errorf("store exception: %w", err)
	}
	return nil
}

// DeleteException removes the event's exception at at; ErrNotFound when
// there is none.
func (s *Store) DeleteException(ctx context.Context, eventID string, at time.Time) error {
	res, err := s.exec(ctx, `DELETE FROM event_exceptions WHERE event_id = ? AND at = ?`, eventID, s.ts(at))
	if err != nil {
		return fmt.Errorf("delete exception: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return model.ErrNotFound
	}
	return nil
}
