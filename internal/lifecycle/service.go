// Package lifecycle is the events service: it owns an event's lifecycle: every change — create, edit,
// pause, resume, delete, trigger, secret rotation, acknowledgement, replay —
// is one method that validates the change, opens its own transaction, keeps
// the occurrences in step and wakes the dispatchers once it committed. The
// HTTP layer decodes, calls one method and encodes; the scheduler's loops
// only expand, dispatch, rescue and archive.
package lifecycle

import (
	"context"
	"time"

	"github.com/qhronos/qhronos/internal/auth"
	"github.com/qhronos/qhronos/internal/events"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/outbound"
	"github.com/qhronos/qhronos/internal/planner"
	"github.com/qhronos/qhronos/internal/recurrence"
	"github.com/qhronos/qhronos/internal/redact"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/secrets"
)

// Waker tells dispatchers — this instance's and, through the bus, every
// other's — that something is due at at. Best effort.
type Waker interface {
	Wake(ctx context.Context, at time.Time)
}

// Options are the service's limits, taken from config.
type Options struct {
	Recurrence recurrence.Limits
	Window     planner.Window
	MaxTimeout time.Duration // per-event attempt timeout cap
	// Outbound is the policy endpoint URLs and OAuth2 token URLs must pass
	// (the actions' create-time check).
	Outbound outbound.Options
}

// Deps are the service's collaborators, built in main.
type Deps struct {
	Store   *repository.Store
	Actions events.Actions
	Secrets *secrets.Box
	Waker   Waker // nil: nobody to wake (tests)
	// Calendars compiles events' calendars for the planner (calendar.Cache).
	Calendars Calendars
	Now       func() time.Time
}

// Service is the one home of an event's lifecycle.
type Service struct {
	store    *repository.Store
	validate *events.Validator
	secrets  *secrets.Box
	redact   *redact.Redactor
	waker    Waker
	now      func() time.Time
	opts     Options
	plan     Planning
}

// New returns the service.
func New(d Deps, opts Options) *Service {
	if d.Now == nil {
		d.Now = time.Now
	}
	v := &events.Validator{Actions: d.Actions, Secrets: d.Secrets, Recurrence: opts.Recurrence, MaxTimeout: opts.MaxTimeout}
	return &Service{store: d.Store, validate: v, secrets: d.Secrets, redact: d.Secrets.Redactor(),
		waker: d.Waker, now: d.Now, opts: opts,
		plan: Planning{Window: opts.Window, Calendars: d.Calendars}}
}

// wake announces an instant that became due; nil does nothing.
func (s *Service) wake(ctx context.Context, at *time.Time) {
	if at != nil && s.waker != nil {
		s.waker.Wake(ctx, *at)
	}
}

// Planning is how the service plans rows; the expander loop uses the same.
func (s *Service) Planning() Planning { return s.plan }

// PreviewSchedule shows the next n rows strictly after after of a schedule
// in a body (start_time may be past), with its time policy and calendars.
// The calendars it names pass event create's read rule: one the principal
// cannot read answers like an unknown one.
func (s *Service) PreviewSchedule(ctx context.Context, p auth.Principal, in *events.Input, after time.Time, n int) (events.Preview, error) {
	ev, rule, err := s.validate.PreviewRule(in, s.now())
	if err != nil {
		return events.Preview{}, err
	}
	if err := s.checkCalendars(ctx, s.store, p, ev.Calendars); err != nil {
		return events.Preview{}, err
	}
	return s.preview(ctx, ev, rule, after, n)
}

// PreviewEvent shows the next n rows strictly after after of an event the
// principal may read, as they will be written: jitter, calendars, DST
// policy and exceptions applied, skipped rows with their reason.
func (s *Service) PreviewEvent(ctx context.Context, p auth.Principal, id string, after time.Time, n int) (events.Preview, error) {
	ev, err := s.Get(ctx, p, id, false)
	if err != nil {
		return events.Preview{}, err
	}
	rule, err := ev.Compile(s.opts.Recurrence)
	if err != nil {
		return events.Preview{}, err
	}
	return s.preview(ctx, &ev, rule, after, n)
}

func (s *Service) preview(ctx context.Context, ev *model.Event, rule *recurrence.Rule, after time.Time, n int) (events.Preview, error) {
	series, err := s.plan.Series(ctx, s.store, ev, rule, after, s.now())
	if err != nil {
		return events.Preview{}, err
	}
	rows, err := series.Preview(after, n)
	return events.Preview{Location: rule.Location(), Rows: rows}, err
}

// nextFiringScan bounds the instants read to find the next one that fires.
const nextFiringScan = 100

// NextFiringAfterPause is when an event paused until a moment fires next:
// the pause's end when it fires the instants it held (pause_catch_up
// "fire") and one fell inside it, else the first instant after the pause
// that is not skipped. Nil when the event is not paused until a moment, or
// none is among the next instants. It is computed, not stored: the stored
// next_run_at is the dispatcher bookkeeping's, kept empty while paused.
func (s *Service) NextFiringAfterPause(ctx context.Context, ev *model.Event) (*time.Time, error) {
	if ev.Status != model.EventPaused || ev.PausedUntil == nil {
		return nil, nil
	}
	until := *ev.PausedUntil
	rule, err := ev.Compile(s.opts.Recurrence)
	if err != nil {
		return nil, err
	}
	first := func(after time.Time) (*time.Time, error) {
		p, err := s.preview(ctx, ev, rule, after, nextFiringScan)
		if err != nil {
			return nil, err
		}
		for _, r := range p.Rows {
			if r.Status != model.OccurrenceSkipped {
				at := r.At.UTC()
				return &at, nil
			}
		}
		return nil, nil
	}
	if ev.PauseCatchUp == model.PauseFire && ev.PausedAt != nil {
		held, err := first(ev.PausedAt.Add(-time.Microsecond))
		if err != nil {
			return nil, err
		}
		if held != nil && held.Before(until) {
			end := until.UTC()
			return &end, nil
		}
	}
	// A preview's after is exclusive: an instant at the pause's end fires.
	return first(until.Add(-time.Microsecond))
}
