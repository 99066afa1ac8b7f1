package main

import (
	"testing"
	"time"
)

func TestPlanBurstFallsInOneSecond(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 12, 0, 0, 300_000_000, time.UTC)
	got, err := planInstants(ModeBurst, now, 10*time.Second, 1000, time.Second, 0, 0)
	if err != nil {
		t.Fatalf("planInstants: %v", err)
	}
	if len(got) != 1000 {
		t.Fatalf("instants: got %d, want 1000", len(got))
	}
	if want := time.Date(2026, 11, 21, 12, 0, 11, 0, time.UTC); !got[0].Equal(want) {
		t.Errorf("first instant: got %v, want %v (now+due-in rounded up to a second)", got[0], want)
	}
	for i, at := range got {
		if at.Truncate(time.Second) != got[0] {
			t.Fatalf("instant %d = %v is outside the second of %v", i, at, got[0])
		}
		if i > 0 && at.Before(got[i-1]) {
			t.Fatalf("instant %d = %v before instant %d = %v", i, at, i-1, got[i-1])
		}
	}
	same, err := planInstants(ModeBurst, now, time.Second, 3, 0, 0, 0)
	if err != nil {
		t.Fatalf("planInstants window 0: %v", err)
	}
	if !same[0].Equal(same[2]) {
		t.Errorf("window 0: got %v and %v, want one instant", same[0], same[2])
	}
}

func TestPlanSteadySpacing(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	got, err := planInstants(ModeSteady, now, 5*time.Second, 0, 0, 500, 20*time.Second)
	if err != nil {
		t.Fatalf("planInstants: %v", err)
	}
	if len(got) != 10_000 {
		t.Fatalf("instants: got %d, want 500/s × 20 s = 10000", len(got))
	}
	if want := now.Add(5 * time.Second); !got[0].Equal(want) {
		t.Errorf("first: got %v, want %v", got[0], want)
	}
	if d := got[1].Sub(got[0]); d != 2*time.Millisecond {
		t.Errorf("spacing: got %v, want 2ms", d)
	}
	if want := now.Add(5*time.Second + 20*time.Second - 2*time.Millisecond); !got[len(got)-1].Equal(want) {
		t.Errorf("last: got %v, want %v", got[len(got)-1], want)
	}
}

func TestPlanRejectsBadInput(t *testing.T) {
	t.Parallel()
	now := time.Now()
	tests := []struct {
		name     string
		mode     string
		n        int
		window   time.Duration
		rate     float64
		duration time.Duration
	}{
		{"unknown mode", "ramp", 10, 0, 1, time.Second},
		{"burst without events", ModeBurst, 0, time.Second, 0, 0},
		{"negative window", ModeBurst, 10, -time.Second, 0, 0},
		{"steady without rate", ModeSteady, 0, 0, 0, time.Second},
		{"steady without duration", ModeSteady, 0, 0, 10, 0},
		{"steady giving no events", ModeSteady, 0, 0, 0.5, time.Second},
	}
	for _, tt := range tests {
		if _, err := planInstants(tt.mode, now, time.Second, tt.n, tt.window, tt.rate, tt.duration); err == nil {
			t.Errorf("%s: got nil error, want one", tt.name)
		}
	}
}
