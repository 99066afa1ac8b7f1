package repository

import (
	"context"
	"fmt"
	"strings"

	"github.com/qhronos/qhronos/internal/model"
)

// A one-time event's end is read, not written. The outcome that finishes
// its only scheduled occurrence leaves the event row as it was (active,
// next_run_at at the instant): the bookkeeper drops that run
// (EventRun.EndsOneTime), which spares a burst of one-time events one row
// write per delivery, about a sixth of the database's time (BENCHMARKS.md,
// "#36"). Every read of an event then derives the end the write used to
// store (EventEnds): an active one-time event, expanded to the end of its
// series, with no unfinished scheduled occurrence in the queue, reads as
// inactive, without next_run_at, with the last run of its occurrence. The
// test is one probe of the queue's event index; the last run a probe of the
// occurrences' event index per time partition and one of the attempts per
// occurrence found, only for such events.
//
// The status filters of lists use the same test (oneTimeEndedSQL), the
// ended-series sweep and the rescuer's repair leave these events alone,
// and the archiver writes the derived end into the row it archives
// (ArchiveEvents). Any other write of the event (an edit, a pause, a
// manual run's bookkeeping) stores what it read, the derived end included.
// The event's version does not move when it ends so: a version is the
// token of a change made through the API.

// oneTimeEndedSQL holds for a live event of the alias e, stored active, that
// is one-time and whose series is over: expanded to the end, with no
// unfinished scheduled occurrence. One argument: model.SeriesEnd. Never
// NULL (expanded_until may be), so that NOT of it is its complement.
var oneTimeEndedSQL = statusSQL(`(e.status = {active} AND e.deleted_at IS NULL
	AND e.rrule IS NULL AND e.schedule IS NULL AND e.cron IS NULL
	AND e.expanded_until IS NOT NULL AND e.expanded_until >= ?
	AND NOT EXISTS (SELECT 1 FROM queued_occurrences q WHERE q.event_id = e.id AND NOT q.manual
		AND q.status IN {unfinished}))`)

// endsOnRead reports whether ev, as stored, may be a one-time event that
// ended without its end written: what EventEnds looks at.
func endsOnRead(ev *model.Event) bool {
	return ev.Status == model.EventActive && ev.DeletedAt == nil && ev.OneTime() &&
		ev.ExpandedUntil != nil && !ev.ExpandedUntil.Before(model.SeriesEnd)
}

// EventEnds derives, in place, the end of the one-time events among evs
// that ended without it written: status inactive, no next_run_at,
// last_run_at and last_status from their occurrence's newest attempt when
// newer than what the row holds, updated_at when the occurrence finished.
// Events read by the API and by the lifecycle go through it; the hot path's
// EventsByID does not (a one-time event that ended has nothing due).
func (s *Store) EventEnds(ctx context.Context, evs []model.Event) error {
	var ids []string
	at := map[string]int{}
	for i := range evs {
		if endsOnRead(&evs[i]) {
			ids = append(ids, evs[i].ID)
			at[evs[i].ID] = i
		}
	}
	if len(ids) == 0 {
		return nil
	}
	// Planned by key (index probes): on a fresh burst's statistics the
	// planner scanned whole slices of occurrences and attempts for a page
	// of 500 events (120 ms where the probes take a few). Not inside a
	// caller's transaction (the lifecycle reads one event there): the
	// settings would hold for the rest of it.
	if s.inTx() {
		return s.eventEnds(ctx, evs, ids, at)
	}
	return s.ByKey(ctx, func(tx *Store) error { return tx.eventEnds(ctx, evs, ids, at) })
}

func (s *Store) eventEnds(ctx context.Context, evs []model.Event, ids []string, at map[string]int) error {
	var waiting []string
	in, args := s.idIn("event_id", ids)
	err := s.selectAll(ctx, &waiting, statusSQL(`SELECT DISTINCT event_id FROM queued_occurrences
		WHERE `+in+` AND NOT manual AND status IN {unfinished}`), args...)
	if err != nil {
		return fmt.Errorf("read unfinished occurrences: %w", err)
	}
	for _, id := range waiting {
		delete(at, id)
	}
	if len(at) == 0 {
		return nil
	}
	ended := make([]string, 0, len(at))
	for id := range at {
		ended = append(ended, id)
	}
	runs, err := s.scheduledRuns(ctx, ended, "")
	if err != nil {
		return err
	}
	for _, id := range ended {
		ev := &evs[at[id]]
		ev.Status, ev.NextRunAt = model.EventInactive, nil
		if run, ok := runs[id]; ok {
			run.apply(ev)
		}
	}
	return nil
}

// scheduledRuns is the Run of each of the events' scheduled occurrences,
// merged per event, from the live history (suffix "") or the archive
// ("_archive"). Every scheduled occurrence an event ever had counts (an
// edit may have moved it, a calendar or an exception put it before its
// start): the newest attempt among them is its last run. One probe of the
// event index per time partition.
func (s *Store) scheduledRuns(ctx context.Context, eventIDs []string, suffix string) (map[string]EventRun, error) {
	var occs []finishedOccurrence
	in, args := s.idIn("event_id", eventIDs)
	err := s.selectAll(ctx, &occs, `SELECT id, event_id, scheduled_at, updated_at, updated_at AS at,
		started_at IS NOT NULL AS started FROM occurrences`+suffix+` WHERE `+in+` AND NOT manual`, args...)
	if err != nil {
		return nil, fmt.Errorf("read scheduled occurrences: %w", err)
	}
	return s.runsOf(ctx, occs, "attempts"+suffix)
}

// apply sets on ev what NoteEventRuns would write for run's attempt, when
// newer than the event's last run (the same attempt may be written already,
// with last_status completed by its acknowledgement or its run's end).
// Once the event ended, nothing awaits an acknowledgement (ackedStatusSQL),
// and a run's end wrote last_status in its own transaction
// (runningStatusSQL): that stays.
func (run EventRun) apply(ev *model.Event) {
	if run.RanAt != nil && (ev.LastRunAt == nil || run.RanAt.After(*ev.LastRunAt)) {
		at := *run.RanAt
		ev.LastRunAt = &at
		switch {
		case run.LastStatus == string(model.OccurrenceAwaitingAck):
			ev.LastStatus = string(model.OccurrenceCompleted)
		case strings.HasPrefix(run.LastStatus, string(model.OccurrenceRunning)) && ev.LastStatus != "":
		default:
			ev.LastStatus = run.LastStatus
		}
	}
	if run.Now.After(ev.UpdatedAt) {
		ev.UpdatedAt = run.Now
	}
}

// idIn tests column for any of ids: one array on PostgreSQL (the same text
// for any count, an index probe per id also when planned by key, where a
// list of ORs found no plan but a scan), a list on SQLite.
func (s *Store) idIn(column string, ids []string) (string, []any) {
	if s.d.backend == Postgres {
		return column + ` = ANY(?::uuid[])`, []any{uuidArray(ids)}
	}
	return column + ` IN (` + placeholders(len(ids)) + `)`, stringArgs(ids)
}
