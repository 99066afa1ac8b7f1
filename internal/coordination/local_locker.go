package coordination

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// localLocker keeps leases in memory; expiry follows the injected clock, so
// tests advance time instead of waiting for it.
type localLocker struct {
	now func() time.Time

	mu    sync.Mutex
	locks map[string]lease
}

type lease struct {
	owner   string
	expires time.Time
}

func newLocalLocker(now func() time.Time) *localLocker {
	return &localLocker{now: now, locks: make(map[string]lease)}
}

// TryLock implements Locker.
func (l *localLocker) TryLock(_ context.Context, name, owner string, ttl time.Duration) (bool, error) {
	if err := validateLease(owner, ttl); err != nil {
		return false, fmt.Errorf("lock %s: %w", name, err)
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if held, ok := l.locks[name]; ok && held.owner != owner && now.Before(held.expires) {
		return false, nil
	}
	l.locks[name] = lease{owner: owner, expires: now.Add(ttl)}
	return true, nil
}

// Unlock implements Locker: it releases name only when owner still holds it;
// anyone else's call leaves the lock as it is.
func (l *localLocker) Unlock(_ context.Context, name, owner string) error {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if held, ok := l.locks[name]; ok && held.owner == owner && now.Before(held.expires) {
		delete(l.locks, name)
	}
	return nil
}

// validateLease rejects requests that would make a lock meaningless: an
// anonymous owner could be impersonated by anyone, and a lease shorter than
// a millisecond cannot be expressed in Redis.
func validateLease(owner string, ttl time.Duration) error {
	if owner == "" {
		return fmt.Errorf("owner: must not be empty")
	}
	if ttl < time.Millisecond {
		return fmt.Errorf("ttl %s: must be at least 1ms", ttl)
	}
	return nil
}
