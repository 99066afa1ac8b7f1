package endpoints

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
)

var (
	t0      = time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	circuit = model.Circuit{Failures: 3, FailureRatio: 0.5, MinRequests: 10, Window: time.Minute,
		CoolDown: 30 * time.Second, DisableAfter: time.Hour}
)

func tally(results ...bool) Tally {
	var t Tally
	for i, ok := range results {
		t.Add(ok, "receiver answered 503", t0.Add(time.Duration(i)*time.Millisecond))
	}
	return t
}

func healthy() model.EndpointHealth {
	return model.EndpointHealth{State: model.EndpointHealthy, StateChangedAt: t0.Add(-time.Hour)}
}

func TestRecordOpensAfterARunOfFailures(t *testing.T) {
	h, tr := Record(healthy(), tally(false, false), circuit, t0)
	require.Equal(t, NoTransition, tr)
	require.Equal(t, model.EndpointDegraded, h.State, "a failure degrades")
	require.Equal(t, 2, h.ConsecutiveFailures)

	h, tr = Record(h, tally(false), circuit, t0.Add(time.Second))
	require.Equal(t, Opened, tr, "the third consecutive failure opens the circuit")
	require.Equal(t, model.EndpointOpen, h.State)
	require.Equal(t, t0.Add(31*time.Second), *h.CoolDownUntil)
	require.Equal(t, t0.Add(time.Second), *h.OpenedAt)
	require.Equal(t, "receiver answered 503", h.LastError)

	// Attempts in flight when it opened are counted but leave it open.
	h, tr = Record(h, tally(true), circuit, t0.Add(2*time.Second))
	require.Equal(t, NoTransition, tr)
	require.Equal(t, model.EndpointOpen, h.State)
}

func TestRecordSuccessResetsTheRun(t *testing.T) {
	h, _ := Record(healthy(), tally(false, false, true), circuit, t0)
	require.Equal(t, 0, h.ConsecutiveFailures)
	h, tr := Record(h, tally(false, false), circuit, t0.Add(time.Second))
	require.Equal(t, NoTransition, tr, "two failures after a success are a run of two")
	require.Equal(t, 2, h.ConsecutiveFailures)
	h, _ = Record(h, tally(false, true, false), circuit, t0.Add(2*time.Second))
	require.Equal(t, 1, h.ConsecutiveFailures, "the run is what follows the tally's last success")
	require.Equal(t, model.EndpointDegraded, h.State)
}

func TestRecordOpensOnTheFailureRatio(t *testing.T) {
	// Alternating results never make a run of three, but half fail.
	var results []bool
	for i := range 8 {
		results = append(results, i%2 == 0)
	}
	h, tr := Record(healthy(), tally(results...), circuit, t0)
	require.Equal(t, NoTransition, tr, "eight attempts are below min_requests")
	h, tr = Record(h, tally(true, false), circuit, t0.Add(10*time.Second))
	require.Equal(t, Opened, tr, "five of ten failed")
	require.Equal(t, 10, h.WindowTotal)

	// A new window starts the count again.
	h2, tr := Record(healthy(), tally(results...), circuit, t0)
	require.Equal(t, NoTransition, tr)
	h2, tr = Record(h2, tally(true, false), circuit, t0.Add(time.Minute))
	require.Equal(t, NoTransition, tr, "the window of the first eight has ended")
	require.Equal(t, 2, h2.WindowTotal)
}

func TestRecordHealsToHealthy(t *testing.T) {
	h, _ := Record(healthy(), tally(false), circuit, t0)
	require.Equal(t, model.EndpointDegraded, h.State)
	h, _ = Record(h, tally(true, true, true, true, true, true, true, true, true, true), circuit, t0.Add(time.Minute))
	require.Equal(t, model.EndpointHealthy, h.State, "a fresh window of successes")
	require.Equal(t, t0.Add(time.Minute), h.StateChangedAt)
}

func TestTrialClosesOrCoolsDownAgain(t *testing.T) {
	h, _ := Record(healthy(), tally(false, false, false), circuit, t0)
	_, ok := BeginTrial(h, "a", t0.Add(10*time.Second), t0.Add(time.Minute))
	require.False(t, ok, "no trial during the cool-down")

	at := t0.Add(31 * time.Second)
	h, ok = BeginTrial(h, "a", at, at.Add(time.Minute))
	require.True(t, ok)
	_, ok = BeginTrial(h, "b", at, at.Add(time.Minute))
	require.False(t, ok, "one trial at a time")

	failed, tr := EndTrial(h, "a", false, "receiver answered 500", circuit, at)
	require.Equal(t, NoTransition, tr)
	require.Equal(t, model.EndpointOpen, failed.State)
	require.Equal(t, at.Add(30*time.Second), *failed.CoolDownUntil, "a failed trial cools down again")
	require.Empty(t, failed.TrialToken)

	stale, tr := EndTrial(h, "b", true, "", circuit, at)
	require.Equal(t, NoTransition, tr, "a trial that lost its mark changes nothing")
	require.Equal(t, h, stale)

	closed, tr := EndTrial(h, "a", true, "", circuit, at)
	require.Equal(t, Closed, tr)
	require.Equal(t, model.EndpointHealthy, closed.State)
	require.Zero(t, closed.ConsecutiveFailures)
	require.Nil(t, closed.OpenedAt)
	require.Nil(t, closed.CoolDownUntil)
}

func TestTrialAfterAStaleMarkExpires(t *testing.T) {
	h, _ := Record(healthy(), tally(false, false, false), circuit, t0)
	at := t0.Add(31 * time.Second)
	h, _ = BeginTrial(h, "crashed", at, at.Add(time.Minute))
	_, ok := BeginTrial(h, "next", at.Add(59*time.Second), at.Add(2*time.Minute))
	require.False(t, ok)
	h, ok = BeginTrial(h, "next", at.Add(time.Minute), at.Add(2*time.Minute))
	require.True(t, ok, "a crashed trial's mark lapses")
	require.Equal(t, "next", h.TrialToken)
}

func TestDisableOverdue(t *testing.T) {
	h, _ := Record(healthy(), tally(false, false, false), circuit, t0)
	_, ok := DisableOverdue(h, circuit, t0.Add(59*time.Minute))
	require.False(t, ok)
	d, ok := DisableOverdue(h, circuit, t0.Add(time.Hour))
	require.True(t, ok)
	require.Equal(t, model.EndpointDisabled, d.State)
	require.Equal(t, model.DisabledCircuitOpen, d.DisabledReason)
	_, ok = DisableOverdue(healthy(), circuit, t0.Add(time.Hour))
	require.False(t, ok, "only an open circuit is disabled")
}

func TestEffectiveOverridesFieldByField(t *testing.T) {
	c := Effective(circuit, &model.Circuit{Failures: 10, CoolDown: time.Minute})
	require.Equal(t, 10, c.Failures)
	require.Equal(t, time.Minute, c.CoolDown)
	require.Equal(t, circuit.FailureRatio, c.FailureRatio)
	require.Equal(t, circuit.DisableAfter, c.DisableAfter)
	require.Equal(t, circuit, Effective(circuit, nil))
}
