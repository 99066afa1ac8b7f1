package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/qhronos/qhronos/internal/auth"
	"github.com/qhronos/qhronos/internal/events"
	"github.com/qhronos/qhronos/internal/input"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/planner"
	"github.com/qhronos/qhronos/internal/repository"
)

var errNotAhead = &input.Error{Status: http.StatusConflict,
	Message: "only an occurrence that has not fired and is still ahead can be skipped or moved"}

// SkipOccurrence skips one occurrence that is still ahead: it will not
// fire, on any instance, and stays skipped (reason manual) when the event
// is re-planned. Unskip undoes it while the instant is still ahead.
func (s *Service) SkipOccurrence(ctx context.Context, p auth.Principal, id, reason string) (model.Occurrence, error) {
	if err := events.CheckReason(reason); err != nil {
		return model.Occurrence{}, err
	}
	return s.controlOccurrence(ctx, p, id, model.HistorySkip, reason, func(tx *repository.Store, ev *model.Event, occ *model.Occurrence, now time.Time) error {
		if !occ.Status.In(model.Waiting) && occ.Status != model.OccurrenceDispatching || !occ.ScheduledAt.After(now) {
			return errNotAhead
		}
		if occ.Manual {
			return conflictIf(tx.SkipOccurrence(ctx, occ.ID, model.ReasonManual, skipNote(p.Subject, reason), now))
		}
		key, moved, err := exceptionOf(ctx, tx, occ)
		if err != nil {
			return err
		}
		// A moved row is skipped where it was moved to (To kept), so that
		// it keeps its id and an unskip moves it back there.
		var to *time.Time
		if moved != nil {
			to = moved.To
		}
		return tx.PutException(ctx, model.Exception{EventID: ev.ID, At: key, Action: model.ExceptionSkip, To: to,
			Reason: reason, CreatedBy: p.Subject, CreatedAt: now.UTC()})
	})
}

// UnskipOccurrence makes an occurrence skipped by hand due again, while its
// instant is still ahead.
func (s *Service) UnskipOccurrence(ctx context.Context, p auth.Principal, id string) (model.Occurrence, error) {
	return s.controlOccurrence(ctx, p, id, model.HistoryUnskip, "", func(tx *repository.Store, ev *model.Event, occ *model.Occurrence, now time.Time) error {
		if occ.Status != model.OccurrenceSkipped || occ.Reason == nil || *occ.Reason != model.ReasonManual ||
			!occ.ScheduledAt.After(now) || occ.Manual {
			return &input.Error{Status: http.StatusConflict,
				Message: "only an occurrence skipped by hand whose instant is still ahead can be unskipped"}
		}
		key, ex, err := exceptionOf(ctx, tx, occ)
		switch {
		case err != nil:
			return err
		case ex != nil && ex.To != nil: // it had been moved: it stays there
			ex.Action = model.ExceptionMove
			return tx.PutException(ctx, *ex)
		}
		if err := tx.DeleteException(ctx, ev.ID, key); err != nil && !errors.Is(err, model.ErrNotFound) {
			return err
		}
		return nil
	})
}

// MoveOccurrence moves one occurrence that is still ahead to another future
// moment, keeping its id and recording the instant it was planned at.
// The target is read in the event's zone.
func (s *Service) MoveOccurrence(ctx context.Context, p auth.Principal, id string, target events.When, reason string) (model.Occurrence, error) {
	if err := events.CheckReason(reason); err != nil {
		return model.Occurrence{}, err
	}
	return s.controlOccurrence(ctx, p, id, model.HistoryMove, reason, func(tx *repository.Store, ev *model.Event, occ *model.Occurrence, now time.Time) error {
		to, err := target.Resolve(events.Location(ev), now)
		if err != nil {
			return err
		}
		if !occ.Status.In(model.Waiting) && occ.Status != model.OccurrenceDispatching || !occ.ScheduledAt.After(now) {
			return errNotAhead
		}
		rule, err := ev.Compile(s.opts.Recurrence)
		if err != nil {
			return fmt.Errorf("compile schedule of event %s: %w", ev.ID, err)
		}
		series, err := s.plan.newSeries(ctx, tx, ev, rule, now)
		if err != nil {
			return err
		}
		if err := checkMoveTarget(ctx, tx, ev.ID, series, to, now); err != nil {
			return err
		}
		key := occ.ScheduledAt
		if !occ.Manual {
			if key, _, err = exceptionOf(ctx, tx, occ); err != nil {
				return err
			}
			to := model.RoundUp(to)
			err = tx.PutException(ctx, model.Exception{EventID: ev.ID, At: key, Action: model.ExceptionMove, To: &to,
				Reason: reason, CreatedBy: p.Subject, CreatedAt: now.UTC()})
			if err != nil {
				return err
			}
		}
		return conflictIf(tx.MoveOccurrence(ctx, occ.ID, to, key, now))
	})
}

// controlOccurrence runs change on an occurrence of an event the principal
// may modify, in one transaction that bumps the event's version (fencing
// concurrent expansion) and re-plans its future rows; it returns the row
// as it is afterwards. The event's history records action with reason.
func (s *Service) controlOccurrence(ctx context.Context, p auth.Principal, id, action, reason string,
	change func(tx *repository.Store, ev *model.Event, occ *model.Occurrence, now time.Time) error) (model.Occurrence, error) {
	occ, err := s.Occurrence(ctx, p, id)
	if err != nil {
		return occ, err
	}
	ev, err := s.modifiable(ctx, p, occ.EventID, nil)
	if err != nil {
		return model.Occurrence{}, err
	}
	now := s.now()
	err = s.store.WithTx(ctx, func(tx *repository.Store) error {
		if err := change(tx, &ev, &occ, now); err != nil {
			return err
		}
		if err := s.replanAfterControl(ctx, tx, &ev, now); err != nil {
			return err
		}
		after, err := tx.GetOccurrence(ctx, occ.ID)
		if err != nil {
			return err
		}
		return s.record(ctx, tx, p, ev.ID, action, reason, events.OccurrenceChanges(&occ, &after))
	})
	if err != nil {
		return model.Occurrence{}, s.concurrent(err)
	}
	s.wake(ctx, ev.NextRunAt)
	return s.store.GetOccurrence(ctx, occ.ID)
}

// replanAfterControl bumps the event's version and, when it is active,
// decides its future rows afresh from the rule and its exceptions (rows
// keep their ids; see Replan).
func (s *Service) replanAfterControl(ctx context.Context, tx *repository.Store, ev *model.Event, now time.Time) error {
	version := ev.Version
	ev.UpdatedAt = now.UTC()
	if ev.Status == model.EventInactive {
		// Skipping its last instant ended the event; an unskip or a removed
		// exception may give it one back. If not, the plan below ends it
		// again.
		ev.Status = model.EventActive
	}
	if err := tx.UpdateEvent(ctx, ev, version); err != nil {
		return err
	}
	if ev.Status == model.EventPaused {
		return settlePausedRows(ctx, tx, ev, now)
	}
	if ev.Status != model.EventActive {
		return nil
	}
	rule, err := ev.Compile(s.opts.Recurrence)
	if err != nil {
		return fmt.Errorf("compile schedule of event %s: %w", ev.ID, err)
	}
	if _, err := tx.CancelFutureOccurrences(ctx, ev.ID, now, true, model.ReasonRuleChanged, now); err != nil {
		return err
	}
	return s.restart(ctx, tx, ev, rule, now)
}

// pausedRowsLimit bounds the rows ahead a control on a paused event
// settles: more than the lookahead window plans.
const pausedRowsLimit = 10_000

// settlePausedRows makes the rows a paused event keeps ahead (those after
// its pause, which the pause left as planned) say what will happen to
// them: a row whose instant has a skip exception is skipped now (reason
// manual) rather than on resume, and a row skipped by hand whose skip was
// undone is due again. The rest of the plan is decided on resume.
func settlePausedRows(ctx context.Context, tx *repository.Store, ev *model.Event, now time.Time) error {
	from := now
	if ev.PausedUntil != nil && ev.PausedUntil.After(now) {
		from = *ev.PausedUntil
	}
	rows, err := tx.ListOccurrences(ctx, model.OccurrenceFilter{EventID: ev.ID, Unrestricted: true, From: &from,
		Status: []model.OccurrenceStatus{model.OccurrencePending, model.OccurrenceSkipped}, Order: model.OldestFirst,
		Limit: pausedRowsLimit})
	if err != nil || len(rows) == 0 {
		return err
	}
	exs, err := tx.Exceptions(ctx, ev.ID, from.Add(-exceptionReach))
	if err != nil {
		return err
	}
	byAt := make(map[int64]model.Exception, len(exs))
	for _, ex := range exs {
		byAt[ex.At.UnixMicro()] = ex
	}
	for _, o := range rows {
		if o.Manual {
			continue
		}
		// A row moved by hand is keyed where it was planned.
		ex, ok := byAt[o.ScheduledAt.UnixMicro()]
		if o.OriginalScheduledAt != nil {
			if moved, found := byAt[o.OriginalScheduledAt.UnixMicro()]; found && moved.To != nil && moved.To.Equal(o.ScheduledAt) {
				ex, ok = moved, true
			}
		}
		skip := ok && ex.Action == model.ExceptionSkip
		switch {
		case skip && o.Status == model.OccurrencePending:
			err = tx.SkipOccurrence(ctx, o.ID, model.ReasonManual, skipNote(ex.CreatedBy, ex.Reason), now)
		case !skip && o.Status == model.OccurrenceSkipped && o.Reason != nil && *o.Reason == model.ReasonManual:
			_, err = tx.InsertPlanned(ctx, ev.ID, []model.Planned{{At: o.ScheduledAt, Original: o.OriginalScheduledAt,
				Status: model.OccurrencePending}}, now)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// checkMoveTarget refuses a move to the past, or onto an instant the series
// already has (planned or materialized). series is the event's plan without
// its exceptions (which a move never lands on).
func checkMoveTarget(ctx context.Context, tx *repository.Store, eventID string, series *planner.Series, to, now time.Time) error {
	if !to.After(now) {
		return input.BadRequest("to", "must be in the future")
	}
	if _, err := tx.OccurrenceAt(ctx, eventID, to); err == nil {
		return input.BadRequest("to", "the event already has an occurrence at that instant")
	} else if !errors.Is(err, model.ErrNotFound) {
		return err
	}
	if planned, err := series.Plans(model.RoundUp(to)); err == nil && planned {
		return input.BadRequest("to", "the series already has an instant there")
	}
	return nil
}

// moveRowAt moves the event's row at from, if it has one that has not
// fired, to to (keeping its id); original is recorded as where it was
// planned. A row that fired already stays.
func moveRowAt(ctx context.Context, tx *repository.Store, eventID string, from, to, original, now time.Time) error {
	occ, err := tx.OccurrenceAt(ctx, eventID, from)
	if errors.Is(err, model.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := tx.MoveOccurrence(ctx, occ.ID, to, original, now); err != nil && !errors.Is(err, model.ErrConflict) {
		return err
	}
	return nil
}

// exceptionOf finds the instant an occurrence's exception is keyed by — the
// instant it was planned at before a move, else its own — and the
// exception that moved it there (nil when none did).
func exceptionOf(ctx context.Context, tx *repository.Store, occ *model.Occurrence) (time.Time, *model.Exception, error) {
	key := occ.ScheduledAt
	if occ.OriginalScheduledAt != nil {
		key = *occ.OriginalScheduledAt
	}
	exs, err := tx.Exceptions(ctx, occ.EventID, key)
	if err != nil {
		return time.Time{}, nil, err
	}
	for _, ex := range exs {
		if !ex.At.Equal(key) {
			break
		}
		if ex.To != nil && ex.To.Equal(occ.ScheduledAt) {
			return ex.At, &ex, nil
		}
		if ex.To == nil && key.Equal(occ.ScheduledAt) {
			return ex.At, nil, nil
		}
	}
	return occ.ScheduledAt, nil, nil // not moved by hand (perhaps rolled by a calendar): keyed where it is
}

func skipNote(by, reason string) string {
	note := "skipped by " + by
	if reason != "" {
		note += ": " + reason
	}
	return note
}

// conflictIf turns a row that changed meanwhile into errNotAhead.
func conflictIf(err error) error {
	if errors.Is(err, model.ErrConflict) {
		return errNotAhead
	}
	return err
}

// concurrent turns a lost version race into a 409 the client may retry.
func (s *Service) concurrent(err error) error {
	if errors.Is(err, model.ErrStaleVersion) {
		return errConcurrent
	}
	return err
}

// Exceptions lists an event's exceptions, past and future, in order.
func (s *Service) Exceptions(ctx context.Context, p auth.Principal, eventID string) ([]model.Exception, error) {
	ev, err := s.Get(ctx, p, eventID, false)
	if err != nil {
		return nil, err
	}
	return s.store.Exceptions(ctx, ev.ID, time.Time{})
}

// AddException skips or moves one planned instant of an event, materialized
// or not: stored with the event and honoured whenever the planner reaches
// it. A row that already exists for the instant changes at once (a moved
// one keeps its id).
func (s *Service) AddException(ctx context.Context, p auth.Principal, eventID string, in events.ExceptionInput) (model.Exception, error) {
	ex := model.Exception{Action: in.Action, Reason: in.Reason}
	if err := events.CheckReason(ex.Reason); err != nil {
		return ex, err
	}
	ev, err := s.modifiable(ctx, p, eventID, nil)
	if err != nil {
		return ex, err
	}
	now, loc := s.now(), events.Location(&ev)
	if ex.At, err = in.At.Resolve(loc, now); err != nil {
		return ex, err
	}
	ex.EventID, ex.CreatedBy, ex.CreatedAt = ev.ID, p.Subject, now.UTC()
	if !ex.At.After(now) {
		return ex, input.BadRequest("at", "must be in the future")
	}
	switch ex.Action {
	case model.ExceptionSkip:
		ex.To = nil
	case model.ExceptionMove:
		if in.To == nil {
			return ex, input.BadRequest("to", "is required to move an instant")
		}
		to, err := in.To.Resolve(loc, now)
		if err != nil {
			return ex, err
		}
		ex.To = &to
	default:
		return ex, input.BadRequest("action", `must be "skip" or "move"`)
	}
	rule, err := ev.Compile(s.opts.Recurrence)
	if err != nil {
		return ex, fmt.Errorf("compile schedule of event %s: %w", ev.ID, err)
	}
	err = s.store.WithTx(ctx, func(tx *repository.Store) error {
		series, err := s.plan.newSeries(ctx, tx, &ev, rule, now)
		if err != nil {
			return err
		}
		if ok, err := series.Plans(ex.At); err != nil || !ok {
			return input.BadRequest("at", "is not an instant this event plans to fire")
		}
		if ex.Action == model.ExceptionMove {
			if err := checkMoveTarget(ctx, tx, ev.ID, series, *ex.To, now); err != nil {
				return err
			}
		}
		prev, err := exceptionAt(ctx, tx, ev.ID, ex.At)
		if err != nil {
			return err
		}
		if err := tx.PutException(ctx, ex); err != nil {
			return err
		}
		if ex.Action == model.ExceptionMove {
			// Moved in place, so it keeps its id.
			if err := moveRowAt(ctx, tx, ev.ID, ex.At, *ex.To, ex.At, now); err != nil {
				return err
			}
		}
		if err := s.replanAfterControl(ctx, tx, &ev, now); err != nil {
			return err
		}
		return s.record(ctx, tx, p, ev.ID, model.HistoryExceptionAdded, ex.Reason, events.ExceptionChanges(prev, &ex))
	})
	if err != nil {
		return ex, s.concurrent(err)
	}
	s.wake(ctx, ev.NextRunAt)
	return ex, nil
}

// DeleteException removes an event's exception at at; an instant still
// ahead fires as planned again (a moved row goes back, keeping its id).
func (s *Service) DeleteException(ctx context.Context, p auth.Principal, eventID string, when events.When) error {
	ev, err := s.modifiable(ctx, p, eventID, nil)
	if err != nil {
		return err
	}
	now := s.now()
	at, err := when.Resolve(events.Location(&ev), now)
	if err != nil {
		return err
	}
	err = s.store.WithTx(ctx, func(tx *repository.Store) error {
		ex, err := exceptionAt(ctx, tx, ev.ID, at)
		if err != nil {
			return err
		}
		if ex == nil {
			return errNotFound
		}
		if err := tx.DeleteException(ctx, ev.ID, at); err != nil {
			return err
		}
		if ex.Action == model.ExceptionMove && ex.To != nil && at.After(now) {
			if err := moveRowAt(ctx, tx, ev.ID, *ex.To, at, at, now); err != nil {
				return err
			}
		}
		if err := s.replanAfterControl(ctx, tx, &ev, now); err != nil {
			return err
		}
		return s.record(ctx, tx, p, ev.ID, model.HistoryExceptionRemoved, "", events.ExceptionChanges(ex, nil))
	})
	if err != nil {
		return s.concurrent(err)
	}
	s.wake(ctx, ev.NextRunAt)
	return nil
}
