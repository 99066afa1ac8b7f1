package coordination_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/qhronos/qhronos/internal/coordination"
	"github.com/qhronos/qhronos/internal/coordination/coordinationtest"
	"go.uber.org/zap"
)

// BenchmarkAllow measures what rate limiting adds to every API request.
func BenchmarkAllow(b *testing.B) {
	limit := coordination.Limit{Rate: 1e6, Burst: 1_000_000} // always allowed: measure the path, not denials
	b.Run("local", func(b *testing.B) {
		l := coordination.NewLocal(time.Now)
		b.Cleanup(func() { _ = l.Close() })
		benchAllow(b, l, limit)
	})
	b.Run("redis", func(b *testing.B) {
		client, prefix := coordinationtest.RedisClient(b)
		r := coordination.NewRedis(client, prefix, zap.NewNop())
		b.Cleanup(func() { _ = r.Close() })
		benchAllow(b, r, limit)
		if err := r.Degraded(); err != nil {
			b.Fatalf("measured the fallback, not Redis: %v", err)
		}
	})
}

func benchAllow(b *testing.B, rl coordination.RateLimiter, limit coordination.Limit) {
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			i++
			if _, err := rl.Allow(b.Context(), fmt.Sprint("principal-", i%64), limit); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
