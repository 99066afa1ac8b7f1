// Package coordination holds the state instances share that is not the source
// of truth: wake-ups and cross-instance messages (pub/sub), leader locks and
// rate-limit buckets. The embedded deployment uses the in-process Local
// implementation; production uses Redis. Losing any of it loses no occurrence.
package coordination

import (
	"context"
	"time"
)

// Bus carries small messages between instances. Delivery is best effort: a
// subscriber that is away misses messages, so nothing may depend on them for
// correctness (the database is polled as a fallback).
type Bus interface {
	// Publish sends each payload on channel, in order; many at once cost
	// one round trip.
	Publish(ctx context.Context, channel string, payloads ...[]byte) error
	// Subscribe delivers messages published on channel until ctx ends, then
	// closes the returned channel. It survives backend reconnects.
	Subscribe(ctx context.Context, channel string) (<-chan []byte, error)
}

// Locker grants named leases to one owner at a time (leader election for
// jobs such as the expander and archiver).
type Locker interface {
	// TryLock acquires name for owner, or renews it when owner already holds
	// it, for ttl. It reports whether owner holds the lock afterwards.
	TryLock(ctx context.Context, name, owner string, ttl time.Duration) (bool, error)
	// Unlock releases name if owner holds it.
	Unlock(ctx context.Context, name, owner string) error
}

// Limit is a GCRA rate: Rate requests per second sustained, Burst at once.
type Limit struct {
	Rate  float64
	Burst int
}

// LimitResult is the verdict for one request.
type LimitResult struct {
	Allowed    bool
	Limit      int           // the burst, for RateLimit-Limit
	Remaining  int           // requests still allowed at once
	RetryAfter time.Duration // when denied: wait this long before retrying
	ResetAfter time.Duration // until the bucket is full again
}

// RateLimiter decides whether one more request under key is allowed.
type RateLimiter interface {
	Allow(ctx context.Context, key string, limit Limit) (LimitResult, error)
}

// Coordinator is everything one deployment shares between its instances.
type Coordinator interface {
	Bus
	Locker
	RateLimiter
	Semaphore
	// Ping reports whether the backend answers (nil for in-process).
	Ping(ctx context.Context) error
	// Name is "in-process" or "redis", for /status.
	Name() string
	Close() error
}
