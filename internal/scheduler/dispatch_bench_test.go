package scheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/repository/repositorytest"
	"github.com/qhronos/qhronos/internal/scheduler"
	"github.com/qhronos/qhronos/internal/scheduler/schedulertest"
)

// newBenchEnv is newEnv without per-attempt test logging.
func newBenchEnv(b *testing.B, s *repository.Store, cfg scheduler.Config) *env {
	e := &env{t: b, store: s, clock: schedulertest.NewClock(t0), recv: schedulertest.NewReceiver(b), cfg: cfg}
	e.exp = scheduler.NewExpander(cfg, s, nil, e.clock, nil, zap.NewNop())
	e.disp = scheduler.NewDispatcher(cfg, scheduler.DispatcherDeps{Store: s, Registry: registry(b, e.clock),
		Clock: e.clock, Logger: zap.NewNop(), Rand: func() float64 { return 0.5 },
		Secrets: func(*model.Event) ([]string, error) { return []string{"test-secret"}, nil }})
	b.Cleanup(e.disp.Close)
	return e
}

// BenchmarkDispatch measures deliveries/s of already-due one-time events
// through the real webhook action to a loopback receiver, outcomes and
// attempts recorded, on each backend.
func BenchmarkDispatch(b *testing.B) {
	for _, backend := range repositorytest.Backends() {
		b.Run(backend.Name, func(b *testing.B) {
			store := backend.Open(b)
			cfg := testConfig()
			cfg.Workers = 64
			cfg.MaxPerDestination = 64
			e := newBenchEnv(b, store, cfg)
			for i := 0; i < b.N; i++ {
				e.create(e.event(nil))
			}
			e.clock.Set(t0.Add(time.Minute))
			b.ResetTimer()
			start := time.Now()
			ctx := context.Background()
			for {
				n, err := e.disp.RunOnce(ctx)
				require.NoError(b, err)
				if n == 0 {
					require.NoError(b, e.disp.Wait(ctx))
					if left, _ := store.CountOccurrences(ctx, model.OccurrenceFilter{Unrestricted: true,
						Status: []model.OccurrenceStatus{"pending", "retrying", "dispatching"}}); left == 0 {
						break
					}
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "deliveries/s")
			require.Equal(b, b.N, len(e.recv.Deliveries()))
		})
	}
}

// BenchmarkExpansion measures occurrences/s materialized by the expander:
// minutely events expanding a 24 h lookahead (1,000 rows a run per event).
func BenchmarkExpansion(b *testing.B) {
	for _, backend := range repositorytest.Backends() {
		b.Run(backend.Name, func(b *testing.B) {
			store := backend.Open(b)
			cfg := testConfig()
			cfg.Lookahead = 24 * time.Hour
			e := newBenchEnv(b, store, cfg)
			rule := "FREQ=MINUTELY"
			for i := 0; i < b.N; i++ {
				ev := e.event(func(ev *model.Event) { ev.RRule = &rule })
				require.NoError(b, store.CreateEvent(context.Background(), ev))
			}
			b.ResetTimer()
			start := time.Now()
			total := 0
			for {
				n, err := e.exp.RunOnce(context.Background())
				require.NoError(b, err)
				if n == 0 {
					break
				}
				total += n
			}
			b.StopTimer()
			require.Positive(b, total)
			b.ReportMetric(float64(total)/time.Since(start).Seconds(), "occurrences/s")
		})
	}
}
