package metrics_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/qhronos/qhronos/internal/metrics"
)

// The health gauges say what /status says: which dependency answers, which
// loop is unhealthy, the waiting work by status and the open circuits; a
// failing query leaves its gauge absent instead of reporting a wrong zero.
func TestHealthGauges(t *testing.T) {
	t.Parallel()
	m := metrics.New(metrics.Options{})
	down := errors.New("connection refused")
	m.RegisterHealth(metrics.HealthOptions{
		Database: func(context.Context) error { return nil },
		Redis:    func(context.Context) error { return down },
		Loops: func() map[string]any {
			return map[string]any{"dispatcher": map[string]any{"healthy": true}, "expander": map[string]any{"healthy": false},
				"rescuer": map[string]any{"runs": 0}}
		},
		Waiting: func(context.Context) (map[string]int, error) {
			return map[string]int{"pending": 7, "retrying": 2}, nil
		},
		OpenCircuits: func(context.Context) (int, error) { return 0, down },
	})
	got := scrape(t, m.Handler(""), "")
	for _, tt := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"qhronos_dependency_up", map[string]string{"dependency": "database"}, 1},
		{"qhronos_dependency_up", map[string]string{"dependency": "redis"}, 0},
		{"qhronos_loop_healthy", map[string]string{"loop": "dispatcher"}, 1},
		{"qhronos_loop_healthy", map[string]string{"loop": "expander"}, 0},
		{"qhronos_loop_healthy", map[string]string{"loop": "rescuer"}, 1},
		{"qhronos_occurrences_waiting", map[string]string{"status": "pending"}, 7},
		{"qhronos_occurrences_waiting", map[string]string{"status": "retrying"}, 2},
	} {
		if v, ok := value(got, tt.name, tt.labels); !ok || v != tt.want {
			t.Errorf("%s%v: got %v (present %v), want %v", tt.name, tt.labels, v, ok, tt.want)
		}
	}
	if _, ok := got["qhronos_endpoint_circuits_open"]; ok {
		t.Error("qhronos_endpoint_circuits_open reported although its query failed")
	}
}

// The worker gauges show which destinations hold the dispatch workers and
// how long the oldest attempt has run, so a stuck receiver is seen (and
// alerted on) before its tenant complains; tenant scopes are not named.
func TestWorkerGauges(t *testing.T) {
	t.Parallel()
	m := metrics.New(metrics.Options{})
	m.RegisterHealth(metrics.HealthOptions{Workers: func() metrics.Workers {
		return metrics.Workers{Busy: 20, LargestScope: 16, StuckDestinations: 1, OldestAttempt: 12 * time.Second,
			ByDestination: map[string]int{"10.0.0.7:443": 16, "hooks.example.com:443": 4}}
	}})
	got := scrape(t, m.Handler(""), "")
	for _, tt := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"qhronos_dispatch_workers_busy", nil, 20},
		{"qhronos_dispatch_largest_scope_workers", nil, 16},
		{"qhronos_dispatch_destinations_stuck", nil, 1},
		{"qhronos_dispatch_oldest_attempt_seconds", nil, 12},
		{"qhronos_dispatch_destination_workers", map[string]string{"destination": "10.0.0.7:443"}, 16},
		{"qhronos_dispatch_destination_workers", map[string]string{"destination": "hooks.example.com:443"}, 4},
	} {
		if v, ok := value(got, tt.name, tt.labels); !ok || v != tt.want {
			t.Errorf("%s%v: got %v (present %v), want %v", tt.name, tt.labels, v, ok, tt.want)
		}
	}
	if n := len(got["qhronos_dispatch_destination_workers"].GetMetric()); n != 2 {
		t.Errorf("%d destination series, want one per destination holding workers", n)
	}
}
