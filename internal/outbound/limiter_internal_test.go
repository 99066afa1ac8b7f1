package outbound

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLimiterForgetsIdleDestinations guards memory over a long run: every
// destination ever called must not stay in the map.
func TestLimiterForgetsIdleDestinations(t *testing.T) {
	t.Parallel()
	l := NewLimiter(3)
	for i := range 50 {
		key := string(rune('a'+i%26)) + ".example:443"
		r, err := l.Acquire(context.Background(), key)
		require.NoError(t, err)
		r()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if got := len(l.dst); got != 0 {
		t.Errorf("destinations kept after release = %d, want 0", got)
	}
}
