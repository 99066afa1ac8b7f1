package scheduler

import (
	"crypto/rand"
	"net/url"
	"time"

	"github.com/qhronos/qhronos/internal/actions"
	"github.com/qhronos/qhronos/internal/auth"
	"github.com/qhronos/qhronos/internal/model"
)

// run is what a delivery of a callback event carries about the run it
// starts (nil for an event whose 2xx completes it). The deadline it
// announces is counted from the send; the recorded one from the 2xx, a
// little later.
func (d *Dispatcher) run(ev *model.Event, occurrenceID string, now time.Time) *actions.Run {
	if !ev.Callback() {
		return nil
	}
	mint := d.cfg.RunToken
	if mint == nil {
		mint = processRunToken
	}
	base := d.cfg.APIBaseURL + "/occurrences/" + url.PathEscape(occurrenceID)
	return &actions.Run{Token: mint(occurrenceID), CompleteURL: base + "/complete", HeartbeatURL: base + "/heartbeat",
		Deadline: now.Add(ev.RunDeadline()).UTC()}
}

// processRunToken mints run tokens under a key of this process only, for a
// dispatcher built without the server's keys (tests of the scheduler).
var processRunToken = func() func(string) string {
	key := make([]byte, auth.MinKeyBytes)
	_, _ = rand.Read(key)
	return auth.NewKeyring(key).RunToken
}()
