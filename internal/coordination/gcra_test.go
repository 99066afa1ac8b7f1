package coordination

import (
	"math"
	"testing"
	"time"
)

func TestGCRAStep(t *testing.T) {
	t.Parallel()
	const sec = 1e6 // microseconds
	now := 1_700_000_000 * sec
	tests := []struct {
		name          string
		limit         Limit
		tat           float64 // stored state before the request
		wantAllowed   bool
		wantRemaining int
		wantRetry     time.Duration
		wantReset     time.Duration
		wantTAT       float64
	}{
		{"fresh bucket", Limit{Rate: 10, Burst: 5}, 0, true, 4, 0, 100 * time.Millisecond, now + 0.1*sec},
		{"state in the past counts as full", Limit{Rate: 10, Burst: 5}, now - 60*sec, true, 4, 0, 100 * time.Millisecond, now + 0.1*sec},
		{"last token of the burst", Limit{Rate: 10, Burst: 5}, now + 0.4*sec, true, 0, 0, 500 * time.Millisecond, now + 0.5*sec},
		{"empty bucket", Limit{Rate: 10, Burst: 5}, now + 0.5*sec, false, 0, 100 * time.Millisecond, 500 * time.Millisecond, now + 0.5*sec},
		{"empty, next token in 150ms", Limit{Rate: 10, Burst: 5}, now + 0.55*sec, false, 0, 150 * time.Millisecond, 550 * time.Millisecond, now + 0.55*sec},
		{"burst of one", Limit{Rate: 1, Burst: 1}, 0, true, 0, 0, time.Second, now + sec},
		{"slow rate", Limit{Rate: 0.001, Burst: 100}, now + 100_000*sec, false, 0, 1000 * time.Second, 100_000 * time.Second, now + 100_000*sec},
		{"fractional interval rounds retry up", Limit{Rate: 3, Burst: 1}, now + sec/3, false, 0, 333334 * time.Microsecond, 333334 * time.Microsecond, now + sec/3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tat, got := gcraStep(tt.tat, now, tt.limit)
			if got.Allowed != tt.wantAllowed || got.Remaining != tt.wantRemaining || got.Limit != tt.limit.Burst {
				t.Errorf("got allowed=%v remaining=%d limit=%d, want %v %d %d",
					got.Allowed, got.Remaining, got.Limit, tt.wantAllowed, tt.wantRemaining, tt.limit.Burst)
			}
			if got.RetryAfter != tt.wantRetry {
				t.Errorf("RetryAfter got %s, want %s", got.RetryAfter, tt.wantRetry)
			}
			if got.ResetAfter != tt.wantReset {
				t.Errorf("ResetAfter got %s, want %s", got.ResetAfter, tt.wantReset)
			}
			if math.Abs(tat-tt.wantTAT) > 1e-3 {
				t.Errorf("stored TAT got %f, want %f", tat, tt.wantTAT)
			}
		})
	}
}

func TestMicrosToDurationSaturates(t *testing.T) {
	t.Parallel()
	tests := []struct {
		us   float64
		want time.Duration
	}{
		{-5, 0},
		{0, 0},
		{0.2, time.Microsecond},
		{1.5, 2 * time.Microsecond},
		{1e300, time.Duration(math.MaxInt64)},
	}
	for _, tt := range tests {
		if got := microsToDuration(tt.us); got != tt.want {
			t.Errorf("microsToDuration(%v) got %s, want %s", tt.us, got, tt.want)
		}
	}
}

func TestValidateLimit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		limit Limit
		ok    bool
	}{
		{Limit{Rate: 10, Burst: 100}, true},
		{Limit{Rate: 1e-9, Burst: 1}, true},
		{Limit{Rate: 0, Burst: 1}, false},
		{Limit{Rate: math.NaN(), Burst: 1}, false},
		{Limit{Rate: math.Inf(1), Burst: 1}, false},
		{Limit{Rate: 1, Burst: -1}, false},
	}
	for _, tt := range tests {
		if got := validateLimit(tt.limit) == nil; got != tt.ok {
			t.Errorf("validateLimit(%+v) ok got %v, want %v", tt.limit, got, tt.ok)
		}
	}
}
