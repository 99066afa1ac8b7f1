package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/qhronos/qhronos/internal/auth"
	"github.com/qhronos/qhronos/internal/events"
	"github.com/qhronos/qhronos/internal/input"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/recurrence"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/secrets"
	"github.com/qhronos/qhronos/internal/tracing"
)

var (
	errNotFound     = &input.Error{Status: http.StatusNotFound, Message: "not found"}
	errOutsideScope = &input.Error{Status: http.StatusForbidden, Message: "tags: outside token scope", Field: "tags"}
	errConcurrent   = &input.Error{Status: http.StatusConflict, Message: "the event was changed concurrently; retry"}
)

// Get returns a live event the principal may read; anything else is not
// found. withDeleted also finds a soft-deleted event (status "deleted").
func (s *Service) Get(ctx context.Context, p auth.Principal, id string, withDeleted bool) (model.Event, error) {
	get := s.store.GetEvent
	if withDeleted {
		get = s.store.GetEventAny
	}
	ev, err := get(ctx, id)
	if err != nil {
		return model.Event{}, err
	}
	if !p.CanRead(ev.Tags) {
		return model.Event{}, errNotFound
	}
	return ev, nil
}

// modifiable loads an event the principal may change: invisible is 404,
// visible but not fully inside the scope is 403; then check runs.
func (s *Service) modifiable(ctx context.Context, p auth.Principal, id string, check events.Precondition) (model.Event, error) {
	ev, err := s.Get(ctx, p, id, false)
	if err != nil {
		return ev, err
	}
	return changeable(p, ev, ev.Tags, check)
}

// changeable passes v, which the principal can read, when its tags are all
// inside the principal's scope (else 403) and check (may be nil) holds.
func changeable[T any](p auth.Principal, v T, tags []string, check func(*T) error) (T, error) {
	var zero T
	if !p.CanModify(tags) {
		return zero, errOutsideScope
	}
	if check != nil {
		if err := check(&v); err != nil {
			return zero, err
		}
	}
	return v, nil
}

// Create validates in, stores the event with its first window of
// occurrences (one statement on PostgreSQL), and wakes the dispatchers.
// via names the client kind that created it.
func (s *Service) Create(ctx context.Context, p auth.Principal, via string, in *events.Input, o events.Once) (events.Answer, error) {
	now := s.now()
	nc, err := s.prepareCreate(ctx, p, via, in, now)
	if err != nil {
		return events.Answer{}, err
	}
	ans, err := s.once(ctx, o, func(store *repository.Store) (any, error) {
		if !nc.needsTx() {
			return &nc.ev, s.create(ctx, store, &nc.ev, nc.rule, nc.created, now)
		}
		return &nc.ev, store.WithTx(ctx, func(tx *repository.Store) error { return s.createHeld(ctx, tx, p, nc, now) })
	})
	if err == nil && !ans.Replayed {
		s.wake(ctx, nc.ev.NextRunAt)
	}
	return ans, err
}

// newEvent is a create validated and ready to write: the event, its
// compiled rule and its first history entry.
type newEvent struct {
	ev      model.Event
	rule    *recurrence.Rule
	created model.HistoryEntry
}

// needsTx: the event's calendars and endpoint are checked and held in the
// transaction that writes it.
func (nc *newEvent) needsTx() bool { return len(nc.ev.Calendars) > 0 || nc.ev.EndpointID != nil }

// prepareCreate validates a create — the one validation of single and
// batch creates — and builds the event it writes, without writing.
func (s *Service) prepareCreate(ctx context.Context, p auth.Principal, via string, in *events.Input, now time.Time) (*newEvent, error) {
	if err := in.KeepsKey(""); err != nil {
		return nil, err
	}
	return s.prepare(ctx, p, via, in, nil, now)
}

// prepare is prepareCreate; with stored, it validates a replacement of
// stored (an upsert by key): secrets restore against it and its start_time
// may stay although it passed.
func (s *Service) prepare(ctx context.Context, p auth.Principal, via string, in *events.Input, stored *model.Event,
	now time.Time) (*newEvent, error) {
	// KeyScope records the creator's tenant scope on every event: keys are
	// unique in it, and the dispatcher's fair share counts by it.
	ev := model.Event{ID: model.NewID(), Status: model.EventActive, CreatedBy: p.Subject, CreatedVia: via,
		KeyScope: p.KeyScope(), Version: 1, CreatedAt: now.UTC(), UpdatedAt: now.UTC()}
	if in.Status != nil {
		switch model.EventStatus(*in.Status) {
		case model.EventActive, model.EventPaused:
			ev.Status = model.EventStatus(*in.Status)
			if ev.Status == model.EventPaused {
				markPaused(&ev, p, events.Pause{}, now)
			}
		default:
			return nil, input.BadRequest("status", `must be "active" or "paused" on create`)
		}
	}
	if err := s.restoreSecrets(in, stored); err != nil {
		return nil, err
	}
	if err := s.checkActionEndpoint(ctx, p, in.Action); err != nil {
		return nil, err
	}
	var rule *recurrence.Rule
	var err error
	if stored != nil {
		rule, err = s.validate.Replace(in, &ev, stored.StartTime, now)
	} else {
		rule, err = s.validate.Apply(in, &ev, true, now)
	}
	if err != nil {
		return nil, err
	}
	if err := setEventEndpoint(&ev); err != nil {
		return nil, err
	}
	if err := s.checkEventTopic(ctx, &ev); err != nil {
		return nil, err
	}
	if err := mayTag(p, ev.Tags); err != nil {
		return nil, err
	}
	created := s.entry(p, ev.ID, model.HistoryCreate, "", events.Created(s.redact, &ev))
	return &newEvent{ev: ev, rule: rule, created: created}, nil
}

// createHeld writes an event that uses calendars or an endpoint inside tx:
// the event and the calendars and endpoint it uses go together.
func (s *Service) createHeld(ctx context.Context, tx *repository.Store, p auth.Principal, nc *newEvent, now time.Time) error {
	if err := holdEventEndpoint(ctx, tx, &nc.ev, true); err != nil {
		return err
	}
	if err := s.checkCalendars(ctx, tx, p, nc.ev.Calendars); err != nil {
		return err
	}
	if err := s.create(ctx, tx, &nc.ev, nc.rule, nc.created, now); err != nil {
		return err
	}
	return s.useCalendars(ctx, tx, &nc.ev)
}

// create writes a new event with its history entry and, when it is
// active, its first window of rows (one statement on PostgreSQL).
func (s *Service) create(ctx context.Context, tx *repository.Store, ev *model.Event, rule *recurrence.Rule,
	created model.HistoryEntry, now time.Time) error {
	if ev.Status != model.EventActive {
		return tx.CreateEventRecorded(ctx, ev, created)
	}
	ctx, span := tracing.StartPlan(ctx, ev.ID)
	rows, err := s.planFirst(ctx, tx, ev, rule, created, now)
	tracing.EndPlan(span, rows, ev.NextRunAt, err)
	return err
}

// planFirst plans a new active event's first window and writes it with
// the event; it returns the rows written.
func (s *Service) planFirst(ctx context.Context, tx *repository.Store, ev *model.Event, rule *recurrence.Rule,
	created model.HistoryEntry, now time.Time) (int, error) {
	rows, err := s.firstWindow(ctx, tx, ev, rule, now)
	if err != nil {
		return 0, err
	}
	return len(rows), tx.CreateEventRecorded(ctx, ev, created, rows...)
}

// firstWindow plans a new active event's first window: the rows to write
// with it; ev's cursor and next run move with the plan.
func (s *Service) firstWindow(ctx context.Context, tx *repository.Store, ev *model.Event, rule *recurrence.Rule,
	now time.Time) ([]model.Planned, error) {
	series, err := s.plan.newSeries(ctx, tx, ev, rule, now)
	if err != nil {
		return nil, err
	}
	plan, err := s.opts.Window.Next(series, nil, now)
	if err != nil {
		return nil, fmt.Errorf("expand event %s: %w", ev.ID, err)
	}
	ev.ExpandedUntil, ev.NextRunAt = &plan.Cursor, plan.NextRunAt()
	return plan.Rows, nil
}

// Update applies in to the event: absent members keep their value. An edit
// of the schedule re-plans from now; a status change pauses or resumes.
func (s *Service) Update(ctx context.Context, p auth.Principal, id string, in *events.Input, check events.Precondition) (model.Event, error) {
	ev, err := s.modifiable(ctx, p, id, check)
	if err != nil {
		return ev, err
	}
	if err := in.KeepsKey(ev.Key); err != nil {
		return model.Event{}, err
	}
	now := s.now()
	before := ev
	if err := s.restoreSecrets(in, &before); err != nil {
		return model.Event{}, err
	}
	if err := s.checkActionEndpoint(ctx, p, in.Action); err != nil {
		return model.Event{}, err
	}
	rule, err := s.validate.Apply(in, &ev, false, now)
	if err != nil {
		return model.Event{}, err
	}
	if err := setEventEndpoint(&ev); err != nil {
		return model.Event{}, err
	}
	if err := s.checkEventTopic(ctx, &ev); err != nil {
		return model.Event{}, err
	}
	if in.Tags != nil {
		if err := mayTag(p, ev.Tags); err != nil {
			return model.Event{}, err
		}
	}
	target := ev.Status
	if in.Status != nil {
		switch st := model.EventStatus(*in.Status); st {
		case model.EventActive, model.EventPaused, model.EventInactive:
			target = st
		default:
			return model.Event{}, input.BadRequest("status", `must be "active", "paused" or "inactive"`)
		}
	}
	rescheduled := in.TouchesSchedule() && !model.SameSchedule(&before, &ev)
	ev.UpdatedAt = now.UTC()
	if target == model.EventPaused && before.Status != model.EventPaused {
		markPaused(&ev, p, events.Pause{}, now)
	}
	err = s.store.WithTx(ctx, func(tx *repository.Store) error {
		return s.writeUpdate(ctx, tx, p, &before, &ev, target, rescheduled, rule, now)
	})
	if errors.Is(err, model.ErrStaleVersion) && check == nil {
		return model.Event{}, errConcurrent
	}
	if err != nil {
		return model.Event{}, err
	}
	s.wake(ctx, ev.NextRunAt)
	return ev, nil
}

// writeUpdate writes ev, changed from before, inside tx: the endpoint and
// calendars it uses are held, its status moves to target and its future
// occurrences follow (re-planned when rescheduled), and the change is
// recorded in its history.
func (s *Service) writeUpdate(ctx context.Context, tx *repository.Store, p auth.Principal, before, ev *model.Event,
	target model.EventStatus, rescheduled bool, rule *recurrence.Rule, now time.Time) error {
	calendarsChanged := !slices.Equal(before.Calendars, ev.Calendars)
	if err := holdEventEndpoint(ctx, tx, ev, namesEndpointAnew(before, ev)); err != nil {
		return err
	}
	if calendarsChanged {
		if err := s.checkCalendars(ctx, tx, p, ev.Calendars); err != nil {
			return err
		}
	}
	if err := s.transition(ctx, tx, ev, before.Version, target, rescheduled, rule, now); err != nil {
		return err
	}
	if calendarsChanged {
		if err := s.useCalendars(ctx, tx, ev); err != nil {
			return err
		}
	}
	return s.record(ctx, tx, p, ev.ID, model.HistoryUpdate, "", events.Diff(s.redact, before, ev))
}

// Pause stops the event's future occurrences until it is resumed — by a
// call, or by itself at req.Until. Rows ahead are skipped with reason
// paused (history is untouched; manual triggers still fire). Pausing a
// paused event changes its until, reason and catch-up.
func (s *Service) Pause(ctx context.Context, p auth.Principal, id string, req events.Pause, check events.Precondition) (model.Event, error) {
	ev, err := s.modifiable(ctx, p, id, check)
	if err != nil {
		return ev, err
	}
	now, before := s.now(), ev
	if err := req.Resolve(events.Location(&ev), now); err != nil {
		return model.Event{}, err
	}
	if ev.Status == model.EventPaused {
		version := ev.Version
		ev.PausedUntil, ev.PauseReason, ev.PauseCatchUp, ev.UpdatedAt = req.Until, req.Reason, req.CatchUp, now.UTC()
		err = s.store.WithTx(ctx, func(tx *repository.Store) error {
			if err := tx.UpdateEvent(ctx, &ev, version); err != nil {
				return err
			}
			return s.record(ctx, tx, p, ev.ID, model.HistoryPause, req.Reason, events.Diff(s.redact, &before, &ev))
		})
		return ev, err
	}
	// An inactive (ended) event may be paused too, as the original API
	// allowed; it has nothing ahead to skip.
	version := ev.Version
	markPaused(&ev, p, req, now)
	err = s.store.WithTx(ctx, func(tx *repository.Store) error {
		if err := s.transition(ctx, tx, &ev, version, model.EventPaused, false, nil, now); err != nil {
			return err
		}
		return s.record(ctx, tx, p, ev.ID, model.HistoryPause, req.Reason, events.Diff(s.redact, &before, &ev))
	})
	if err != nil {
		return model.Event{}, err
	}
	return ev, nil
}

// markPaused records who paused ev, when and why.
func markPaused(ev *model.Event, p auth.Principal, req events.Pause, now time.Time) {
	at := now.UTC()
	ev.PausedAt, ev.PausedUntil, ev.PauseReason, ev.PausedBy = &at, req.Until, req.Reason, p.Subject
	ev.PauseCatchUp = req.CatchUp
	if ev.PauseCatchUp == "" {
		ev.PauseCatchUp = model.PauseSkip
	}
}

// Resume re-plans a paused event from now. The instants that fell inside
// the pause are recorded skipped (reason paused), or with catch_up "fire"
// made due so that the event's catch_up policy decides; req.CatchUp
// overrides the pause's choice.
func (s *Service) Resume(ctx context.Context, p auth.Principal, id string, req events.Resume, check events.Precondition) (model.Event, error) {
	ev, err := s.modifiable(ctx, p, id, check)
	if err != nil || ev.Status != model.EventPaused {
		return ev, err
	}
	return s.resume(ctx, p, ev, req)
}

func (s *Service) resume(ctx context.Context, p auth.Principal, ev model.Event, req events.Resume) (model.Event, error) {
	before := ev
	if req.CatchUp != "" {
		ev.PauseCatchUp = req.CatchUp
	}
	rule, err := ev.Compile(s.opts.Recurrence)
	if err != nil {
		return model.Event{}, fmt.Errorf("compile schedule of event %s: %w", ev.ID, err)
	}
	now := s.now()
	version := ev.Version
	ev.UpdatedAt = now.UTC()
	err = s.store.WithTx(ctx, func(tx *repository.Store) error {
		if err := s.transition(ctx, tx, &ev, version, model.EventActive, false, rule, now); err != nil {
			return err
		}
		return s.record(ctx, tx, p, ev.ID, model.HistoryResume, "", events.Diff(s.redact, &before, &ev))
	})
	if err != nil {
		return model.Event{}, err
	}
	s.wake(ctx, ev.NextRunAt)
	return ev, nil
}

// ResumeDue resumes up to limit paused events whose pause ended by now, as
// the scheduler (the resumer loop calls it on the leading instance). It
// returns how many it resumed.
func (s *Service) ResumeDue(ctx context.Context, limit int) (int, error) {
	now := s.now()
	ids, err := s.store.PausesEnded(ctx, now, limit)
	if err != nil {
		return 0, err
	}
	n := 0
	var failed []error
	for _, id := range ids {
		ev, err := s.store.GetEvent(ctx, id)
		if errors.Is(err, model.ErrNotFound) {
			continue
		}
		if err != nil {
			return n, err // the store is away: the next pass tries again
		}
		if ev.Status != model.EventPaused || ev.PausedUntil == nil || ev.PausedUntil.After(now) {
			continue // resumed or re-paused meanwhile
		}
		_, err = s.resume(ctx, schedulerPrincipal, ev, events.Resume{})
		switch {
		case errors.Is(err, model.ErrStaleVersion):
			// changed meanwhile: the next pass looks again
		case err != nil:
			// One event that cannot resume must not hold the others back.
			failed = append(failed, fmt.Errorf("resume event %s: %w", ev.ID, err))
		default:
			n++
		}
	}
	return n, errors.Join(failed...)
}

// transition writes ev with its new status inside tx and keeps its future
// occurrences in step: pausing cancels pending rows, including rows a
// dispatcher holds until their instant (their lease is revoked); resuming or
// rescheduling re-plans from now, so instants that fell inside a pause never
// fire while rows still in the series keep their ids. rule is ev's compiled
// rule (nil when ev will not be active).
func (s *Service) transition(ctx context.Context, tx *repository.Store, ev *model.Event, expectedVersion int64,
	target model.EventStatus, rescheduled bool, rule *recurrence.Rule, now time.Time) error {
	wasActive := ev.Status == model.EventActive
	ev.Status = target
	pausedAt, pausedUntil, policy := ev.PausedAt, ev.PausedUntil, ev.PauseCatchUp
	if target != model.EventPaused {
		ev.PausedAt, ev.PausedUntil, ev.PauseReason, ev.PausedBy, ev.PauseCatchUp = nil, nil, "", "", ""
	}
	if err := tx.UpdateEvent(ctx, ev, expectedVersion); err != nil {
		return err
	}
	switch {
	case target != model.EventActive && wasActive:
		// A pause until a moment covers [now, until) only: a row after it
		// (moved there, or planned) stays due.
		var before time.Time
		if target == model.EventPaused && ev.PausedUntil != nil {
			before = *ev.PausedUntil
		}
		if _, err := tx.CancelOccurrencesBefore(ctx, ev.ID, time.Time{}, before, true, model.ReasonPaused, now); err != nil {
			return err
		}
		ev.NextRunAt = nil
		return tx.ClearNextRun(ctx, ev.ID)
	case target == model.EventActive && !wasActive:
		return s.resumeFromPause(ctx, tx, ev, rule, pausedAt, pausedUntil, policy, now)
	case target == model.EventActive && rescheduled:
		// Overdue rows already due keep their course; future ones are
		// cancelled and the re-plan reinstates (keeping its id) every
		// instant still in the series.
		if _, err := tx.CancelFutureOccurrences(ctx, ev.ID, now, true, model.ReasonRuleChanged, now); err != nil {
			return err
		}
		return s.restart(ctx, tx, ev, rule, now)
	}
	return nil
}

// maxResumeSteps bounds the windows a resume plans inside the pause; a
// pause longer than that (at most the catch-up window is planned) leaves
// its oldest instants without a row.
const maxResumeSteps = 20

// resumeFromPause plans a resumed event: from where the pause began (at
// most the catch-up window back), instants before now are recorded as the
// pause said — skipped, reason paused, or due — and from now on as usual.
// An event paused without a record of when (paused at creation before
// this was kept) restarts from now.
func (s *Service) resumeFromPause(ctx context.Context, tx *repository.Store, ev *model.Event, rule *recurrence.Rule,
	pausedAt, pausedUntil *time.Time, policy string, now time.Time) error {
	// Rows ahead are decided afresh: an edit made while paused may have
	// removed their instants (they end cancelled, rule_changed).
	if _, err := tx.CancelFutureOccurrences(ctx, ev.ID, now, true, model.ReasonRuleChanged, now); err != nil {
		return err
	}
	if pausedAt == nil || !pausedAt.Before(now) {
		return s.restart(ctx, tx, ev, rule, now)
	}
	from := now.Add(-s.opts.Window.CatchUp)
	if pausedAt.After(from) {
		from = *pausedAt
	}
	from = from.UTC()
	if err := tx.Reposition(ctx, ev.ID, &from); err != nil {
		return err
	}
	ev.ExpandedUntil = &from
	series, err := s.plan.Series(ctx, tx, ev, rule, from, now)
	if err != nil {
		return err
	}
	if policy != model.PauseFire {
		// The pause covers [paused_at, until): a resume that runs late
		// leaves the instants after until due (catch-up decides).
		series.SkipBefore = now
		if pausedUntil != nil && pausedUntil.Before(now) {
			series.SkipBefore = *pausedUntil
		}
	}
	for range maxResumeSteps {
		if _, err := s.plan.expand(ctx, tx, ev, series, now); err != nil {
			return err
		}
		if ev.Status != model.EventActive || !ev.ExpandedUntil.Before(now) {
			return nil
		}
	}
	return s.restart(ctx, tx, ev, rule, now)
}

// restart moves the cursor to now and plans from there.
func (s *Service) restart(ctx context.Context, tx *repository.Store, ev *model.Event, rule *recurrence.Rule, now time.Time) error {
	start := now.UTC()
	if err := tx.Reposition(ctx, ev.ID, &start); err != nil {
		return err
	}
	ev.ExpandedUntil = &start
	_, err := s.plan.Expand(ctx, tx, ev, rule, now)
	return err
}

// Delete soft-deletes the event and cancels what it had not fired yet; its
// history stays readable. With a precondition the delete is fenced by the
// version it checked.
func (s *Service) Delete(ctx context.Context, p auth.Principal, id string, check events.Precondition) error {
	ev, err := s.modifiable(ctx, p, id, check)
	if err != nil {
		return err
	}
	var version int64
	if check != nil {
		version = ev.Version
	}
	now := s.now()
	return s.store.WithTx(ctx, func(tx *repository.Store) error { return s.deleteIn(ctx, tx, p, &ev, version, now) })
}

// deleteIn soft-deletes ev inside tx (fenced by version unless 0), cancels
// what it had not fired yet and records it.
func (s *Service) deleteIn(ctx context.Context, tx *repository.Store, p auth.Principal, ev *model.Event, version int64,
	now time.Time) error {
	if err := tx.DeleteEvent(ctx, ev.ID, version, now); err != nil {
		return err
	}
	if _, err := tx.CancelPendingOccurrences(ctx, ev.ID, time.Time{}, false, model.ReasonEventDeleted, now); err != nil {
		return err
	}
	return s.record(ctx, tx, p, ev.ID, model.HistoryDelete, "", statusChange(ev.Status, model.EventDeleted))
}

// Trigger fires one occurrence now: marked manual, not counted toward
// COUNT, allowed while paused.
func (s *Service) Trigger(ctx context.Context, p auth.Principal, id string, o events.Once) (events.Answer, error) {
	ev, err := s.modifiable(ctx, p, id, nil)
	if err != nil {
		return events.Answer{}, err
	}
	now := s.now()
	var occ model.Occurrence
	ans, err := s.once(ctx, o, func(store *repository.Store) (any, error) {
		return &occ, store.WithTx(ctx, func(tx *repository.Store) error {
			var err error
			occ, err = s.triggerIn(ctx, tx, p, ev.ID, now)
			return err
		})
	})
	if err == nil && !ans.Replayed {
		s.wake(ctx, &occ.ScheduledAt)
	}
	return ans, err
}

// triggerIn inserts the manual occurrence at now (rounded up, stepping past
// a scheduled instant on the same microsecond) and records it.
func (s *Service) triggerIn(ctx context.Context, tx *repository.Store, p auth.Principal, eventID string, now time.Time) (model.Occurrence, error) {
	ev := model.Event{ID: eventID}
	{
		at := model.RoundUp(now)
		// A scheduled instant may already hold this microsecond: step past it.
		for range 16 {
			n, err := tx.InsertOccurrences(ctx, ev.ID, []time.Time{at}, true, now)
			if err != nil {
				return model.Occurrence{}, err
			}
			if n == 1 {
				break
			}
			at = at.Add(time.Microsecond)
		}
		end := at.Add(time.Microsecond)
		rows, err := tx.ListOccurrences(ctx, model.OccurrenceFilter{EventID: ev.ID, From: &at, To: &end,
			Unrestricted: true, Limit: 1})
		if err != nil {
			return model.Occurrence{}, err
		}
		if len(rows) != 1 || !rows[0].Manual {
			return model.Occurrence{}, &input.Error{Status: http.StatusConflict, Message: "could not schedule a manual occurrence; retry"}
		}
		return rows[0], s.record(ctx, tx, p, ev.ID, model.HistoryTrigger, "", events.OccurrenceChanges(nil, &rows[0]))
	}
}

// RotateSecret issues a new signing secret, returned once in plaintext; the
// secret in force until now — the event's own or the default — keeps
// signing beside it until grace ends.
func (s *Service) RotateSecret(ctx context.Context, p auth.Principal, id string, grace time.Duration) (secret string, ev model.Event, err error) {
	if ev, err = s.modifiable(ctx, p, id, nil); err != nil {
		return "", ev, err
	}
	if secret, err = secrets.GenerateSecret(); err != nil {
		return "", ev, err
	}
	sealed, err := s.secrets.Seal([]byte(secret))
	if err != nil {
		return "", ev, err
	}
	now := s.now().UTC()
	version, before := ev.Version, ev
	// An event without a secret of its own signed with hmac.default_secret:
	// the rotation records that (an empty previous secret with an expiry,
	// see secrets.Sealed) and the default keeps signing through the grace.
	next := secrets.Sealed{Current: ev.HMACSecret}.Rotate(sealed, now, grace)
	ev.HMACSecret, ev.PreviousSecret, ev.PreviousSecretExpires = next.Current, next.Previous, next.PreviousUntil
	ev.UpdatedAt = now
	err = s.store.WithTx(ctx, func(tx *repository.Store) error {
		if err := tx.UpdateEvent(ctx, &ev, version); err != nil {
			return err
		}
		return s.record(ctx, tx, p, ev.ID, model.HistoryRotateSecret, "", events.Diff(s.redact, &before, &ev))
	})
	if err != nil {
		return "", model.Event{}, err
	}
	return secret, ev, nil
}

// Replan re-plans the future occurrences of an active event after something
// its plan depends on changed (a calendar it honours was edited): its future
// rows are decided afresh, keeping the ids of instants still planned. An
// event that is not active has nothing to re-plan; a concurrent edit
// re-planned it already.
func (s *Service) Replan(ctx context.Context, eventID string) error {
	ev, err := s.store.GetEvent(ctx, eventID)
	if errors.Is(err, model.ErrNotFound) {
		return nil
	}
	if err != nil || ev.Status != model.EventActive {
		return err
	}
	rule, err := ev.Compile(s.opts.Recurrence)
	if err != nil {
		return fmt.Errorf("compile schedule of event %s: %w", ev.ID, err)
	}
	now := s.now()
	err = s.store.WithTx(ctx, func(tx *repository.Store) error {
		if _, err := tx.CancelFutureOccurrences(ctx, ev.ID, now, true, model.ReasonRuleChanged, now); err != nil {
			return err
		}
		if err := s.restart(ctx, tx, &ev, rule, now); err != nil {
			return err
		}
		return s.record(ctx, tx, schedulerPrincipal, ev.ID, model.HistoryCalendarReplan, "", nil)
	})
	if errors.Is(err, model.ErrStaleVersion) {
		return nil
	}
	if err == nil {
		s.wake(ctx, ev.NextRunAt)
	}
	return err
}

// mayTag refuses, with a 403 naming tags, tags a resource of the
// principal's may not carry (outside its scope).
func mayTag(p auth.Principal, tags []string) error {
	if err := p.CanCreate(tags); err != nil {
		return &input.Error{Status: http.StatusForbidden, Message: err.Error(), Field: "tags"}
	}
	return nil
}
