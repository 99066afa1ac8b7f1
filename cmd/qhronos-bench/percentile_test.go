package main

import (
	"testing"
	"time"
)

func TestPercentileNearestRank(t *testing.T) {
	t.Parallel()
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = ms(i + 1)
	}
	tests := []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"single sample is every percentile", []time.Duration{ms(7)}, 99, ms(7)},
		{"p50 of 1..100 is 50", hundred, 50, ms(50)},
		{"p95 of 1..100 is 95", hundred, 95, ms(95)},
		{"p99 of 1..100 is 99", hundred, 99, ms(99)},
		{"p100 is the max", hundred, 100, ms(100)},
		{"p99 of 10 samples is the max", hundred[:10], 99, ms(10)},
		{"p50 of 4 samples is the 2nd", []time.Duration{ms(1), ms(2), ms(3), ms(4)}, 50, ms(2)},
		{"tiny p is the min", hundred, 0.001, ms(1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := percentile(tt.sorted, tt.p); got != tt.want {
				t.Errorf("percentile(p%v): got %v, want %v", tt.p, got, tt.want)
			}
		})
	}
}

func TestSummarizeIgnoresInputOrder(t *testing.T) {
	t.Parallel()
	in := []time.Duration{5 * time.Millisecond, -2 * time.Millisecond, 1 * time.Millisecond, 4 * time.Millisecond}
	got := summarize(in)
	want := Summary{Count: 4, Min: -2 * time.Millisecond, P50: time.Millisecond, P95: 5 * time.Millisecond,
		P99: 5 * time.Millisecond, Max: 5 * time.Millisecond, Mean: 2 * time.Millisecond}
	if got != want {
		t.Errorf("summarize: got %+v, want %+v", got, want)
	}
	if in[0] != 5*time.Millisecond {
		t.Errorf("summarize sorted its input in place: in[0] = %v", in[0])
	}
	if got := summarize(nil); got != (Summary{}) {
		t.Errorf("summarize(nil): got %+v, want zero", got)
	}
}
