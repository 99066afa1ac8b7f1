package scheduler

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"time"

	"github.com/qhronos/qhronos/internal/actions"
	"github.com/qhronos/qhronos/internal/model"
)

// RetryDefaults are the server-wide retry settings an event's own `retry`
// object overrides.
type RetryDefaults struct {
	MaxAttempts    int
	InitialBackoff time.Duration
	MaxBackoff     time.Duration
	// RetryAfterCap bounds how long a receiver's Retry-After may postpone
	// the next attempt.
	RetryAfterCap time.Duration
}

// RetryPolicy is the effective retry policy of one event.
type RetryPolicy struct {
	MaxAttempts    int
	InitialBackoff time.Duration
	MaxBackoff     time.Duration
	Retry4xx       bool
	RetryAfterCap  time.Duration
}

// PolicyFor overlays an event's stored `retry` object (nil for none) on the
// defaults.
func PolicyFor(r *model.Retry, defaults RetryDefaults) (RetryPolicy, error) {
	d := defaults
	p := RetryPolicy{MaxAttempts: d.MaxAttempts, InitialBackoff: d.InitialBackoff, MaxBackoff: d.MaxBackoff,
		RetryAfterCap: d.RetryAfterCap}
	if r == nil {
		return p, nil
	}
	if r.MaxAttempts != nil && *r.MaxAttempts > 0 {
		p.MaxAttempts = *r.MaxAttempts
	}
	if r.Retry4xx != nil {
		p.Retry4xx = *r.Retry4xx
	}
	for _, f := range []struct {
		text string
		into *time.Duration
	}{{r.InitialBackoff, &p.InitialBackoff}, {r.MaxBackoff, &p.MaxBackoff}} {
		if f.text == "" {
			continue
		}
		v, err := time.ParseDuration(f.text)
		if err != nil || v <= 0 {
			return p, fmt.Errorf("decode retry policy: bad duration %q", f.text)
		}
		*f.into = v
	}
	if p.MaxBackoff < p.InitialBackoff {
		p.MaxBackoff = p.InitialBackoff
	}
	return p, nil
}

// Backoff is the full-jitter exponential delay before the attempt after
// `attempt` (1-based): uniform in [0, min(max, initial·2^(attempt−1))).
// rnd returns a float in [0, 1).
func (p RetryPolicy) Backoff(attempt int, rnd func() float64) time.Duration {
	if attempt < 1 {
		attempt = 1
	}
	ceiling := float64(p.InitialBackoff) * math.Pow(2, float64(attempt-1))
	if ceiling > float64(p.MaxBackoff) || math.IsInf(ceiling, 0) {
		ceiling = float64(p.MaxBackoff)
	}
	return time.Duration(rnd() * ceiling)
}

// Verdict is what the dispatcher records after one attempt.
type Verdict struct {
	Status        model.OccurrenceStatus
	NextAttemptAt *time.Time // retrying
	AckDeadline   *time.Time // awaiting_ack, running
	// PauseEvent is set on 410 Gone: the receiver asked us to stop.
	PauseEvent bool
	// Error is the message recorded with the occurrence ("" on success).
	Error string
}

// ErrAttemptsExhausted marks an occurrence claimed after its last attempt
// (for example after rescues of a crashed worker).
var ErrAttemptsExhausted = errors.New("attempts exhausted")

// Classify turns an attempt's outcome into the occurrence's next state.
// attempt is the 1-based number of the attempt just made; ackTimeout bounds
// how long an awaiting_ack delivery waits before it is retried.
func (p RetryPolicy) Classify(o actions.Outcome, attempt int, now time.Time, ackTimeout time.Duration, rnd func() float64) Verdict {
	if o.OK() {
		if o.AwaitingAck {
			deadline := now.Add(ackTimeout)
			return Verdict{Status: model.OccurrenceAwaitingAck, AckDeadline: &deadline}
		}
		return Verdict{Status: model.OccurrenceCompleted}
	}
	msg := o.Err.Error()
	if o.Gone || o.StatusCode == http.StatusGone {
		return Verdict{Status: model.OccurrenceFailed, PauseEvent: true, Error: msg}
	}
	retryable := o.Retryable ||
		(p.Retry4xx && o.StatusCode >= 400 && o.StatusCode < 500)
	if !retryable {
		return Verdict{Status: model.OccurrenceFailed, Error: msg}
	}
	if attempt >= p.MaxAttempts {
		return Verdict{Status: model.OccurrenceFailed,
			Error: fmt.Sprintf("%s (gave up after %d attempts)", msg, attempt)}
	}
	delay := p.Backoff(attempt, rnd)
	if o.RetryAfter > 0 {
		delay = max(delay, min(o.RetryAfter, p.RetryAfterCap))
	}
	next := model.RoundUp(now.Add(delay))
	return Verdict{Status: model.OccurrenceRetrying, NextAttemptAt: &next, Error: msg}
}
