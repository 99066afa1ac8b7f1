package secrets

import (
	"fmt"
	"time"
)

// Sealed is what an event stores about its signing secrets: its own secret
// (sealed; empty when it signs with hmac.default_secret) and, during a
// rotation's grace period, the secret that was in force before it.
//
// A rotation of an event that signed with the default secret records the
// default as an empty Previous with PreviousUntil set. It is a marker rather
// than a sealed copy of the default secret on purpose: the default secret is
// then never copied into event rows (and their backups), and an operator who
// changes hmac.default_secret — because it leaked, say — is honoured at once
// by every event, in a grace period or not, instead of the old value signing
// on from a copy until the grace ends.
type Sealed struct {
	Current       []byte
	Previous      []byte
	PreviousUntil *time.Time
}

// InGrace reports whether the previous secret still signs at now.
func (s Sealed) InGrace(now time.Time) bool {
	return s.PreviousUntil != nil && now.Before(*s.PreviousUntil)
}

// Rotate returns the stored state after a rotation at now to the sealed
// secret next with the given grace: the secret in force until now — the
// event's own or the default — keeps signing until now+grace. A zero grace
// drops it at once.
func (s Sealed) Rotate(next []byte, now time.Time, grace time.Duration) Sealed {
	if grace <= 0 {
		return Sealed{Current: next}
	}
	until := now.UTC().Add(grace)
	return Sealed{Current: next, Previous: s.Current, PreviousUntil: &until}
}

// SigningSecrets opens the secrets that sign a delivery at now, newest
// first: the current one (the event's own, else defaultSecret) and, until
// the grace period ends, the previous one (the event's former own secret,
// else defaultSecret as it is configured now).
func (b *Box) SigningSecrets(s Sealed, defaultSecret string, now time.Time) ([]string, error) {
	open := func(sealed []byte, what string) (string, error) {
		if len(sealed) == 0 {
			return defaultSecret, nil
		}
		plain, err := b.Open(sealed)
		if err != nil {
			return "", fmt.Errorf("decrypt %s signing secret: %w", what, err)
		}
		return string(plain), nil
	}
	current, err := open(s.Current, "current")
	if err != nil {
		return nil, err
	}
	out := []string{current}
	if s.InGrace(now) {
		prev, err := open(s.Previous, "previous")
		if err != nil {
			return nil, err
		}
		if prev != current {
			out = append(out, prev)
		}
	}
	return out, nil
}
