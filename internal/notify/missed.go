package notify

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/qhronos/qhronos/internal/model"
)

// MissedStore is where the scanner finds instants that did not fire and
// keeps, per event, the outage its operators were told of.
type MissedStore interface {
	OverdueOccurrencesAfter(ctx context.Context, after model.ScanCursor, upto time.Time, limit int) ([]model.UnfiredOccurrence, error)
	MissedOccurrencesAfter(ctx context.Context, after model.ScanCursor, upto time.Time, limit int) ([]model.UnfiredOccurrence, error)
	MissedAlertOf(ctx context.Context, eventID string) (model.MissedAlert, *time.Time, bool, error)
	OpenMissedAlert(ctx context.Context, a model.MissedAlert) error
	ExtendMissedAlert(ctx context.Context, eventID string, first, last time.Time, instants int64) error
	RecoverMissedAlerts(ctx context.Context) (int, error)
}

// reasonOverdue is the `missed` notice's reason for instants still pending
// MissedAfter past their time (recorded ones carry their ledger reason).
const reasonOverdue = "overdue"

// scanMissed reports instants that did not fire, with a dead man's switch's
// semantics: an event's operators hear once per outage — its first instant
// that did not fire — and again only for an instant after the event fired
// once more. Two sources feed it: rows recorded missed (the catch-up
// window or policy, instants no instance was up to plan), read by when
// they were recorded, and rows still pending MissedAfter past their
// instant (a stalled key, a paused endpoint, every instance stuck), read
// by their instant, each once.
func (s *Scanner) scanMissed(ctx context.Context, upto, now time.Time) (int, error) {
	if s.notifier.Wants(Missed) {
		if _, err := s.store.RecoverMissedAlerts(ctx); err != nil {
			return 0, err
		}
	}
	recorded, err := scan(ctx, s, missedCursor, []Kind{Missed}, upto, now, s.store.MissedOccurrencesAfter,
		func(o model.UnfiredOccurrence) model.ScanCursor {
			return model.ScanCursor{At: o.UpdatedAt, LastID: o.ID}
		},
		s.reportUnfired(now))
	if err != nil {
		return recorded, err
	}
	overdue, err := scan(ctx, s, overdueCursor, []Kind{Missed}, now.Add(-s.cfg.MissedAfter), now,
		s.store.OverdueOccurrencesAfter,
		func(o model.UnfiredOccurrence) model.ScanCursor {
			return model.ScanCursor{At: o.ScheduledAt, LastID: o.ID}
		},
		s.reportUnfired(now))
	return recorded + overdue, err
}

// unfiredGroup is what one batch holds of one event's instants that did
// not fire.
type unfiredGroup struct {
	first    model.UnfiredOccurrence // the earliest instant
	last     time.Time
	instants int64
}

// reportUnfired groups a batch by event and tells each event's outage once.
func (s *Scanner) reportUnfired(now time.Time) func(context.Context, []model.UnfiredOccurrence) (int, error) {
	return func(ctx context.Context, rows []model.UnfiredOccurrence) (int, error) {
		var order []string
		groups := map[string]*unfiredGroup{}
		for _, o := range rows {
			g := groups[o.EventID]
			if g == nil {
				g = &unfiredGroup{first: o, last: o.ScheduledAt}
				groups[o.EventID] = g
				order = append(order, o.EventID)
			}
			g.instants++
			if o.ScheduledAt.Before(g.first.ScheduledAt) {
				g.first = o
			}
			if o.ScheduledAt.After(g.last) {
				g.last = o.ScheduledAt
			}
		}
		told := 0
		for _, id := range order {
			g := groups[id]
			_, recovered, ok, err := s.store.MissedAlertOf(ctx, id)
			if err != nil {
				return told, err
			}
			if ok && (recovered == nil || !g.first.ScheduledAt.After(*recovered)) {
				// The outage its operators already know of.
				if err := s.store.ExtendMissedAlert(ctx, id, g.first.ScheduledAt, g.last, g.instants); err != nil {
					return told, err
				}
				continue
			}
			if err := s.store.OpenMissedAlert(ctx, model.MissedAlert{EventID: id, FirstAt: g.first.ScheduledAt,
				LastAt: g.last, Instants: g.instants, NotifiedAt: now}); err != nil {
				return told, err
			}
			s.notifier.Notify(ctx, missedNotice(g, s.cfg.MissedAfter))
			told++
		}
		return told, nil
	}
}

func missedNotice(g *unfiredGroup, after time.Duration) Notice {
	o := g.first
	reason, detail := reasonOverdue, ""
	if o.Error != nil {
		detail = *o.Error
	}
	if o.Status == string(model.OccurrenceMissed) && o.Reason != nil {
		reason = *o.Reason
	}
	first := o.ScheduledAt.Format(time.RFC3339)
	fields := map[string]string{"event_name": o.EventName, "reason": reason, "instants": strconv.FormatInt(g.instants, 10),
		"first_scheduled_at": first, "last_scheduled_at": g.last.Format(time.RFC3339)}
	if detail != "" {
		fields["error"] = detail
	}
	what, its := fmt.Sprintf("The instant %s", first), "its time"
	if g.instants > 1 {
		what = fmt.Sprintf("%d instants from %s to %s", g.instants, first, fields["last_scheduled_at"])
		its = "their time"
	}
	n := Notice{Kind: Missed, At: o.UpdatedAt, EventID: o.EventID, OccurrenceID: o.ID, Tags: o.Tags, Fields: fields,
		Title: fmt.Sprintf("Event %s: did not fire", o.EventName)}
	if reason == reasonOverdue {
		n.Text = fmt.Sprintf("%s of event %s (%s) had not fired %s after %s and still wait (%s).",
			what, o.EventName, o.EventID, after, its, orNone(detail))
	} else {
		n.Text = fmt.Sprintf("%s of event %s (%s) will not fire: %s.", what, o.EventName, o.EventID, orNone(detail))
	}
	n.Text += " You will hear of this event again only if an instant fails to fire after it has fired again."
	if o.EndpointID != nil {
		n.EndpointID = *o.EndpointID
	}
	return n
}
