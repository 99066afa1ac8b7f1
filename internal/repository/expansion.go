package repository

import (
	"context"
	"fmt"
	"time"

	"github.com/qhronos/qhronos/internal/model"
)

// EventsToExpand returns active events whose cursor is behind horizon (or
// that were never expanded), ordered by id after afterID, at most limit.
func (s *Store) EventsToExpand(ctx context.Context, horizon time.Time, afterID string, limit int) ([]model.Event, error) {
	q := `SELECT ` + eventColumns + statusSQL(` FROM events WHERE status = {active} AND deleted_at IS NULL
		AND (expanded_until IS NULL OR expanded_until < ?) AND id > ? ORDER BY id LIMIT ?`)
	after := afterID
	if after == "" {
		after = s.d.minUUID
	}
	var rows []eventRow
	if err := s.selectAll(ctx, &rows, q, s.ts(horizon), after, limit); err != nil {
		return nil, fmt.Errorf("list events to expand: %w", err)
	}
	return decodeEvents(rows)
}

// ExpansionUpdate is the expander's bookkeeping for one event.
type ExpansionUpdate struct {
	EventID string
	// Version fences the update: expansion computed from an older version of
	// the event (edited meanwhile) must not be kept.
	Version       int64
	ExpandedUntil time.Time
	// NextRunAt is used when no unfinished occurrence is waiting.
	NextRunAt *time.Time
	Now       time.Time
}

// ExpansionResult reports what SetExpansion changed.
type ExpansionResult struct {
	NextRunAt *time.Time
	// Inactive is set when the series ended and nothing is left to fire, so
	// the event was settled to inactive (its version bumped).
	Inactive bool
}

// SetExpansion moves an event's cursor and next_run_at, and settles it to
// inactive when its series ended with nothing unfinished. It does not bump
// the version (these fields are read-only bookkeeping) unless the status
// changes. ErrStaleVersion when the event changed since it was read.
func (s *Store) SetExpansion(ctx context.Context, u ExpansionUpdate) (ExpansionResult, error) {
	var res ExpansionResult
	err := s.WithTx(ctx, func(tx *Store) error {
		next, err := tx.nextPending(ctx, u.EventID)
		if err != nil {
			return err
		}
		if next == nil {
			next = u.NextRunAt
		}
		r, err := tx.exec(ctx, statusSQL(`UPDATE events SET expanded_until = ?, next_run_at = ?
			WHERE id = ? AND version = ? AND status = {active} AND deleted_at IS NULL`),
			tx.ts(u.ExpandedUntil), tx.tsp(next), u.EventID, u.Version)
		if err != nil {
			return fmt.Errorf("set expansion cursor: %w", err)
		}
		if n, _ := r.RowsAffected(); n != 1 {
			return model.ErrStaleVersion
		}
		res.NextRunAt = utcp(next)
		if !u.ExpandedUntil.Equal(model.SeriesEnd) {
			return nil // the series goes on: nothing to settle
		}
		settled, err := tx.settleEvents(ctx, []string{u.EventID}, u.Now)
		if err != nil {
			return err
		}
		res.Inactive = settled > 0
		if res.Inactive {
			res.NextRunAt = nil
		}
		return nil
	})
	return res, err
}

// nextPending is the earliest instant at which an occurrence of the event is
// waiting to be attempted.
func (s *Store) nextPending(ctx context.Context, eventID string) (*time.Time, error) {
	var rows []time.Time
	err := s.selectAll(ctx, &rows, statusSQL(`SELECT next_attempt_at FROM queued_occurrences WHERE event_id = ?
		AND status IN {waiting} ORDER BY next_attempt_at LIMIT 1`), eventID)
	if err != nil {
		return nil, fmt.Errorf("next pending occurrence: %w", err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	t := rows[0].UTC()
	return &t, nil
}

// settleEventsWhere selects active events whose series ended (cursor at
// model.SeriesEnd) and that have no unfinished, non-manual occurrence.
var settleEventsWhere = settleEventsHead + ` AND ` + noUnfinishedOccurrences

// settleEventsHead is settleEventsWhere's test of the event row itself;
// noUnfinishedOccurrences its look for a non-manual occurrence still to
// finish (one argument: false).
var (
	settleEventsHead        = statusSQL(`status = {active} AND deleted_at IS NULL AND expanded_until >= ?`)
	noUnfinishedOccurrences = statusSQL(`NOT EXISTS (SELECT 1 FROM queued_occurrences o WHERE o.event_id = events.id
		AND o.manual = ? AND o.status IN {unfinished})`)
)

// settleEvents marks the given events inactive when their series is over.
func (s *Store) settleEvents(ctx context.Context, ids []string, now time.Time) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	return s.settle(ctx, now, `id IN (`+placeholders(len(ids))+`)`, "", stringArgs(ids)...)
}

// settle marks inactive the events that match where (with args) and whose
// series is over. lock ends the pick of those rows: "" waits for a row
// another transaction writes, s.d.skipLocked passes over it.
func (s *Store) settle(ctx context.Context, now time.Time, where, lock string, args ...any) (int, error) {
	r, err := s.exec(ctx, `UPDATE events SET status = ?, next_run_at = NULL, updated_at = ?, version = version + 1
		WHERE id IN (SELECT id FROM events WHERE `+settleEventsWhere+` AND `+where+lock+`)`,
		append([]any{model.EventInactive, s.ts(now), s.ts(model.SeriesEnd), false}, args...)...)
	if err != nil {
		return 0, fmt.Errorf("settle ended events: %w", err)
	}
	n, _ := r.RowsAffected()
	return int(n), nil
}

// SettleEndedEvents examines up to scan active recurring events whose
// series ended, in id order after the cursor after ("" = from the start),
// and marks inactive those whose occurrences are all terminal: a sweep that
// catches series finished by an acknowledgement, a callback or a rescue. It
// returns how many it settled and the cursor to pass next ("" once the end
// was reached). A page read in order along events_series_ended, not the
// whole table: with a million one-time events waiting to fire, testing them
// all every few seconds cost a core.
//
// Only events with no next run, or one due before settled, are looked at.
// One due later is still to fire (a control that ends a future occurrence
// re-plans its event, which settles it), or fired moments ago, and the
// bookkeeper that notes its run settles it in that same write
// (NoteEventRuns): settling it here raced that write, and in a steady
// 4,000/s stream of one-time events the sweep settled 3,000–8,000 events a
// minute that the bookkeeper then wrote again, and probed every waiting
// event's occurrences in every time slice (#36, thirty-second step). A
// later pass catches what the bookkeeper leaves.
//
// One-time events are never settled here: their end is derived on read
// (EventEnds), and writing it would cost the row write per delivery that
// derivation saves. They are not in the index either, however many the
// retention keeps.
func (s *Store) SettleEndedEvents(ctx context.Context, now, settled time.Time, after string, scan int) (int, string, error) {
	var page []string
	err := s.selectAll(ctx, &page, `SELECT id FROM events WHERE `+s.seriesEndedSQL()+` AND deleted_at IS NULL
		AND id > ? ORDER BY id LIMIT ?`, s.afterID(after), scan)
	if err != nil {
		return 0, "", fmt.Errorf("find ended events: %w", err)
	}
	if len(page) == 0 {
		return 0, "", nil
	}
	last, next := page[len(page)-1], ""
	if len(page) == scan {
		next = last
	}
	// The page is settled as the range of events_series_ended it was read
	// from, not as a list of its ids: a thousand ids, planned on a fresh
	// burst's statistics, became a filter compared with every active event
	// (350 ms a page). An event of the page the hot path is writing (its
	// delivery's bookkeeping) is busy, not over: skipped, not waited for.
	// Waiting held the sweep's locks on the rest of the page, and the
	// bookkeeping behind them, for hundreds of milliseconds in a burst (#36,
	// thirteenth step); the next pass looks again.
	n, err := s.settle(ctx, now, s.seriesEndedSQL()+` AND id > ? AND id <= ?
		AND (next_run_at IS NULL OR next_run_at < ?)`, s.d.skipLocked,
		s.afterID(after), last, s.ts(settled))
	return n, next, err
}

// seriesEndedSQL is the predicate of the partial index events_series_ended
// (migration 0038), written as it is there, with model.SeriesEnd as a
// literal: a planner uses a partial index only for a query that names its
// predicate, and a bound argument names nothing.
func (s *Store) seriesEndedSQL() string { return seriesEndedSQL(s.d.backend) }

func seriesEndedSQL(b Backend) string {
	end := model.SeriesEnd.Format(`'2006-01-02 15:04:05+00'`)
	if b != Postgres {
		end = `'` + model.SeriesEnd.Format(instantLayout) + `'`
	}
	return `status = 'active' AND expanded_until = ` + end + ` AND ` + recurringSQL
}

// Reposition sets an event's expander cursor without a version check (pause,
// resume and edits run it inside the transaction that changed the event).
func (s *Store) Reposition(ctx context.Context, eventID string, cursor *time.Time) error {
	if _, err := s.exec(ctx, `UPDATE events SET expanded_until = ? WHERE id = ?`, s.tsp(cursor), eventID); err != nil {
		return fmt.Errorf("reposition expansion cursor: %w", err)
	}
	return nil
}

// ClearNextRun forgets an event's next_run_at (it is paused).
func (s *Store) ClearNextRun(ctx context.Context, eventID string) error {
	if _, err := s.exec(ctx, `UPDATE events SET next_run_at = NULL WHERE id = ?`, eventID); err != nil {
		return fmt.Errorf("clear next run: %w", err)
	}
	return nil
}

// LatestOverdue returns, per event, the newest scheduled instant of its
// unfinished non-manual occurrences scheduled at or before cutoff (the one
// a catch_up=latest event still fires).
func (s *Store) LatestOverdue(ctx context.Context, eventIDs []string, cutoff time.Time) (map[string]time.Time, error) {
	out := map[string]time.Time{}
	for _, id := range dedupe(eventIDs) {
		var rows []time.Time
		err := s.selectAll(ctx, &rows, statusSQL(`SELECT scheduled_at FROM queued_occurrences WHERE event_id = ? AND manual = ?
			AND status IN {unfinished} AND scheduled_at <= ? ORDER BY scheduled_at DESC LIMIT 1`),
			id, false, s.ts(cutoff))
		if err != nil {
			return nil, fmt.Errorf("latest overdue occurrence: %w", err)
		}
		if len(rows) == 1 {
			out[id] = rows[0].UTC()
		}
	}
	return out, nil
}

// PausesEnded returns up to limit paused events whose pause ends at or
// before now, the earliest first.
func (s *Store) PausesEnded(ctx context.Context, now time.Time, limit int) ([]string, error) {
	var ids []string
	err := s.selectAll(ctx, &ids, statusSQL(`SELECT id FROM events WHERE status = {paused} AND paused_until IS NOT NULL
		AND paused_until <= ? AND deleted_at IS NULL ORDER BY paused_until LIMIT ?`), s.ts(now), limit)
	if err != nil {
		return nil, fmt.Errorf("find ended pauses: %w", err)
	}
	return ids, nil
}
