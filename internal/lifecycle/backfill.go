package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/qhronos/qhronos/internal/auth"
	"github.com/qhronos/qhronos/internal/events"
	"github.com/qhronos/qhronos/internal/input"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/planner"
	"github.com/qhronos/qhronos/internal/recurrence"
	"github.com/qhronos/qhronos/internal/repository"
)

// backfillClockSlack is how far ahead of the server's clock a backfill's
// `to` may lie and still mean "now": a client that resolves "now" itself
// (the CLI, the SDKs) sends its own clock's reading, and the server's
// database-aligned clock errs low by a sync's latency (scheduler.DBClock),
// so the two differ by that plus the round trip. Such a `to` is clamped to
// the server's now; anything later is refused.
const backfillClockSlack = 5 * time.Second

// Backfill fires every reading of a recurring event's pattern in [from, to]
// (both inclusive, in the past) that has no occurrence yet: the rows are
// due now, with reason backfill (repository.InsertBackfill). The range may
// lie before the event's start_time: the pattern is evaluated as if the
// series had begun earlier, COUNT and UNTIL lifted
// (recurrence.CompileBackfill). Exceptions and calendars apply unless
// b.RespectExceptions is false; instants they skip are recorded skipped.
// A paused event is refused: its rows would not fire until it resumes.
func (s *Service) Backfill(ctx context.Context, p auth.Principal, id string, b events.Backfill) (events.BackfillResult, error) {
	ev, err := s.modifiable(ctx, p, id, nil)
	if err != nil {
		return events.BackfillResult{}, err
	}
	now := s.now()
	loc := events.Location(&ev)
	from, err := b.From.Resolve(loc, now)
	if err != nil {
		return events.BackfillResult{}, err
	}
	to, err := b.To.Resolve(loc, now)
	if err != nil {
		return events.BackfillResult{}, err
	}
	if to.After(now) && !to.After(now.Add(backfillClockSlack)) {
		to = now // "now" on the client's clock, a little ahead of ours
	}
	switch {
	case to.After(now):
		return events.BackfillResult{}, input.BadRequest("to", "is in the future: a backfill fires past instants")
	case from.After(to):
		return events.BackfillResult{}, input.BadRequest("from", "is after to")
	case ev.Status == model.EventPaused:
		return events.BackfillResult{}, &input.Error{Status: http.StatusConflict,
			Message: "the event is paused: resume it before a backfill"}
	}
	rule, err := recurrence.CompileBackfill(ev.Spec(), from, s.opts.Recurrence)
	if errors.Is(err, recurrence.ErrNoPattern) {
		return events.BackfillResult{}, &input.Error{Status: http.StatusConflict,
			Message: "a one-time event has no pattern to backfill"}
	}
	if err != nil {
		return events.BackfillResult{}, err
	}
	out := events.BackfillResult{EventID: ev.ID, From: from.UTC(), To: to.UTC()}
	err = s.store.WithTx(ctx, func(tx *repository.Store) error {
		series, err := s.plan.Series(ctx, tx, &ev, rule, from, now)
		if err != nil {
			return err
		}
		if !b.RespectExceptions {
			series.Calendars, series.Exceptions = nil, nil
		}
		series.Now = time.Time{} // a calendar may roll an instant anywhere in the past
		rows, err := series.Range(from, to, events.MaxBackfill)
		if errors.Is(err, planner.ErrTooMany) {
			return input.BadRequestf("to", "the range holds more than %d instants of the event's pattern; backfill a shorter one",
				events.MaxBackfill)
		}
		if err != nil {
			return err
		}
		n, err := tx.InsertBackfill(ctx, ev.ID, rows, now)
		if err != nil {
			return err
		}
		out.Instants, out.Created, out.Skipped, out.Existing = len(rows), n.Created, n.Skipped, n.Existing
		changes, err := json.Marshal(map[string]any{"backfill": out})
		if err != nil {
			return fmt.Errorf("encode backfill history: %w", err)
		}
		return s.record(ctx, tx, p, ev.ID, model.HistoryBackfill, "", changes)
	})
	if err != nil {
		return events.BackfillResult{}, err
	}
	if out.Created > 0 {
		due := model.RoundUp(now)
		s.wake(ctx, &due)
	}
	return out, nil
}
