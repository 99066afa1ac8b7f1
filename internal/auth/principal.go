// Package auth derives who is calling (a Principal) from a bearer token and
// decides what that principal may see and do. It is pure logic: the HTTP
// middleware calls Authenticate once per request and every handler asks the
// Principal, so tenancy is enforced in one place.
package auth

import (
	"time"

	"slices"
	"strings"

	"github.com/qhronos/qhronos/internal/model"
)

// Principal is the authenticated caller of one request: the master token, or
// a JWT whose access and scope come from its stored token row.
type Principal struct {
	Subject string
	Master  bool
	Access  model.Access
	Scope   []string
	TokenID string
	// ExpiresAt is the JWT's expiry (zero for the master token): long-lived
	// sessions such as WebSockets end at it.
	ExpiresAt time.Time
	// Channel is the kind of client acting (api, console, cli; scheduler
	// for the server's own changes), recorded in an event's history. The
	// API sets it per request from X-Qhronos-Via; empty means "api".
	Channel string
}

// DefaultChannel is the channel of a principal that named none.
const DefaultChannel = "api"

// Via is the principal's channel, DefaultChannel when none was set.
func (p Principal) Via() string {
	if p.Channel == "" {
		return DefaultChannel
	}
	return p.Channel
}

// Allows reports whether the principal's access level is at least a
// (read < write < admin). The master token allows everything; an unknown
// level on either side allows nothing.
func (p Principal) Allows(a model.Access) bool {
	if p.Master {
		return true
	}
	need := rank(a)
	return need > 0 && rank(p.Access) >= need
}

// unrestricted reports whether scope is ignored: the master token and admin
// tokens see every tenant.
func (p Principal) unrestricted() bool {
	return p.Master || p.Access == model.AccessAdmin
}

// CanRead reports whether an event carrying tags is visible: it must share at
// least one tag with the scope, so a non-admin token with an empty scope sees
// nothing. Anything not readable answers 404, not 403, to hide its existence.
func (p Principal) CanRead(tags []string) bool {
	if !p.Allows(model.AccessRead) {
		return false
	}
	if p.unrestricted() {
		return true
	}
	for _, t := range tags {
		if slices.Contains(p.Scope, t) {
			return true
		}
	}
	return false
}

// CanCreate checks the tags an event will carry after a create or update:
// they must be non-empty and all inside the scope, so a scoped token can never
// create an event it could not see or move one out of its own tenancy.
func (p Principal) CanCreate(tags []string) error {
	if !p.Allows(model.AccessWrite) {
		return ErrInsufficientAccess
	}
	if p.unrestricted() {
		return nil
	}
	if !p.inside(tags) {
		return ErrOutsideScope
	}
	return nil
}

// CanModify reports whether an update, delete, pause or trigger may touch an
// event given its CURRENT tags: all of them must be inside the scope, so a
// token cannot act on an event shared with a tenant it does not cover.
func (p Principal) CanModify(currentTags []string) bool {
	if !p.Allows(model.AccessWrite) {
		return false
	}
	return p.unrestricted() || p.inside(currentTags)
}

// ScopeFilter tells list queries how to filter: unrestricted means no tag
// filter at all; otherwise rows must share a tag with the returned list (an
// empty list matches nothing). The slice is a copy the caller may keep.
func (p Principal) ScopeFilter() (tags []string, unrestricted bool) {
	if !p.Allows(model.AccessRead) {
		return []string{}, false
	}
	if p.unrestricted() {
		return nil, true
	}
	return append([]string{}, p.Scope...), false
}

// Key is a stable identity for rate limiting and idempotency records: one
// bucket for the master token, one per token id otherwise (never per client
// address, which is spoofable, nor per subject, which several tokens share).
func (p Principal) Key() string {
	if p.Master {
		return "master"
	}
	return "jwt:" + p.TokenID
}

// CanMint checks that a token the principal wants to mint is no wider than
// the principal itself: access ≤ its own, scope ⊆ its own. The master token
// may mint anything and an admin any access up to admin with any scope.
func (p Principal) CanMint(access model.Access, scope []string) error {
	if rank(access) == 0 {
		return ErrInvalidAccess
	}
	if p.Master {
		return nil
	}
	if rank(p.Access) == 0 || rank(access) > rank(p.Access) {
		return ErrAccessTooWide
	}
	if p.Access == model.AccessAdmin {
		return nil
	}
	for _, t := range scope {
		if !slices.Contains(p.Scope, t) {
			return ErrScopeTooWide
		}
	}
	return nil
}

// Portal reports whether the principal is a portal session's (a redeemed
// portal link's token). Its access level allows nothing by itself: every
// check of this package answers no, so a route, a WebSocket or a service
// that does not know about the portal refuses it.
func (p Principal) Portal() bool { return !p.Master && p.Access == model.AccessPortal }

// WithinPortal is the principal a portal session acts as on a route the API
// opens to the portal: write access inside its own tags, which is what a
// write token of that scope may do there and never more. It is the
// principal unchanged when it is not a portal session's.
func (p Principal) WithinPortal() Principal {
	if !p.Portal() {
		return p
	}
	p.Access = model.AccessWrite
	p.Scope = slices.Clone(p.Scope)
	return p
}

// inside reports whether tags is non-empty and every tag is in the scope.
func (p Principal) inside(tags []string) bool {
	if len(tags) == 0 {
		return false
	}
	for _, t := range tags {
		if !slices.Contains(p.Scope, t) {
			return false
		}
	}
	return true
}

// KeyScope is the scope event keys of the principal are unique in: "*" for
// principals that see every tenant (master and admin tokens), else its tag
// scope, sorted — two tokens with the same scope share keys, tokens of
// different scopes may use one key independently.
func (p Principal) KeyScope() string {
	if p.unrestricted() {
		return "*"
	}
	scope := slices.Clone(p.Scope)
	slices.Sort(scope)
	return "tags:" + strings.Join(slices.Compact(scope), ",")
}
