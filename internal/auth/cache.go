package auth

import (
	"sync"
	"time"

	"github.com/qhronos/qhronos/internal/model"
)

// maxCachedTokens bounds the token cache so a flood of distinct (validly
// signed) tokens cannot grow memory without limit.
const maxCachedTokens = 10_000

// tokenCache remembers token rows (and unknown ids) for a short TTL so that a
// burst of requests with one token costs one lookup, while a revocation is
// still seen on every instance within the TTL.
type tokenCache struct {
	ttl time.Duration
	max int

	mu      sync.Mutex
	entries map[string]cacheEntry
}

type cacheEntry struct {
	token     model.Token
	found     bool
	fetchedAt time.Time
}

func newTokenCache(ttl time.Duration, maxEntries int) *tokenCache {
	return &tokenCache{ttl: ttl, max: maxEntries, entries: make(map[string]cacheEntry)}
}

// get returns a fresh entry for id. An entry fetched "in the future" (the
// clock went back) is treated as stale.
func (c *tokenCache) get(id string, now time.Time) (cacheEntry, bool) {
	if c.ttl <= 0 {
		return cacheEntry{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[id]
	if !ok || !c.fresh(e, now) {
		return cacheEntry{}, false
	}
	return e, true
}

// put stores an entry, first sweeping stale ones and then, if still full,
// dropping arbitrary ones: the cache is an optimisation, never the truth.
func (c *tokenCache) put(id string, e cacheEntry) {
	if c.ttl <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[id]; !ok && len(c.entries) >= c.max {
		for k, old := range c.entries {
			if !c.fresh(old, e.fetchedAt) {
				delete(c.entries, k)
			}
		}
		for k := range c.entries {
			if len(c.entries) < c.max {
				break
			}
			delete(c.entries, k)
		}
	}
	c.entries[id] = e
}

func (c *tokenCache) fresh(e cacheEntry, now time.Time) bool {
	age := now.Sub(e.fetchedAt)
	return age >= 0 && age < c.ttl
}

// len reports the number of cached entries (for tests).
func (c *tokenCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
