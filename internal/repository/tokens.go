package repository

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/qhronos/qhronos/internal/model"
)

const tokenColumns = `id, subject, access, scope_json, expires_at, revoked_at, created_by, created_at`

type tokenRow struct {
	model.Token
	ScopeJSON string `db:"scope_json"`
}

func (r *tokenRow) token() (model.Token, error) {
	t := r.Token
	if err := json.Unmarshal([]byte(r.ScopeJSON), &t.Scope); err != nil {
		return model.Token{}, fmt.Errorf("decode scope of token %s: %w", t.ID, err)
	}
	if t.Scope == nil {
		t.Scope = []string{}
	}
	t.ExpiresAt, t.CreatedAt, t.RevokedAt = utc(t.ExpiresAt), utc(t.CreatedAt), utcp(t.RevokedAt)
	return t, nil
}

// CreateToken stores a minted token's record.
func (s *Store) CreateToken(ctx context.Context, t model.Token) error {
	_, err := s.exec(ctx, `INSERT INTO tokens (`+tokenColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		t.ID, t.Subject, t.Access, tagsJSON(t.Scope), s.ts(t.ExpiresAt), s.tsp(t.RevokedAt), t.CreatedBy,
		s.ts(t.CreatedAt))
	if err != nil {
		return fmt.Errorf("insert token: %w", err)
	}
	return nil
}

// TokenByID returns a token record by its id (the JWT's jti).
func (s *Store) TokenByID(ctx context.Context, id string) (model.Token, error) {
	var r tokenRow
	if err := s.get(ctx, &r, `SELECT `+tokenColumns+` FROM tokens WHERE id = ?`, id); err != nil {
		return model.Token{}, fmt.Errorf("get token: %w", err)
	}
	return r.token()
}

// ListTokens returns token records newest first; createdBy filters by minter
// when non-empty.
func (s *Store) ListTokens(ctx context.Context, createdBy string, limit int) ([]model.Token, error) {
	q := `SELECT ` + tokenColumns + ` FROM tokens`
	var args []any
	if createdBy != "" {
		q += ` WHERE created_by = ?`
		args = append(args, createdBy)
	}
	q += ` ORDER BY created_at DESC, id DESC LIMIT ?`
	args = append(args, limit)
	var rows []tokenRow
	if err := s.selectAll(ctx, &rows, q, args...); err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	out := make([]model.Token, 0, len(rows))
	for i := range rows {
		t, err := rows[i].token()
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// RevokeToken marks a token revoked; revoking twice keeps the first instant.
func (s *Store) RevokeToken(ctx context.Context, id string, now time.Time) error {
	res, err := s.exec(ctx, `UPDATE tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?`, s.ts(now), id)
	if err != nil {
		return fmt.Errorf("revoke token: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return model.ErrNotFound
	}
	return nil
}

// revokedTokensChunk bounds the parameters of one look-up.
const revokedTokensChunk = 500

// RevokedTokens returns those of ids that are revoked or unknown: the tokens
// whose WebSocket sessions must end.
func (s *Store) RevokedTokens(ctx context.Context, ids []string) ([]string, error) {
	var out []string
	for start := 0; start < len(ids); start += revokedTokensChunk {
		chunk := ids[start:min(start+revokedTokensChunk, len(ids))]
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		var valid []string
		err := s.selectAll(ctx, &valid, `SELECT id FROM tokens WHERE revoked_at IS NULL AND id IN (`+
			placeholders(len(chunk))+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("look up revoked tokens: %w", err)
		}
		live := make(map[string]bool, len(valid))
		for _, id := range valid {
			live[id] = true
		}
		for _, id := range chunk {
			if !live[id] {
				out = append(out, id)
			}
		}
	}
	return out, nil
}
