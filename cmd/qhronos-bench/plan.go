package main

import (
	"fmt"
	"time"
)

// Mode names how due instants are laid out.
const (
	ModeBurst  = "burst"
	ModeSteady = "steady"
)

// planInstants returns the due instant of every event, ascending.
//
// burst: n instants spread evenly over [T, T+window), where T is now+dueIn
// rounded up to a whole second, so all fall inside one wall-clock second
// when window ≤ 1s (window 0 puts them all on T itself).
// steady: rate·duration instants, one every 1/rate, from now+dueIn.
func planInstants(mode string, now time.Time, dueIn time.Duration, n int, window time.Duration,
	rate float64, duration time.Duration) ([]time.Time, error) {
	start := now.Add(dueIn)
	switch mode {
	case ModeBurst:
		if n <= 0 {
			return nil, fmt.Errorf("--events: must be positive in burst mode")
		}
		if window < 0 {
			return nil, fmt.Errorf("--burst-window: must not be negative")
		}
		t0 := start.Truncate(time.Second)
		if t0.Before(start) {
			t0 = t0.Add(time.Second)
		}
		out := make([]time.Time, n)
		for i := range out {
			out[i] = t0.Add(time.Duration(float64(window) * float64(i) / float64(n)).Truncate(time.Microsecond))
		}
		return out, nil
	case ModeSteady:
		if rate <= 0 {
			return nil, fmt.Errorf("--rate: must be positive in steady mode")
		}
		if duration <= 0 {
			return nil, fmt.Errorf("--duration: must be positive in steady mode")
		}
		count := int(rate * duration.Seconds())
		if count <= 0 {
			return nil, fmt.Errorf("--rate × --duration: gives no events")
		}
		t0 := start.Truncate(time.Millisecond)
		out := make([]time.Time, count)
		for i := range out {
			out[i] = t0.Add(time.Duration(float64(i) * float64(time.Second) / rate).Truncate(time.Microsecond))
		}
		return out, nil
	default:
		return nil, fmt.Errorf("--mode: must be %q or %q, got %q", ModeBurst, ModeSteady, mode)
	}
}
