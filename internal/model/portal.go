package model

import "time"

// PortalLink is a one-time sign-in link to the portal: a reduced console
// limited to Tags. Only the SHA-256 of its code is stored (CodeHash).
type PortalLink struct {
	ID        string     `db:"id"`
	CodeHash  string     `db:"code_hash"`
	Tags      []string   `db:"-"` // stored as JSON in tags_json
	ReturnURL string     `db:"return_url"`
	ExpiresAt time.Time  `db:"expires_at"`
	UsedAt    *time.Time `db:"used_at"`
	CreatedBy string     `db:"created_by"`
	CreatedAt time.Time  `db:"created_at"`
}
