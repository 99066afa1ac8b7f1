package hub

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/qhronos/qhronos/internal/startstop"
)

// TokenChecker reports which token ids are no longer usable (revoked or
// unknown). The store implements it; the database is the truth, so a
// revocation made on any instance is seen here without the bus.
type TokenChecker interface {
	RevokedTokens(ctx context.Context, ids []string) ([]string, error)
}

// SessionCheckInterval is how often a SessionWatcher looks at the tokens of
// open sessions: a revoked token's sessions close within it (plus one query)
// on every instance.
const SessionCheckInterval = 250 * time.Millisecond

// Reasons a session is ended; they are the close frame's reason.
const (
	ReasonTokenRevoked = "token revoked"
	ReasonTokenExpired = "token expired"
)

// EndInvalidSessions ends every session of this instance whose token has
// expired by now or has been revoked: one query for all of them, however many
// sessions share a token.
func (h *Hub) EndInvalidSessions(ctx context.Context, checker TokenChecker, now time.Time) error {
	h.mu.RLock()
	byToken := map[string][]*Listener{}
	for _, l := range h.all() {
		if l.TokenID == "" {
			continue
		}
		if !l.ExpiresAt.IsZero() && !now.Before(l.ExpiresAt) {
			l.end(ReasonTokenExpired)
			continue
		}
		byToken[l.TokenID] = append(byToken[l.TokenID], l)
	}
	h.mu.RUnlock()
	if len(byToken) == 0 {
		return nil
	}
	ids := make([]string, 0, len(byToken))
	for id := range byToken {
		ids = append(ids, id)
	}
	revoked, err := checker.RevokedTokens(ctx, ids)
	if err != nil {
		return fmt.Errorf("check websocket session tokens: %w", err)
	}
	for _, id := range revoked {
		for _, l := range byToken[id] {
			l.end(ReasonTokenRevoked)
		}
	}
	return nil
}

// all lists every listener; the caller holds h.mu.
func (h *Hub) all() []*Listener {
	out := make([]*Listener, 0, len(h.listeners))
	for l := range h.listeners {
		out = append(out, l)
	}
	for _, set := range h.clients {
		for l := range set {
			out = append(out, l)
		}
	}
	return out
}

// SessionWatcher runs EndInvalidSessions every interval while started. An
// interval well under a second keeps the promise that a revoked or expired
// token's sessions close within a second on every instance.
type SessionWatcher struct {
	startstop.Base
	hub      *Hub
	checker  TokenChecker
	now      func() time.Time
	interval time.Duration
}

var _ startstop.Service = (*SessionWatcher)(nil)

// NewSessionWatcher returns a watcher of h's sessions (SessionCheckInterval
// in production).
func NewSessionWatcher(h *Hub, checker TokenChecker, now func() time.Time, interval time.Duration) *SessionWatcher {
	return &SessionWatcher{hub: h, checker: checker, now: now, interval: interval}
}

// Start checks the sessions every interval until ctx ends or Stop is
// called.
func (w *SessionWatcher) Start(ctx context.Context) error {
	ctx, shouldStart, stopped := w.StartInit(ctx)
	if !shouldStart {
		return nil
	}
	go func() {
		defer stopped()
		startstop.Every(ctx, w.interval, false, func(ctx context.Context) {
			if err := w.hub.EndInvalidSessions(ctx, w.checker, w.now()); err != nil && ctx.Err() == nil {
				w.hub.log.Warn("check websocket sessions", zap.Error(err))
			}
		})
	}()
	return nil
}
