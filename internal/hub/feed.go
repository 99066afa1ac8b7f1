package hub

import (
	"time"

	"github.com/qhronos/qhronos/internal/actions"
	"github.com/qhronos/qhronos/internal/model"
)

// ObserveAttempt is the scheduler's attempt observer for tag-listeners: one
// frame per occurrence after its first attempt, whatever the action, untagged
// events' for the listeners of all events (best effort, at most once). It
// never waits on the bus, and builds no frame while no instance has a
// tag-listener.
func (h *Hub) ObserveAttempt(ev *model.Event, occ *model.Occurrence, _ actions.Outcome, _ time.Time) {
	if occ.AttemptCount != 1 || !h.Listening() {
		return
	}
	frame := actions.EventFrame(actions.Request{EventID: ev.ID, OccurrenceID: occ.ID, Attempt: 1,
		ScheduledAt: occ.ScheduledAt, Name: ev.Name, Description: ev.Description, Tags: ev.Tags,
		Metadata: []byte(ev.Metadata)})
	h.Broadcast(ev.Tags, frame)
}
