package repository

import (
	"context"
	"fmt"
	"time"
)

// RevokeConsoleSession records that the console session id was signed
// out; it stays refused until expires (when its cookie would have expired
// anyway). Revocations already past their expiry are dropped on the way.
func (s *Store) RevokeConsoleSession(ctx context.Context, id string, expires, now time.Time) error {
	return s.WithTx(ctx, func(tx *Store) error {
		if _, err := tx.exec(ctx, `DELETE FROM console_revoked_sessions WHERE expires_at < ?`, tx.ts(now)); err != nil {
			return fmt.Errorf("drop expired console revocations: %w", err)
		}
		if _, err := tx.exec(ctx, `INSERT INTO console_revoked_sessions (id, expires_at) VALUES (?, ?)
			ON CONFLICT (id) DO NOTHING`, id, tx.ts(expires)); err != nil {
			return fmt.Errorf("revoke console session: %w", err)
		}
		return nil
	})
}

// ConsoleSessionRevoked reports whether the console session id was signed
// out.
func (s *Store) ConsoleSessionRevoked(ctx context.Context, id string) (bool, error) {
	var n int
	if err := s.get(ctx, &n, `SELECT COUNT(*) FROM console_revoked_sessions WHERE id = ?`, id); err != nil {
		return false, fmt.Errorf("read console revocations: %w", err)
	}
	return n > 0, nil
}
