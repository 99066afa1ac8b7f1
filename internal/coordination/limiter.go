package coordination

import (
	"context"
	"sync"
	"time"
)

// sweepEvery is how many Allow calls pass between sweeps of full buckets, so
// the map of keys stays bounded by the keys active within one reset period.
const sweepEvery = 1024

// memoryLimiter is the in-process GCRA limiter: Local's RateLimiter and the
// fallback Redis answers with when Redis is away. It shares gcraStep with the
// Redis script, so both give the same verdicts.
type memoryLimiter struct {
	now func() time.Time

	mu    sync.Mutex
	tats  map[string]float64 // key -> theoretical arrival time, microseconds
	calls int
}

func newMemoryLimiter(now func() time.Time) *memoryLimiter {
	return &memoryLimiter{now: now, tats: make(map[string]float64)}
}

// Allow implements RateLimiter.
func (m *memoryLimiter) Allow(_ context.Context, key string, limit Limit) (LimitResult, error) {
	if err := validateLimit(limit); err != nil {
		return LimitResult{}, err
	}
	now := unixMicros(m.now())

	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls++
	if m.calls%sweepEvery == 0 {
		m.sweep(now)
	}
	tat, res := gcraStep(m.tats[key], now, limit)
	if res.Allowed {
		m.tats[key] = tat
	}
	return res, nil
}

// sweep forgets buckets that have refilled completely: an absent bucket and
// a full one answer the same.
func (m *memoryLimiter) sweep(now float64) {
	for key, tat := range m.tats {
		if tat <= now {
			delete(m.tats, key)
		}
	}
}
