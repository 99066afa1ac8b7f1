package scheduler

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/actions"
	"github.com/qhronos/qhronos/internal/config"
	"github.com/qhronos/qhronos/internal/model"
)

func TestPolicyForOverlaysEventRetryOnDefaults(t *testing.T) {
	t.Parallel()
	defaults := ConfigFrom(config.Default(), "test").Retry // the product defaults
	tests := []struct {
		name string
		raw  string
		want RetryPolicy
	}{
		{"none", "", RetryPolicy{MaxAttempts: 5, InitialBackoff: 30 * time.Second, MaxBackoff: 15 * time.Minute, RetryAfterCap: time.Hour}},
		{"null", "null", RetryPolicy{MaxAttempts: 5, InitialBackoff: 30 * time.Second, MaxBackoff: 15 * time.Minute, RetryAfterCap: time.Hour}},
		{"all", `{"max_attempts":3,"initial_backoff":"2s","max_backoff":"1m","retry_4xx":true}`,
			RetryPolicy{MaxAttempts: 3, InitialBackoff: 2 * time.Second, MaxBackoff: time.Minute, Retry4xx: true, RetryAfterCap: time.Hour}},
		{"partial", `{"max_attempts":1}`,
			RetryPolicy{MaxAttempts: 1, InitialBackoff: 30 * time.Second, MaxBackoff: 15 * time.Minute, RetryAfterCap: time.Hour}},
		{"initial above default max", `{"initial_backoff":"1h"}`,
			RetryPolicy{MaxAttempts: 5, InitialBackoff: time.Hour, MaxBackoff: time.Hour, RetryAfterCap: time.Hour}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var r *model.Retry
			if tt.raw != "" && tt.raw != "null" {
				r = new(model.Retry)
				require.NoError(t, json.Unmarshal([]byte(tt.raw), r))
			}
			got, err := PolicyFor(r, defaults)
			require.NoError(t, err)
			if got != tt.want {
				t.Errorf("PolicyFor(%s) = %+v, want %+v", tt.raw, got, tt.want)
			}
		})
	}
}

func TestBackoffIsFullJitterExponentialCapped(t *testing.T) {
	t.Parallel()
	p := RetryPolicy{MaxAttempts: 10, InitialBackoff: 30 * time.Second, MaxBackoff: 15 * time.Minute}
	top := func() float64 { return 0.999999 }
	tests := []struct {
		attempt int
		want    time.Duration // ceiling of the jitter range
	}{{1, 30 * time.Second}, {2, time.Minute}, {3, 2 * time.Minute}, {5, 8 * time.Minute}, {6, 15 * time.Minute}, {60, 15 * time.Minute}}
	for _, tt := range tests {
		got := p.Backoff(tt.attempt, top)
		if got > tt.want || got < tt.want*99/100 {
			t.Errorf("Backoff(%d) at the top of the jitter = %s, want just under %s", tt.attempt, got, tt.want)
		}
		if low := p.Backoff(tt.attempt, func() float64 { return 0 }); low != 0 {
			t.Errorf("Backoff(%d) at the bottom of the jitter = %s, want 0 (full jitter)", tt.attempt, low)
		}
	}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	now := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	half := func() float64 { return 0.5 }
	p := RetryPolicy{MaxAttempts: 3, InitialBackoff: 10 * time.Second, MaxBackoff: time.Minute, RetryAfterCap: time.Hour}
	p4xx := p
	p4xx.Retry4xx = true
	boom := errors.New("boom")
	at := func(d time.Duration) *time.Time { t := now.Add(d); return &t }
	tests := []struct {
		name    string
		policy  RetryPolicy
		out     actions.Outcome
		attempt int
		want    Verdict
	}{
		{"2xx completes", p, actions.Outcome{StatusCode: 200}, 1, Verdict{Status: "completed"}},
		{"ack awaited", p, actions.Outcome{AwaitingAck: true}, 1, Verdict{Status: "awaiting_ack", AckDeadline: at(30 * time.Second)}},
		{"5xx retries with backoff", p, actions.Outcome{StatusCode: 503, Err: boom, Retryable: true}, 1,
			Verdict{Status: "retrying", NextAttemptAt: at(5 * time.Second), Error: "boom"}},
		{"second retry doubles", p, actions.Outcome{StatusCode: 503, Err: boom, Retryable: true}, 2,
			Verdict{Status: "retrying", NextAttemptAt: at(10 * time.Second), Error: "boom"}},
		{"retryable exhausted fails", p, actions.Outcome{StatusCode: 503, Err: boom, Retryable: true}, 3,
			Verdict{Status: "failed", Error: "boom (gave up after 3 attempts)"}},
		{"Retry-After honoured", p, actions.Outcome{StatusCode: 429, Err: boom, Retryable: true, RetryAfter: 20 * time.Minute}, 1,
			Verdict{Status: "retrying", NextAttemptAt: at(20 * time.Minute), Error: "boom"}},
		{"Retry-After capped", p, actions.Outcome{StatusCode: 429, Err: boom, Retryable: true, RetryAfter: 48 * time.Hour}, 1,
			Verdict{Status: "retrying", NextAttemptAt: at(time.Hour), Error: "boom"}},
		{"4xx fails", p, actions.Outcome{StatusCode: 404, Err: boom}, 1, Verdict{Status: "failed", Error: "boom"}},
		{"4xx retried when asked", p4xx, actions.Outcome{StatusCode: 404, Err: boom}, 1,
			Verdict{Status: "retrying", NextAttemptAt: at(5 * time.Second), Error: "boom"}},
		{"410 fails and pauses", p4xx, actions.Outcome{StatusCode: 410, Err: boom, Gone: true}, 1,
			Verdict{Status: "failed", PauseEvent: true, Error: "boom"}},
		{"blocked fails even with retry_4xx", p4xx, actions.Outcome{Err: boom}, 1, Verdict{Status: "failed", Error: "boom"}},
		{"network error retries", p, actions.Outcome{Err: boom, Retryable: true}, 1,
			Verdict{Status: "retrying", NextAttemptAt: at(5 * time.Second), Error: "boom"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := tt.policy.Classify(tt.out, tt.attempt, now, 30*time.Second, half)
			require.Equal(t, tt.want, got, "Classify(%+v, attempt %d)", tt.out, tt.attempt)
		})
	}
}
