// Package endpoints runs endpoints at delivery time: it resolves an
// endpoint into where and how to send (actions.Target), admits each attempt
// through the endpoint's state, rate limit and concurrency, and keeps the
// shared health and circuit breaker every instance sees.
package endpoints

import (
	"time"

	"github.com/qhronos/qhronos/internal/model"
)

// degradedRatio is the share of failed attempts in the window above which a
// closed circuit reports degraded even after a success.
const degradedRatio = 0.1

// Transition is a change of an endpoint's circuit worth telling operators.
type Transition string

// Transitions.
const (
	NoTransition Transition = ""
	Opened       Transition = "opened"
	Closed       Transition = "closed"
	Disabled     Transition = "disabled"
)

// Effective is the circuit an endpoint runs with: its own settings where it
// has them, the deployment's elsewhere.
func Effective(defaults model.Circuit, own *model.Circuit) model.Circuit {
	if own == nil {
		return defaults
	}
	c := defaults
	if own.Failures > 0 {
		c.Failures = own.Failures
	}
	if own.FailureRatio > 0 {
		c.FailureRatio = own.FailureRatio
	}
	if own.MinRequests > 0 {
		c.MinRequests = own.MinRequests
	}
	if own.Window > 0 {
		c.Window = own.Window
	}
	if own.CoolDown > 0 {
		c.CoolDown = own.CoolDown
	}
	if own.DisableAfter > 0 {
		c.DisableAfter = own.DisableAfter
	}
	return c
}

// Tally is what one instance saw of an endpoint's attempts since it last
// folded them into the shared health.
type Tally struct {
	Attempts int
	Failures int
	// TrailingFailures is the run of failures after the tally's last
	// success (all of them when none succeeded).
	TrailingFailures int
	Succeeded        bool
	LastError        string
	LastErrorAt      time.Time
	LastSuccessAt    time.Time
}

// Add counts one attempt, in the order they ended.
func (t *Tally) Add(ok bool, errText string, at time.Time) {
	t.Attempts++
	if ok {
		t.Succeeded = true
		t.TrailingFailures = 0
		if at.After(t.LastSuccessAt) {
			t.LastSuccessAt = at
		}
		return
	}
	t.Failures++
	t.TrailingFailures++
	if !at.Before(t.LastErrorAt) {
		t.LastError, t.LastErrorAt = errText, at
	}
}

// Record folds a tally into h at now: counters, the failure-ratio window
// and the state. A closed circuit opens after c.Failures consecutive
// failures, or when c.FailureRatio of at least c.MinRequests attempts in the
// window failed; an open or disabled one keeps its state (the trial or an
// operator changes it).
func Record(h model.EndpointHealth, t Tally, c model.Circuit, now time.Time) (model.EndpointHealth, Transition) {
	if t.Attempts == 0 {
		return h, NoTransition
	}
	if h.WindowStart == nil || now.Sub(*h.WindowStart) >= c.Window {
		start := now
		h.WindowStart, h.WindowTotal, h.WindowFailures = &start, 0, 0
	}
	h.WindowTotal += t.Attempts
	h.WindowFailures += t.Failures
	if t.Succeeded {
		h.ConsecutiveFailures = t.TrailingFailures
		at := t.LastSuccessAt
		h.LastSuccessAt = &at
	} else {
		h.ConsecutiveFailures += t.Failures
	}
	if t.Failures > 0 {
		at := t.LastErrorAt
		h.LastError, h.LastErrorAt = t.LastError, &at
	}
	if h.State == model.EndpointOpen || h.State == model.EndpointDisabled {
		return h, NoTransition
	}
	ratio := float64(h.WindowFailures) / float64(h.WindowTotal)
	if h.ConsecutiveFailures >= c.Failures || (h.WindowTotal >= c.MinRequests && ratio >= c.FailureRatio) {
		return open(h, c, now), Opened
	}
	state := model.EndpointHealthy
	if h.ConsecutiveFailures > 0 || ratio >= degradedRatio {
		state = model.EndpointDegraded
	}
	if state != h.State {
		h.State, h.StateChangedAt = state, now
	}
	return h, NoTransition
}

func open(h model.EndpointHealth, c model.Circuit, now time.Time) model.EndpointHealth {
	until := now.Add(c.CoolDown)
	opened := now
	h.State, h.StateChangedAt, h.OpenedAt, h.CoolDownUntil = model.EndpointOpen, now, &opened, &until
	h.TrialToken, h.TrialUntil = "", nil
	return h
}

// BeginTrial lets one delivery through an open circuit whose cool-down has
// passed and no other trial holds: it marks the trial (token, until) and
// reports whether this caller got it.
func BeginTrial(h model.EndpointHealth, token string, now, until time.Time) (model.EndpointHealth, bool) {
	if h.State != model.EndpointOpen || (h.CoolDownUntil != nil && now.Before(*h.CoolDownUntil)) ||
		(h.TrialUntil != nil && now.Before(*h.TrialUntil)) {
		return h, false
	}
	h.TrialToken, h.TrialUntil = token, &until
	return h, true
}

// EndTrial records the trial's outcome: success closes the circuit with
// fresh counters; failure opens a new cool-down. A trial that lost its mark
// (it outlived its until and another took over, or an operator acted)
// changes nothing.
func EndTrial(h model.EndpointHealth, token string, ok bool, errText string, c model.Circuit, now time.Time) (model.EndpointHealth, Transition) {
	if h.State != model.EndpointOpen || h.TrialToken != token {
		return h, NoTransition
	}
	h.TrialToken, h.TrialUntil = "", nil
	if !ok {
		until, at := now.Add(c.CoolDown), now
		h.CoolDownUntil, h.LastError, h.LastErrorAt = &until, errText, &at
		h.ConsecutiveFailures++
		return h, NoTransition
	}
	start, at := now, now
	h.State, h.StateChangedAt, h.OpenedAt, h.CoolDownUntil = model.EndpointHealthy, now, nil, nil
	h.ConsecutiveFailures, h.WindowStart, h.WindowTotal, h.WindowFailures = 0, &start, 0, 0
	h.LastSuccessAt = &at
	return h, Closed
}

// DisableOverdue disables an endpoint whose circuit has stayed open for
// c.DisableAfter; it reports whether it did.
func DisableOverdue(h model.EndpointHealth, c model.Circuit, now time.Time) (model.EndpointHealth, bool) {
	if h.State != model.EndpointOpen || h.OpenedAt == nil || now.Sub(*h.OpenedAt) < c.DisableAfter {
		return h, false
	}
	h.State, h.StateChangedAt, h.DisabledReason = model.EndpointDisabled, now, model.DisabledCircuitOpen
	h.TrialToken, h.TrialUntil, h.CoolDownUntil = "", nil, nil
	return h, true
}
