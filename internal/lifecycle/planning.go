package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/qhronos/qhronos/internal/auth"
	"github.com/qhronos/qhronos/internal/input"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/planner"
	"github.com/qhronos/qhronos/internal/recurrence"
	"github.com/qhronos/qhronos/internal/repository"
)

// Calendars turns an event's calendar references into what the planner
// checks instants against (calendar.Cache).
type Calendars interface {
	Planner(ctx context.Context, tx *repository.Store, refs []model.CalendarRef) ([]planner.Calendar, error)
}

// Planning is how an event's rows are planned: the window, and where its
// calendars come from. The events service and the expander loop share one,
// so an event plans the same rows on every path.
type Planning struct {
	Window    planner.Window
	Calendars Calendars // nil: no event has calendars
}

// exceptionReach is how far before a window an exception may sit and still
// apply to one of its instants (a calendar rolls an instant at most
// planner.MaxRoll days; jitter adds less than a day).
const exceptionReach = (planner.MaxRoll + 1) * 24 * time.Hour

// Series is the planner's view of ev: its rule, zone, jitter, calendars
// and the exceptions that may fall in windows from from on. Call it inside
// the transaction that writes the plan.
func (p Planning) Series(ctx context.Context, tx *repository.Store, ev *model.Event, rule *recurrence.Rule,
	from, now time.Time) (*planner.Series, error) {
	s, err := p.newSeries(ctx, tx, ev, rule, now)
	if err != nil {
		return nil, err
	}
	if ev.ID == "" {
		return s, nil // a schedule not saved yet (a preview) has no exceptions
	}
	exceptions, err := tx.Exceptions(ctx, ev.ID, from.Add(-exceptionReach))
	if err != nil {
		return nil, err
	}
	if len(exceptions) > 0 {
		s.Exceptions = make(map[time.Time]model.Exception, len(exceptions))
		for _, ex := range exceptions {
			s.Exceptions[ex.At] = ex
		}
	}
	return s, nil
}

// newSeries is Series of an event that has no exceptions yet (it is being
// created): no query for them on the create path.
func (p Planning) newSeries(ctx context.Context, tx *repository.Store, ev *model.Event, rule *recurrence.Rule,
	now time.Time) (*planner.Series, error) {
	// Bound to ctx: a client that goes away or a deadline stops every
	// expansion of this plan (preview, exceptions, the expander's window).
	s := &planner.Series{Rule: rule.WithContext(ctx), EventID: ev.ID, Location: rule.Location(), Jitter: ev.Jitter, Now: now}
	if len(ev.Calendars) > 0 {
		var err error
		if p.Calendars == nil {
			return nil, fmt.Errorf("event %s has calendars but none are configured", ev.ID)
		}
		if s.Calendars, err = p.Calendars.Planner(ctx, tx, ev.Calendars); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Expand materializes the next window of an active event inside tx, moves
// its cursor and next_run_at, and settles it to inactive when its series
// ended with nothing left to fire (ev is updated in place). The expander
// loop calls it for every event behind the horizon; the events service
// when an event is resumed or rescheduled. It returns the rows inserted or
// changed.
func (p Planning) Expand(ctx context.Context, tx *repository.Store, ev *model.Event, rule *recurrence.Rule, now time.Time) (int, error) {
	if ev.Status != model.EventActive || ev.DeletedAt != nil {
		return 0, nil
	}
	// From the cursor when it lags behind the window: the instants between
	// are recorded missed, and an exception there still skips one.
	from := p.Window.From(ev.ExpandedUntil, now)
	if ev.ExpandedUntil != nil && ev.ExpandedUntil.Before(from) {
		from = *ev.ExpandedUntil
	}
	series, err := p.Series(ctx, tx, ev, rule, from, now)
	if err != nil {
		return 0, err
	}
	return p.expand(ctx, tx, ev, series, now)
}

func (p Planning) expand(ctx context.Context, tx *repository.Store, ev *model.Event, series *planner.Series, now time.Time) (int, error) {
	plan, err := p.Window.Next(series, ev.ExpandedUntil, now)
	if err != nil {
		return 0, fmt.Errorf("expand event %s: %w", ev.ID, err)
	}
	inserted := 0
	if len(plan.Rows) > 0 {
		if inserted, err = tx.InsertPlanned(ctx, ev.ID, plan.Rows, now); err != nil {
			return 0, err
		}
	}
	res, err := tx.SetExpansion(ctx, repository.ExpansionUpdate{EventID: ev.ID, Version: ev.Version,
		ExpandedUntil: plan.Cursor, NextRunAt: plan.After, Now: now})
	if err != nil {
		return 0, err
	}
	ev.ExpandedUntil, ev.NextRunAt = &plan.Cursor, res.NextRunAt
	if res.Inactive {
		ev.Status = model.EventInactive
		ev.Version++
	}
	return inserted, nil
}

// checkCalendars refuses calendars that do not exist or that the principal
// cannot read (both answer alike, so nothing leaks across tenants).
func (s *Service) checkCalendars(ctx context.Context, tx *repository.Store, p auth.Principal, refs []model.CalendarRef) error {
	if len(refs) == 0 {
		return nil
	}
	ids := make([]string, len(refs))
	for i, r := range refs {
		ids[i] = r.ID
	}
	cals, err := tx.GetCalendars(ctx, ids)
	if err != nil {
		return err
	}
	readable := map[string]bool{}
	for _, c := range cals {
		readable[c.ID] = p.CanRead(c.Tags)
	}
	for i, id := range ids {
		if !readable[id] {
			return input.BadRequestf(fmt.Sprintf("calendars[%d].id", i), "unknown calendar %s", id)
		}
	}
	return nil
}

// useCalendars records which calendars ev uses, so that editing one
// re-plans it.
func (s *Service) useCalendars(ctx context.Context, tx *repository.Store, ev *model.Event) error {
	ids := make([]string, len(ev.Calendars))
	for i, r := range ev.Calendars {
		ids[i] = r.ID
	}
	err := tx.ReplaceEventCalendars(ctx, ev.ID, ids)
	var unknown *repository.UnknownCalendarError
	if errors.As(err, &unknown) {
		return input.BadRequestf("calendars", "unknown calendar %s", unknown.ID)
	}
	return err
}
