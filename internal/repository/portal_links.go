package repository

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/qhronos/qhronos/internal/model"
)

const portalLinkColumns = `id, code_hash, tags_json, return_url, expires_at, used_at, created_by, created_at`

type portalLinkRow struct {
	model.PortalLink
	TagsJSON string `db:"tags_json"`
}

func (r *portalLinkRow) link() (model.PortalLink, error) {
	l := r.PortalLink
	if err := json.Unmarshal([]byte(r.TagsJSON), &l.Tags); err != nil {
		return model.PortalLink{}, fmt.Errorf("decode tags of portal link %s: %w", l.ID, err)
	}
	l.ExpiresAt, l.CreatedAt, l.UsedAt = utc(l.ExpiresAt), utc(l.CreatedAt), utcp(l.UsedAt)
	return l, nil
}

// CreatePortalLink stores a new portal link. The links that expired before
// now go on the way: used or not, they can sign nobody in again.
func (s *Store) CreatePortalLink(ctx context.Context, l model.PortalLink, now time.Time) error {
	return s.WithTx(ctx, func(tx *Store) error {
		if _, err := tx.exec(ctx, `DELETE FROM portal_links WHERE expires_at < ?`, tx.ts(now)); err != nil {
			return fmt.Errorf("drop expired portal links: %w", err)
		}
		_, err := tx.exec(ctx, `INSERT INTO portal_links (`+portalLinkColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			l.ID, l.CodeHash, tagsJSON(l.Tags), l.ReturnURL, tx.ts(l.ExpiresAt), tx.tsp(l.UsedAt), l.CreatedBy,
			tx.ts(l.CreatedAt))
		if err != nil {
			return fmt.Errorf("insert portal link: %w", err)
		}
		return nil
	})
}

// RedeemPortalLink uses the link whose code hashes to codeHash, once: in one
// transaction it marks the link used, provided it was unused and had not
// expired at now, and stores the token row issue makes of it (the portal
// session's). One statement checks and marks, so of two redeems at once
// exactly one finds the link unused. An unknown, used or expired link is
// model.ErrNotFound; when issue or the insert fails, the link stays unused.
func (s *Store) RedeemPortalLink(ctx context.Context, codeHash string, now time.Time,
	issue func(model.PortalLink) (model.Token, error)) (model.PortalLink, error) {
	var out model.PortalLink
	err := s.WithTx(ctx, func(tx *Store) error {
		var r portalLinkRow
		err := tx.get(ctx, &r, `UPDATE portal_links SET used_at = ?
			WHERE code_hash = ? AND used_at IS NULL AND expires_at > ?
			RETURNING `+portalLinkColumns, tx.ts(now), codeHash, tx.ts(now))
		if err != nil {
			return fmt.Errorf("redeem portal link: %w", err)
		}
		if out, err = r.link(); err != nil {
			return err
		}
		t, err := issue(out)
		if err != nil {
			return err
		}
		return tx.CreateToken(ctx, t)
	})
	if err != nil {
		return model.PortalLink{}, err
	}
	return out, nil
}
