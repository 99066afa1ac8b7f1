package coordination

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
)

// Redis is the Coordinator of the production deployment: pub/sub, leases and
// GCRA buckets in Redis, shared by every instance that uses the same prefix.
// Every key and channel it touches starts with the prefix, so tenants and
// tests sharing one Redis never see each other.
type Redis struct {
	client   redis.UniversalClient
	prefix   string
	logger   *zap.Logger
	limiter  *redisLimiter
	sem      *redisSemaphore
	ownsConn bool // Close also closes client (set by Open, which made it)

	mu     sync.Mutex
	subs   map[*redis.PubSub]struct{}
	closed bool
}

var _ Coordinator = (*Redis)(nil)

// RedisOption adjusts a Redis coordinator.
type RedisOption func(*Redis)

// WithFallbackClock sets the clock of the in-process limiter that answers
// while Redis is away (time.Now by default); Redis itself uses its own clock
// so that all instances agree.
func WithFallbackClock(now func() time.Time) RedisOption {
	return func(r *Redis) {
		r.limiter = newRedisLimiter(r, now)
		r.sem.fallback = newMemorySemaphore(now)
	}
}

// NewRedis returns a Coordinator on client. Close ends its subscriptions but
// leaves client open: the caller passed it in and owns it.
func NewRedis(client redis.UniversalClient, prefix string, logger *zap.Logger, opts ...RedisOption) *Redis {
	if logger == nil {
		logger = zap.NewNop()
	}
	r := &Redis{
		client: client,
		prefix: prefix,
		logger: logger.Named("coordination"),
		subs:   make(map[*redis.PubSub]struct{}),
	}
	r.limiter = newRedisLimiter(r, time.Now)
	r.sem = &redisSemaphore{r: r, fallback: newMemorySemaphore(time.Now)}
	for _, opt := range opts {
		opt(r)
	}
	return r
}

// Name is "redis", for /status.
func (r *Redis) Name() string { return "redis" }

// Ping sends PING.
func (r *Redis) Ping(ctx context.Context) error {
	if err := r.client.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("ping redis: %w", err)
	}
	return nil
}

// Allow implements RateLimiter; see redisLimiter.
func (r *Redis) Allow(ctx context.Context, key string, limit Limit) (LimitResult, error) {
	return r.limiter.Allow(ctx, key, limit)
}

// Acquire implements Semaphore; see redisSemaphore.
func (r *Redis) Acquire(ctx context.Context, key, holder string, limit int, ttl time.Duration) (bool, error) {
	return r.sem.Acquire(ctx, key, holder, limit, ttl)
}

// Release implements Semaphore.
func (r *Redis) Release(ctx context.Context, key, holder string) error {
	return r.sem.Release(ctx, key, holder)
}

// Degraded returns the Redis error that made the latest Allow answer from
// the in-process fallback limiter, or nil when Redis answered it.
func (r *Redis) Degraded() error { return r.limiter.degraded() }

// Close ends every subscription (their channels close). It closes the client
// only when Open created it.
func (r *Redis) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	subs := r.subs
	r.subs = nil
	r.mu.Unlock()

	for ps := range subs {
		_ = ps.Close() // its forwarder sees the closed channel and closes the subscriber's
	}
	if r.ownsConn {
		if err := r.client.Close(); err != nil {
			return fmt.Errorf("close redis client: %w", err)
		}
	}
	return nil
}

// key is the prefixed Redis key for one kind of state.
func (r *Redis) key(kind, name string) string {
	return r.prefix + kind + ":" + name
}
