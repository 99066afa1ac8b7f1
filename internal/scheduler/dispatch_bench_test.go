package scheduler_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/qhronos/qhronos/internal/coordination"
	"github.com/qhronos/qhronos/internal/endpoints"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/outbound"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/repository/repositorytest"
	"github.com/qhronos/qhronos/internal/scheduler"
	"github.com/qhronos/qhronos/internal/scheduler/schedulertest"
	"github.com/qhronos/qhronos/internal/secrets"
)

// newBenchEnv is newEnv without per-attempt test logging; gate admits
// attempts to endpoints (nil: none).
func newBenchEnv(b *testing.B, s *repository.Store, cfg scheduler.Config, gate scheduler.EndpointGate) *env {
	e := &env{t: b, store: s, clock: schedulertest.NewClock(t0), recv: schedulertest.NewReceiver(b), cfg: cfg}
	e.exp = scheduler.NewExpander(cfg, s, nil, e.clock, nil, zap.NewNop())
	e.disp = scheduler.NewDispatcher(cfg, scheduler.DispatcherDeps{Store: s, Registry: registry(b, e.clock),
		Clock: e.clock, Logger: zap.NewNop(), Rand: func() float64 { return 0.5 }, Endpoints: gate,
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
			e := newBenchEnv(b, store, benchConfig(), nil)
			benchDispatch(b, e, nil)
		})
	}
}

// BenchmarkDispatchToEndpoint is BenchmarkDispatch with every event naming
// one endpoint (no limits): the cost of resolving and admitting through the
// endpoint runtime and of its health bookkeeping.
func BenchmarkDispatchToEndpoint(b *testing.B) {
	for _, backend := range repositorytest.Backends() {
		b.Run(backend.Name, func(b *testing.B) {
			store := backend.Open(b)
			box, err := secrets.NewBox("0123456789abcdef0123456789abcdef")
			require.NoError(b, err)
			clock := schedulertest.NewClock(t0)
			rt := endpoints.New(endpoints.Config{Store: store, Box: box, Limits: coordination.NewLocal(clock.Now),
				Clock: clock, Outbound: outbound.Options{AllowLoopback: true},
				Circuit: model.Circuit{Failures: 5, FailureRatio: 0.5, MinRequests: 20, Window: time.Minute,
					CoolDown: time.Minute, DisableAfter: time.Hour},
				Load: func(ctx context.Context, id string) (*model.Endpoint, error) {
					ep, err := store.GetEndpoint(ctx, id)
					return &ep, err
				}})
			e := newBenchEnv(b, store, benchConfig(), rt)
			sealed, err := box.Seal([]byte("test-secret"))
			require.NoError(b, err)
			ep := &model.Endpoint{ID: uuid.NewString(), Name: "bench", URL: e.recv.URL + "/hook", Secret: sealed,
				Version: 1, CreatedAt: t0, UpdatedAt: t0}
			require.NoError(b, store.CreateEndpoint(context.Background(), ep))
			params, _ := json.Marshal(map[string]string{"endpoint_id": ep.ID})
			benchDispatch(b, e, func(ev *model.Event) { ev.Action.Params, ev.EndpointID = params, &ep.ID })
		})
	}
}

func benchConfig() scheduler.Config {
	cfg := testConfig()
	cfg.Workers = 64
	cfg.MaxPerDestination = 64
	return cfg
}

// benchDispatch creates b.N due one-time events (mut edits each) and
// dispatches them all, reporting deliveries/s.
func benchDispatch(b *testing.B, e *env, mut func(ev *model.Event)) {
	for i := 0; i < b.N; i++ {
		e.create(e.event(mut))
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
			if left, _ := e.store.CountOccurrences(ctx, model.OccurrenceFilter{Unrestricted: true,
				Status: []model.OccurrenceStatus{"pending", "retrying", "dispatching"}}); left == 0 {
				break
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "deliveries/s")
	require.Equal(b, b.N, len(e.recv.Deliveries()))
}

// BenchmarkExpansion measures occurrences/s materialized by the expander:
// minutely events expanding a 24 h lookahead (1,000 rows a run per event).
func BenchmarkExpansion(b *testing.B) {
	for _, backend := range repositorytest.Backends() {
		b.Run(backend.Name, func(b *testing.B) {
			store := backend.Open(b)
			cfg := testConfig()
			cfg.Lookahead = 24 * time.Hour
			e := newBenchEnv(b, store, cfg, nil)
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
