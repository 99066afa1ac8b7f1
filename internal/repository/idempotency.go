package repository

import (
	"context"
	"fmt"
	"time"

	"github.com/qhronos/qhronos/internal/model"
)

// GetIdempotency returns the unexpired record for (principal, key).
func (s *Store) GetIdempotency(ctx context.Context, principal, key string, now time.Time) (model.IdempotencyRecord, error) {
	var r model.IdempotencyRecord
	err := s.get(ctx, &r, `SELECT principal, key, request_hash, status_code, body, created_at, expires_at
		FROM idempotency_keys WHERE principal = ? AND key = ? AND expires_at > ?`, principal, key, s.ts(now))
	if err != nil {
		return model.IdempotencyRecord{}, fmt.Errorf("get idempotency key: %w", err)
	}
	r.CreatedAt, r.ExpiresAt = utc(r.CreatedAt), utc(r.ExpiresAt)
	return r, nil
}

// PutIdempotency stores the first answer for a key. An expired record under
// the same key is replaced; a live one gives ErrConflict.
func (s *Store) PutIdempotency(ctx context.Context, r model.IdempotencyRecord) error {
	return s.WithTx(ctx, func(tx *Store) error {
		if _, err := tx.exec(ctx, `DELETE FROM idempotency_keys WHERE principal = ? AND key = ? AND expires_at <= ?`,
			r.Principal, r.Key, tx.ts(r.CreatedAt)); err != nil {
			return fmt.Errorf("drop expired idempotency key: %w", err)
		}
		_, err := tx.exec(ctx, `INSERT INTO idempotency_keys (principal, key, request_hash, status_code, body,
			created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)`, r.Principal, r.Key, r.RequestHash, r.StatusCode,
			r.Body, tx.ts(r.CreatedAt), tx.ts(r.ExpiresAt))
		if err != nil {
			return fmt.Errorf("put idempotency key: %w", err)
		}
		return nil
	})
}

// PurgeIdempotency deletes expired records.
func (s *Store) PurgeIdempotency(ctx context.Context, now time.Time) (int, error) {
	res, err := s.exec(ctx, `DELETE FROM idempotency_keys WHERE expires_at <= ?`, s.ts(now))
	if err != nil {
		return 0, fmt.Errorf("purge idempotency keys: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}
