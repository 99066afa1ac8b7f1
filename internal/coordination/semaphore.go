package coordination

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Semaphore bounds how many holders may hold key at once across every
// instance (an endpoint's max_concurrency). A slot is leased for ttl, so a
// crashed holder frees it by itself.
type Semaphore interface {
	// Acquire takes one of limit slots of key for holder (a unique token),
	// or reports false when all are taken. Acquiring a slot holder already
	// has renews it.
	Acquire(ctx context.Context, key, holder string, limit int, ttl time.Duration) (bool, error)
	// Release gives holder's slot back; releasing a slot not held does
	// nothing.
	Release(ctx context.Context, key, holder string) error
}

// memorySemaphore is the in-process Semaphore of Local, and what Redis falls
// back to when Redis errors: slots are then bounded per instance.
type memorySemaphore struct {
	now func() time.Time

	mu    sync.Mutex
	slots map[string]map[string]time.Time // key → holder → lease end
}

func newMemorySemaphore(now func() time.Time) *memorySemaphore {
	return &memorySemaphore{now: now, slots: map[string]map[string]time.Time{}}
}

// Acquire implements Semaphore.
func (m *memorySemaphore) Acquire(_ context.Context, key, holder string, limit int, ttl time.Duration) (bool, error) {
	if limit < 1 {
		return false, fmt.Errorf("semaphore %s: limit %d must be at least 1", key, limit)
	}
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	held := m.slots[key]
	for h, until := range held {
		if !until.After(now) {
			delete(held, h)
		}
	}
	if _, renew := held[holder]; !renew && len(held) >= limit {
		return false, nil
	}
	if held == nil {
		held = map[string]time.Time{}
		m.slots[key] = held
	}
	held[holder] = now.Add(ttl)
	return true, nil
}

// Release implements Semaphore.
func (m *memorySemaphore) Release(_ context.Context, key, holder string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if held := m.slots[key]; held != nil {
		delete(held, holder)
		if len(held) == 0 {
			delete(m.slots, key)
		}
	}
	return nil
}

// acquireScript drops expired slots and takes one if fewer than the limit
// are held, in one atomic step on Redis' clock. Scores are lease ends in
// microseconds; the key expires with its last lease.
var acquireScript = redis.NewScript(`
local limit = tonumber(ARGV[2])
local ttl = tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZSCORE', KEYS[1], ARGV[1]) == false and redis.call('ZCARD', KEYS[1]) >= limit then
	return 0
end
redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
redis.call('PEXPIRE', KEYS[1], math.ceil(ttl / 1000) + 1000)
return 1
`)

// redisSemaphore keeps slots in a sorted set per key, shared by every
// instance; when Redis errors it falls back to in-process slots.
type redisSemaphore struct {
	r        *Redis
	fallback *memorySemaphore
}

// Acquire implements Semaphore.
func (s *redisSemaphore) Acquire(ctx context.Context, key, holder string, limit int, ttl time.Duration) (bool, error) {
	if limit < 1 {
		return false, fmt.Errorf("semaphore %s: limit %d must be at least 1", key, limit)
	}
	n, err := acquireScript.Run(ctx, s.r.client, []string{s.r.key("sem", key)}, holder, limit, ttl.Microseconds()).Int()
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return false, fmt.Errorf("semaphore %s: %w", key, ctxErr)
		}
		return s.fallback.Acquire(ctx, key, holder, limit, ttl)
	}
	return n == 1, nil
}

// Release implements Semaphore.
func (s *redisSemaphore) Release(ctx context.Context, key, holder string) error {
	_ = s.fallback.Release(ctx, key, holder)
	if err := s.r.client.ZRem(ctx, s.r.key("sem", key), holder).Err(); err != nil {
		return fmt.Errorf("semaphore %s: release: %w", key, err)
	}
	return nil
}
