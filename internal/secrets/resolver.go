package secrets

import (
	"fmt"
	"time"

	"github.com/qhronos/qhronos/internal/model"
)

// Resolver opens the signing secrets of events with one box and the
// configured default secret (hmac.default_secret).
type Resolver struct {
	box           *Box
	defaultSecret string
	now           func() time.Time
}

// NewResolver returns a resolver; now is the deployment clock, which decides
// whether a rotation's grace period has ended.
func NewResolver(box *Box, defaultSecret string, now func() time.Time) *Resolver {
	return &Resolver{box: box, defaultSecret: defaultSecret, now: now}
}

// Resolve decrypts an event's signing secrets, newest first; the one in
// force before a rotation (the event's own or the default secret) signs too
// until its grace period ends. Events without a secret of their own sign
// with the default secret.
func (r *Resolver) Resolve(ev *model.Event) ([]string, error) {
	out, err := r.box.SigningSecrets(Sealed{Current: ev.HMACSecret, Previous: ev.PreviousSecret,
		PreviousUntil: ev.PreviousSecretExpires}, r.defaultSecret, r.now())
	if err != nil {
		return nil, fmt.Errorf("event %s: %w", ev.ID, err)
	}
	return out, nil
}
