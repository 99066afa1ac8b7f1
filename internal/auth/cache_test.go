package auth

import (
	"fmt"
	"testing"
	"time"

	"github.com/qhronos/qhronos/internal/model"
)

func TestTokenCacheIsBounded(t *testing.T) {
	t.Parallel()
	c := newTokenCache(time.Second, 100)
	for i := range 1000 {
		c.put(fmt.Sprint("id-", i), cacheEntry{found: true, fetchedAt: t0})
	}
	if got, max := c.len(), 100; got > max {
		t.Errorf("cache holds %d entries, want at most %d", got, max)
	}
	if _, ok := c.get("id-999", t0); !ok {
		t.Errorf("the most recent entry was evicted on insert")
	}
}

func TestTokenCacheExpiry(t *testing.T) {
	t.Parallel()
	c := newTokenCache(time.Second, 10)
	c.put("x", cacheEntry{token: model.Token{ID: "x"}, found: true, fetchedAt: t0})
	tests := []struct {
		at   time.Time
		want bool
	}{
		{t0, true},
		{t0.Add(999 * time.Millisecond), true},
		{t0.Add(time.Second), false},
		{t0.Add(-time.Millisecond), false}, // clock went back: refetch
	}
	for _, tt := range tests {
		if _, got := c.get("x", tt.at); got != tt.want {
			t.Errorf("get at %v: hit = %v, want %v", tt.at.Sub(t0), got, tt.want)
		}
	}
	off := newTokenCache(-1, 10)
	off.put("x", cacheEntry{found: true, fetchedAt: t0})
	if _, ok := off.get("x", t0); ok {
		t.Errorf("disabled cache returned a hit")
	}
}
