package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/qhronos/qhronos/internal/auth"
	"github.com/qhronos/qhronos/internal/events"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
)

// schedulerPrincipal is the principal of the server's own changes (a
// calendar re-plan, the end of a pause with until), as an event's history
// shows them.
var schedulerPrincipal = auth.Principal{Subject: "scheduler", Channel: "scheduler"}

// record appends one entry to an event's history inside tx, the
// transaction of the change it records: who (p's subject and channel), what
// (action, reason, changes as events.Diff and friends build them) and when
// (now).
func (s *Service) record(ctx context.Context, tx *repository.Store, p auth.Principal, eventID, action, reason string,
	changes json.RawMessage) error {
	return tx.AppendHistory(ctx, s.entry(p, eventID, action, reason, changes))
}

// entry is one history entry of a change made now.
func (s *Service) entry(p auth.Principal, eventID, action, reason string, changes json.RawMessage) model.HistoryEntry {
	return model.HistoryEntry{EventID: eventID, At: s.now().UTC(), Subject: p.Subject, Channel: p.Via(),
		Action: action, Reason: reason, Changes: changes}
}

// History returns a page of an event's history, oldest first, when the
// principal may read the event; anything else is not found. withDeleted
// also reaches a soft-deleted event and one the archiver moved to the
// archive (its history went with it).
func (s *Service) History(ctx context.Context, p auth.Principal, id string, withDeleted bool,
	f model.HistoryFilter) ([]model.HistoryEntry, error) {
	ev, err := s.Get(ctx, p, id, withDeleted)
	if errors.Is(err, model.ErrNotFound) && withDeleted {
		ev, err = s.store.GetArchivedEvent(ctx, id)
		if err == nil && !p.CanRead(ev.Tags) {
			err = errNotFound
		}
	}
	if err != nil {
		return nil, err
	}
	return s.store.ListHistory(ctx, ev.ID, f)
}

// statusChange is the changes of a status move alone (a delete).
func statusChange(from, to model.EventStatus) json.RawMessage {
	return events.Changes(map[string]events.Change{"status": {From: from, To: to}})
}

// exceptionAt is the event's exception at at, or nil when it has none (the
// one an added exception replaces).
func exceptionAt(ctx context.Context, tx *repository.Store, eventID string, at time.Time) (*model.Exception, error) {
	exs, err := tx.Exceptions(ctx, eventID, at)
	if err != nil || len(exs) == 0 || !exs[0].At.Equal(at) {
		return nil, err
	}
	return &exs[0], nil
}
