package lifecycle

import (
	"context"
	"errors"
	"net/http"
	"slices"

	"github.com/qhronos/qhronos/internal/auth"
	"github.com/qhronos/qhronos/internal/events"
	"github.com/qhronos/qhronos/internal/input"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
)

// fanoutOccurrence reads an occurrence of an event that targets a topic and
// says whether the principal reads all of its deliveries (it reads the
// event) or only those of the subscriptions it reads (a customer's portal
// reads its own deliveries of an installation's event).
func (s *Service) fanoutOccurrence(ctx context.Context, p auth.Principal, id string) (
	occ model.Occurrence, ev model.Event, all bool, err error) {
	if occ, err = s.store.GetOccurrence(ctx, id); err != nil {
		return occ, ev, false, err
	}
	if ev, err = s.store.GetEventAny(ctx, occ.EventID); err != nil {
		return occ, ev, false, err
	}
	return occ, ev, p.CanRead(ev.Tags), nil
}

// Deliveries lists an occurrence's fan-out, one delivery per subscription
// in subscription id order after the given one, at most limit (the caller
// asks one more to know whether a page follows). An occurrence whose event
// runs an action has none. A principal that cannot read the event sees the
// deliveries of its own subscriptions only, and not found when it has none.
func (s *Service) Deliveries(ctx context.Context, p auth.Principal, id, after string, limit int) ([]model.Delivery, error) {
	occ, _, all, err := s.fanoutOccurrence(ctx, p, id)
	if err != nil {
		return nil, err
	}
	state, err := model.DecodeFanout(occ.Fanout)
	if err != nil || state == nil {
		if !all {
			return nil, errNotFound
		}
		return []model.Delivery{}, err
	}
	ids, err := s.store.DeliveredSubscriptions(ctx, occ.ID, after, limit)
	if err != nil {
		return nil, err
	}
	ids = append(ids, state.Filtered...)
	for sub := range state.Pending {
		ids = append(ids, sub)
	}
	for _, f := range state.Failed {
		ids = append(ids, f.Subscription)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	ids = slices.DeleteFunc(ids, func(sub string) bool { return sub <= after })
	ids = ids[:min(len(ids), limit)]
	subs, err := s.store.SubscriptionsByID(ctx, ids)
	if err != nil {
		return nil, err
	}
	if !all {
		// Deleted subscriptions and others' are left out; a page may come
		// out short, its cursor still moves past them.
		visible := ids[:0:0]
		for _, sub := range ids {
			if got, ok := subs[sub]; ok && p.CanRead(got.Tags) {
				visible = append(visible, sub)
			}
		}
		if len(visible) == 0 && after == "" {
			return nil, errNotFound
		}
		ids = visible
	}
	attempts, err := s.store.DeliveryAttempts(ctx, occ.ID, ids)
	if err != nil {
		return nil, err
	}
	out := make([]model.Delivery, 0, len(ids))
	for _, sub := range ids {
		d := model.Delivery{SubscriptionID: sub, Attempts: attempts[sub], Status: model.DeliveryDelivered}
		if got, ok := subs[sub]; ok {
			endpoint := got.EndpointID
			d.EndpointID = &endpoint
		} else if n := len(d.Attempts); n > 0 {
			d.EndpointID = d.Attempts[n-1].EndpointID
		}
		if d.Attempts == nil {
			d.Attempts = []model.Attempt{}
		}
		switch {
		case slices.Contains(state.Filtered, sub):
			d.Status = model.DeliveryFiltered
		case hasPending(state, sub):
			next := state.Pending[sub].NextAt
			d.Status, d.NextAttemptAt = model.DeliveryPending, &next
		default:
			if i := slices.IndexFunc(state.Failed, func(f model.FanoutFailure) bool { return f.Subscription == sub }); i >= 0 {
				d.Status, d.Error = model.DeliveryFailed, state.Failed[i].Error
			}
		}
		out = append(out, d)
	}
	return out, nil
}

// ReplayDelivery re-queues a finished fan-out occurrence for one
// subscription's delivery (failed or delivered), manual, with a fresh
// retry budget. The principal must modify the event, or the subscription
// (a customer replays its own failures of an installation's event).
func (s *Service) ReplayDelivery(ctx context.Context, p auth.Principal, id, subscriptionID string) (model.Occurrence, error) {
	occ, ev, _, err := s.fanoutOccurrence(ctx, p, id)
	if err != nil {
		return occ, err
	}
	sub, err := s.store.GetSubscription(ctx, subscriptionID)
	subReadable := err == nil && p.CanRead(sub.Tags)
	switch {
	case !p.CanRead(ev.Tags) && !subReadable:
		return model.Occurrence{}, errNotFound
	case !p.CanModify(ev.Tags) && !(subReadable && p.CanModify(sub.Tags)):
		return model.Occurrence{}, errForbidden
	}
	if ev.Topic() == "" {
		return model.Occurrence{}, input.BadRequest("subscription_id", "the occurrence's event runs an action, not a topic")
	}
	if _, err := s.store.GetEvent(ctx, ev.ID); err != nil {
		return model.Occurrence{}, err // a deleted event's occurrences are not re-delivered
	}
	state, err := model.DecodeFanout(occ.Fanout)
	if err != nil {
		return model.Occurrence{}, err
	}
	if !occ.Status.Terminal() || state == nil {
		return model.Occurrence{}, &input.Error{Status: http.StatusConflict,
			Message: "occurrence is " + string(occ.Status) + "; only a finished fan-out can be replayed"}
	}
	attempts, err := s.store.DeliveryAttempts(ctx, occ.ID, []string{subscriptionID})
	if err != nil {
		return model.Occurrence{}, err
	}
	delivered := slices.ContainsFunc(attempts[subscriptionID], func(a model.Attempt) bool {
		return a.Outcome == string(model.OccurrenceCompleted)
	})
	now := s.now()
	if !state.ReplayOne(subscriptionID, delivered, now) {
		return model.Occurrence{}, input.BadRequest("subscription_id",
			"the subscription has no delivery of this occurrence (filtered out, or added after it fired)")
	}
	var got model.Occurrence
	err = s.store.WithTx(ctx, func(tx *repository.Store) error {
		if got, err = tx.ReplayFanout(ctx, occ.ID, occ.Fanout, state.Encode(), now); err != nil {
			return err
		}
		return s.record(ctx, tx, p, ev.ID, model.HistoryReplay, "subscription "+subscriptionID,
			events.OccurrenceChanges(&occ, &got))
	})
	if errors.Is(err, model.ErrNotRetryable) {
		return model.Occurrence{}, &input.Error{Status: http.StatusConflict,
			Message: "the occurrence changed meanwhile; read it and try again"}
	}
	if err != nil {
		return model.Occurrence{}, err
	}
	s.wake(ctx, &now)
	return got, nil
}

// replayableFanout refuses the replay of a fan-out occurrence with no
// failed delivery: a replay of the whole occurrence re-sends its failures
// only (one subscription's is ReplayDelivery).
func replayableFanout(ev *model.Event, occ *model.Occurrence) error {
	if ev.Topic() == "" {
		return nil
	}
	state, err := model.DecodeFanout(occ.Fanout)
	if err != nil {
		return err
	}
	if state != nil && len(state.Failed) == 0 && occ.Status.Terminal() {
		return &input.Error{Status: http.StatusConflict,
			Message: "no delivery of this occurrence failed: replay one subscription's with subscription_id"}
	}
	return nil
}

// SubscriptionDeliveries lists the delivery attempts made for a
// subscription the principal reads, newest first.
func (s *Service) SubscriptionDeliveries(ctx context.Context, p auth.Principal, id string, before *model.PageCursor,
	limit int) ([]model.Attempt, error) {
	if _, err := s.GetSubscription(ctx, p, id); err != nil {
		return nil, err
	}
	return s.store.SubscriptionAttempts(ctx, id, before, limit)
}

func hasPending(f *model.Fanout, sub string) bool {
	_, ok := f.Pending[sub]
	return ok
}
