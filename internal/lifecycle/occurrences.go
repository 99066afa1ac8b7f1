package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/qhronos/qhronos/internal/auth"
	"github.com/qhronos/qhronos/internal/events"
	"github.com/qhronos/qhronos/internal/input"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
)

var errForbidden = &input.Error{Status: http.StatusForbidden, Message: "insufficient access"}

// Occurrence returns an occurrence whose event (live or deleted) the
// principal may read; anything else is not found.
func (s *Service) Occurrence(ctx context.Context, p auth.Principal, id string) (model.Occurrence, error) {
	occ, err := s.store.GetOccurrence(ctx, id)
	if err != nil {
		return occ, err
	}
	ev, err := s.store.GetEventAny(ctx, occ.EventID)
	if err != nil {
		return occ, err
	}
	if !p.CanRead(ev.Tags) {
		return model.Occurrence{}, errNotFound
	}
	return occ, nil
}

// Replay re-queues one finished occurrence for delivery now, with the same
// delivery id, recorded as manual and allowed past the retry limit. The
// event must be live and inside the principal's scope.
func (s *Service) Replay(ctx context.Context, p auth.Principal, id string) (model.Occurrence, error) {
	occ, err := s.Occurrence(ctx, p, id)
	if err != nil {
		return occ, err
	}
	ev, err := s.store.GetEvent(ctx, occ.EventID)
	if err != nil {
		return model.Occurrence{}, err // a deleted event's occurrences are not re-delivered
	}
	if !p.CanModify(ev.Tags) {
		return model.Occurrence{}, errForbidden
	}
	if err := replayableFanout(&ev, &occ); err != nil {
		return model.Occurrence{}, err
	}
	now := s.now()
	var got model.Occurrence
	err = s.store.WithTx(ctx, func(tx *repository.Store) error {
		if got, err = tx.RetryOccurrence(ctx, occ.ID, now); err != nil {
			return err
		}
		return s.record(ctx, tx, p, ev.ID, model.HistoryReplay, "", events.OccurrenceChanges(&occ, &got))
	})
	if errors.Is(err, model.ErrNotRetryable) {
		return model.Occurrence{}, &input.Error{Status: http.StatusConflict,
			Message: "occurrence is " + string(occ.Status) + "; only completed, failed, missed or cancelled ones can be retried"}
	}
	if err != nil {
		return model.Occurrence{}, err
	}
	s.wake(ctx, &now)
	return got, nil
}

// ReplayMany re-queues every finished occurrence matching f among the
// events the principal may modify, in bounded batches.
func (s *Service) ReplayMany(ctx context.Context, p auth.Principal, f model.RetryFilter) (model.RetryResult, error) {
	f.Scope, f.Unrestricted = p.ScopeFilter()
	now := s.now()
	res, err := s.store.RetryOccurrences(ctx, f, now)
	if err != nil {
		return res, err
	}
	if res.Requeued > 0 {
		s.wake(ctx, &now)
	}
	return res, nil
}

// Acknowledge completes an occurrence that awaits this client's
// acknowledgement. It needs the same right as the delivery: the token must
// be able to read the event, and the event must address the client name.
func (s *Service) Acknowledge(ctx context.Context, a events.Ack) error {
	occ, err := s.store.GetOccurrence(ctx, a.OccurrenceID)
	if err != nil {
		return events.ErrUnknownOccurrence
	}
	ev, err := s.store.GetEventAny(ctx, occ.EventID)
	if err != nil || (a.EventID != "" && a.EventID != ev.ID) || !a.CanRead(ev.Tags) {
		return events.ErrUnknownOccurrence
	}
	var params struct {
		ClientName string `json:"client_name"`
	}
	_ = json.Unmarshal(ev.Action.Params, &params)
	if ev.Action.Type != "websocket" || params.ClientName != a.ClientName {
		return events.ErrUnknownOccurrence
	}
	err = s.store.Acknowledge(ctx, occ.ID, s.now())
	if errors.Is(err, model.ErrNotFound) {
		return events.ErrNotAwaitingAck
	}
	return err
}
