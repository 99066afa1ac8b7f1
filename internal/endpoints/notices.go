package endpoints

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/notify"
)

// Notices turns circuit transitions into operator notices.
type Notices struct {
	Notifier *notify.Notifier
}

var _ Notifier = Notices{}

// CircuitChanged implements Notifier.
func (n Notices) CircuitChanged(ctx context.Context, ep *model.Endpoint, t Transition, h model.EndpointHealth) {
	notice := notify.Notice{At: h.StateChangedAt, EndpointID: ep.ID, Tags: ep.Tags, Fields: map[string]string{
		"endpoint_name": ep.Name, "state": string(h.State),
		"consecutive_failures": strconv.Itoa(h.ConsecutiveFailures)}}
	if h.LastError != "" {
		notice.Fields["last_error"] = h.LastError
	}
	label := fmt.Sprintf("Endpoint %s (%s)", ep.Name, ep.ID)
	switch t {
	case Opened:
		notice.Kind, notice.Title = notify.CircuitOpened, label+": circuit opened"
		notice.Text = fmt.Sprintf("Deliveries to %s failed (%d in a row; last error: %s). They wait, uncounted, "+
			"and one trial delivery goes after the cool-down.", ep.Name, h.ConsecutiveFailures, h.LastError)
		if h.CoolDownUntil != nil {
			notice.Fields["cool_down_until"] = h.CoolDownUntil.Format(time.RFC3339)
		}
	case Closed:
		notice.Kind, notice.Title = notify.CircuitClosed, label+": circuit closed"
		notice.Text = fmt.Sprintf("A trial delivery to %s succeeded; waiting deliveries resume.", ep.Name)
	case Disabled:
		notice.Kind, notice.Title = notify.EndpointDisabled, label+": disabled"
		notice.Text = fmt.Sprintf("The circuit of %s stayed open too long; the endpoint is disabled and its "+
			"occurrences fail with reason endpoint_disabled until POST /endpoints/%s/enable.", ep.Name, ep.ID)
		notice.Fields["disabled_reason"] = h.DisabledReason
	default:
		return
	}
	n.Notifier.Notify(ctx, notice)
}
