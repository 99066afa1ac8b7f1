package coordination

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
)

// gcraScript is gcraStep in Lua: read, decide and write in one atomic step,
// so concurrent requests from any number of instances never overdraw a
// bucket (the original read then wrote, and let 232 of 300 through a burst
// of 100). It uses Redis' clock so instances with skewed clocks agree.
// Instants are microseconds; results come back as strings because Redis
// truncates Lua numbers to integers.
var gcraScript = redis.NewScript(`
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = 1000000 / rate
local burst_offset = interval * burst
local tat = tonumber(redis.call('GET', KEYS[1]) or '')
if tat == nil or tat < now then
	tat = now
end
local new_tat = tat + interval
local allow_at = new_tat - burst_offset
local diff = now - allow_at
local remaining = math.floor(diff / interval)
if remaining < 0 then
	return {0, '0', string.format('%.17g', -diff), string.format('%.17g', tat - now)}
end
local reset = new_tat - now
local px = math.ceil(reset / 1000)
if px < 1 then
	px = 1
elseif px > 1e15 then
	px = 1e15
end
redis.call('SET', KEYS[1], string.format('%.17g', new_tat), 'PX', string.format('%.0f', px))
return {1, string.format('%.0f', remaining), '0', string.format('%.17g', reset)}
`)

// fallbackCooldown is how long Allow answers from the in-process limiter
// after a Redis error before it tries Redis again, so an outage does not add
// a dial timeout to every request.
const fallbackCooldown = time.Second

// redisLimiter is the Redis GCRA limiter with an in-process fallback: when
// Redis errors, requests are still limited, per instance, rather than all
// refused or all allowed.
type redisLimiter struct {
	r        *Redis
	now      func() time.Time
	fallback *memoryLimiter

	mu        sync.Mutex
	lastErr   error     // why the latest Allow fell back; nil when Redis answered
	retryFrom time.Time // skip Redis until then
}

func newRedisLimiter(r *Redis, now func() time.Time) *redisLimiter {
	return &redisLimiter{r: r, now: now, fallback: newMemoryLimiter(now)}
}

// Allow implements RateLimiter. Redis errors never surface: the request is
// decided by the in-process fallback and Degraded reports the error. Only an
// invalid limit or the caller's own cancelled ctx return an error.
func (l *redisLimiter) Allow(ctx context.Context, key string, limit Limit) (LimitResult, error) {
	if err := validateLimit(limit); err != nil {
		return LimitResult{}, err
	}
	if l.coolingDown() {
		return l.fallback.Allow(ctx, key, limit)
	}
	res, err := l.allowRedis(ctx, key, limit)
	if err == nil {
		l.recovered()
		return res, nil
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return LimitResult{}, fmt.Errorf("rate limit %s: %w", key, ctxErr)
	}
	l.failed(err)
	return l.fallback.Allow(ctx, key, limit)
}

func (l *redisLimiter) allowRedis(ctx context.Context, key string, limit Limit) (LimitResult, error) {
	vals, err := gcraScript.Run(ctx, l.r.client, []string{l.r.key("rate", key)},
		strconv.FormatFloat(limit.Rate, 'g', -1, 64), limit.Burst).Slice()
	if err != nil {
		return LimitResult{}, fmt.Errorf("rate limit %s: %w", key, err)
	}
	if len(vals) != 4 {
		return LimitResult{}, fmt.Errorf("rate limit %s: unexpected script reply %v", key, vals)
	}
	allowed, _ := vals[0].(int64)
	var nums [3]float64
	for i := range nums {
		s, _ := vals[i+1].(string)
		if nums[i], err = strconv.ParseFloat(s, 64); err != nil {
			return LimitResult{}, fmt.Errorf("rate limit %s: parse script reply: %w", key, err)
		}
	}
	res := LimitResult{
		Allowed:    allowed == 1,
		Limit:      limit.Burst,
		Remaining:  int(nums[0]),
		RetryAfter: microsToDuration(nums[1]),
		ResetAfter: microsToDuration(nums[2]),
	}
	return res, nil
}

func (l *redisLimiter) coolingDown() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lastErr != nil && l.now().Before(l.retryFrom)
}

func (l *redisLimiter) failed(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lastErr == nil {
		l.r.logger.Warn("rate limiter falls back to in-process", zap.Error(err))
	}
	l.lastErr = err
	l.retryFrom = l.now().Add(fallbackCooldown)
}

func (l *redisLimiter) recovered() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lastErr != nil {
		l.r.logger.Info("rate limiter back on redis")
	}
	l.lastErr = nil
}

func (l *redisLimiter) degraded() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lastErr
}
