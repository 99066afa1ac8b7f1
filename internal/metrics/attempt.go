package metrics

import (
	"time"

	"github.com/qhronos/qhronos/internal/actions"
	"github.com/qhronos/qhronos/internal/model"
)

// Outcome labels of qhronos_deliveries_total.
const (
	outcomeSuccess          = "success"
	outcomeAwaitingAck      = "awaiting_ack"
	outcomeRetryableFailure = "retryable_failure"
	outcomeFailure          = "failure"
)

// ObserveAttempt is the scheduler's attempt observer: it counts the attempt
// by its outcome and observes its duration. Lateness is observed for an
// occurrence's first, scheduled attempt only, measured from its instant to
// the attempt's start: retries wait for their backoff and manual attempts
// (triggers, replays) fire when asked, so neither is firing lateness — the
// same attempts GET /stats leaves out.
func (m *Metrics) ObserveAttempt(ev *model.Event, occ *model.Occurrence, out actions.Outcome, started time.Time) {
	m.ObserveDelivery(ev.Action.Type, outcomeLabel(out), out.Duration)
	if occ.ChargedAttempts() != 1 || occ.Manual || occ.ManualRetry {
		return
	}
	m.ObserveLateness(ev.Action.Type, started.Sub(occ.ScheduledAt))
}

// outcomeLabel classifies an action's outcome for the deliveries counter.
func outcomeLabel(out actions.Outcome) string {
	switch {
	case out.AwaitingAck:
		return outcomeAwaitingAck
	case !out.OK() && out.Retryable:
		return outcomeRetryableFailure
	case !out.OK():
		return outcomeFailure
	}
	return outcomeSuccess
}
