package metrics_test

import (
	"errors"
	"testing"
	"time"

	"github.com/qhronos/qhronos/internal/actions"
	"github.com/qhronos/qhronos/internal/metrics"
	"github.com/qhronos/qhronos/internal/model"
)

// Only an occurrence's first, scheduled attempt feeds the lateness
// histogram: a replay of a two-day-old occurrence, a manual trigger and a
// retry after its backoff are not firing late. Every attempt is counted.
func TestObserveAttemptLeavesManualAttemptsOutOfLateness(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 24, 4, 0, 0, 0, time.UTC)
	twoDaysAgo := now.Add(-48 * time.Hour)
	started := twoDaysAgo.Add(time.Second)
	ev := &model.Event{ID: "e", Action: model.Action{Type: "webhook"}}
	ok := actions.Outcome{Duration: 10 * time.Millisecond}
	tests := []struct {
		name         string
		occ          model.Occurrence
		wantLateness uint64 // samples in the lateness histogram after it
	}{
		{"first scheduled attempt", model.Occurrence{AttemptCount: 1, ScheduledAt: now.Add(-time.Second)}, 1},
		{"replay of a two-day-old occurrence", model.Occurrence{AttemptCount: 2, ScheduledAt: twoDaysAgo,
			StartedAt: &started, ManualRetry: true}, 0},
		{"replay of a missed occurrence (its first attempt)", model.Occurrence{AttemptCount: 1,
			ScheduledAt: twoDaysAgo, ManualRetry: true}, 0},
		{"manual trigger", model.Occurrence{AttemptCount: 1, ScheduledAt: now, Manual: true}, 0},
		{"retry after its backoff", model.Occurrence{AttemptCount: 3, ScheduledAt: now.Add(-time.Hour),
			StartedAt: &started}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := metrics.New(metrics.Options{})
			m.ObserveAttempt(ev, &tc.occ, ok, now)
			if got := sampleCount(t, m, "qhronos_deliveries_total"); got != 1 {
				t.Errorf("deliveries counted: got %d, want 1", got)
			}
			if got := sampleCount(t, m, "qhronos_firing_lateness_seconds"); got != tc.wantLateness {
				t.Errorf("lateness samples: got %d, want %d", got, tc.wantLateness)
			}
		})
	}
}

// Each attempt lands under the outcome label an operator alerts on.
func TestObserveAttemptLabelsOutcomes(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 24, 4, 0, 0, 0, time.UTC)
	ev := &model.Event{ID: "e", Action: model.Action{Type: "webhook"}}
	occ := &model.Occurrence{AttemptCount: 2, ScheduledAt: now}
	tests := []struct {
		out  actions.Outcome
		want string
	}{
		{actions.Outcome{}, "success"},
		{actions.Outcome{AwaitingAck: true}, "awaiting_ack"},
		{actions.Outcome{Err: errors.New("refused"), Retryable: true}, "retryable_failure"},
		{actions.Outcome{Err: errors.New("bad request")}, "failure"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			t.Parallel()
			m := metrics.New(metrics.Options{})
			m.ObserveAttempt(ev, occ, tc.out, now)
			families, err := m.Registry().Gather()
			if err != nil {
				t.Fatalf("gather: %v", err)
			}
			got := ""
			for _, f := range families {
				if f.GetName() != "qhronos_deliveries_total" {
					continue
				}
				for _, s := range f.GetMetric() {
					for _, l := range s.GetLabel() {
						if l.GetName() == "outcome" {
							got = l.GetValue()
						}
					}
				}
			}
			if got != tc.want {
				t.Errorf("outcome label: got %q, want %q", got, tc.want)
			}
		})
	}
}

// sampleCount sums a counter's values or a histogram's sample counts.
func sampleCount(t *testing.T, m *metrics.Metrics, name string) uint64 {
	t.Helper()
	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	var n uint64
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, s := range f.GetMetric() {
			if h := s.GetHistogram(); h != nil {
				n += h.GetSampleCount()
			}
			if c := s.GetCounter(); c != nil {
				n += uint64(c.GetValue())
			}
		}
	}
	return n
}
