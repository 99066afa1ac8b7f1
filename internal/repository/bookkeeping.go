package repository

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/qhronos/qhronos/internal/model"
)

// Event bookkeeping (last_run_at, last_status, next_run_at, and settling a
// finished series to inactive) is written off the outcome's transaction:
// the dispatcher notes each applied outcome's Run, coalesces them per event
// and writes them every short interval with NoteEventRuns, one statement per
// chunk of events, however many deliveries each had. Deriving the fields on
// read was the alternative; it was not taken because last_run_at and
// last_status would need a lookup of the newest attempt per listed event,
// across every time partition of attempts on PostgreSQL (no index leads with
// event_id there), which grows with history (invariant 11), and because
// "inactive" is a status users filter lists by, which must be stored.
//
// A crash between an outcome's commit and the flush forgets its Run;
// RepairEventRuns, run by the rescuer, finds such events from the
// occurrences that finished in a time window and writes their Run again.

// EventRun is the effect of recorded outcomes on one event's bookkeeping.
type EventRun struct {
	EventID string
	// RanAt, when set, is the start of the event's newest attempt: its
	// last_run_at, with LastStatus as its last_status. Unset for an outcome
	// made without an attempt that does not count as a run (missed,
	// cancelled): the event's next_run_at and status still follow.
	RanAt      *time.Time
	LastStatus string
	// Now is when the outcome was recorded: next_run_at values before it
	// are stale, and a settled event's updated_at.
	Now time.Time
	// EndsOneTime says the run ended a one-time event's only scheduled
	// occurrence. Such a run is not written (the bookkeeper drops it):
	// readers derive the event's end from the occurrence (EventEnds), which
	// spares a burst of one-time events a row write per delivery.
	EndsOneTime bool
}

// Run is the bookkeeping effect of an applied outcome record (its EventID
// must be set).
func (r *OutcomeRecord) Run() EventRun {
	run := EventRun{EventID: r.EventID, Now: r.Now}
	if r.Ran {
		at := r.Now
		if r.Attempt != nil {
			at = r.Attempt.StartedAt
		}
		run.RanAt, run.LastStatus = &at, r.LastStatus
		if r.PauseReason != "" {
			run.LastStatus = r.PauseReason
		}
	}
	if r.WholeSeries && r.Status.Terminal() && r.PauseReason == "" {
		run.EndsOneTime = true
	}
	return run
}

// Merge folds a later-noted effect on the same event into run: the newest
// attempt wins (the one with the later RanAt, a tie going to next), an
// effect without an attempt keeps the run known so far, and Now is the
// latest seen.
func (run EventRun) Merge(next EventRun) EventRun {
	out := run
	if next.RanAt != nil && (run.RanAt == nil || !next.RanAt.Before(*run.RanAt)) {
		out.RanAt, out.LastStatus = next.RanAt, next.LastStatus
	}
	if next.Now.After(out.Now) {
		out.Now = next.Now
	}
	out.EndsOneTime = out.EndsOneTime || next.EndsOneTime
	return out
}

// NoteEventRuns writes the runs (at most one per event: Merge them first)
// to their events: last_run_at and last_status unless the event already
// records a newer attempt (runs may arrive late and out of order, from
// several instances or from a repair), next_run_at as the earliest waiting
// occurrence, or with none waiting a future value the expander computed
// beyond its window (a stale one is dropped), and the status inactive with
// version+1 when the series is over and its last non-manual occurrence has
// finished. One statement per chunk of 500 events, each its own
// transaction; no row locks taken beforehand.
//
// Without the lock the old in-transaction write took, two instances that
// record the last two outcomes of a series at once still settle it: each
// notes its runs after its outcome committed, so the statement of whichever
// committed last starts with both outcomes visible. The rescuer's sweep
// (SettleEndedEvents) catches what is left anyway.
func (s *Store) NoteEventRuns(ctx context.Context, runs []EventRun) error {
	sorted := append([]EventRun(nil), runs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].EventID < sorted[j].EventID })
	start := 0
	for _, size := range s.batchSizes(len(sorted), 256, 500) { // 4 parameters a row, or 4 arrays
		chunk := sorted[start : start+size]
		start += size
		if err := s.ByKey(ctx, func(tx *Store) error { return tx.noteEventRuns(ctx, chunk) }); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) noteEventRuns(ctx context.Context, chunk []EventRun) error {
	var runs string
	var args []any
	if s.d.backend == Postgres {
		// One array per column: the same text for every batch, parsed once
		// per connection (see outcomeArrays).
		ids, ran, status, now := make([]string, len(chunk)), make([]*time.Time, len(chunk)),
			make([]*string, len(chunk)), make([]time.Time, len(chunk))
		for k, r := range chunk {
			ids[k], ran[k], now[k] = r.EventID, utcp(r.RanAt), r.Now.UTC()
			if r.RanAt != nil {
				status[k] = &chunk[k].LastStatus
			}
		}
		runs = `v AS (SELECT * FROM unnest(?::uuid[], ?::timestamptz[], ?::text[], ?::timestamptz[])
			AS u(id, last_run_at, last_status, now))`
		args = []any{uuidArray(ids), pgArray(ran), pgArray(status), now}
	} else {
		var sb strings.Builder
		for k, r := range chunk {
			var status *string
			if r.RanAt != nil {
				status = &chunk[k].LastStatus
			}
			if k > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString(s.d.typedRow("uuid", "timestamptz", "text", "timestamptz"))
			args = append(args, r.EventID, s.tsp(r.RanAt), status, s.ts(r.Now))
		}
		runs = `v(id, last_run_at, last_status, now) AS (VALUES ` + sb.String() + `)`
	}
	args = append(args, s.ts(model.SeriesEnd), false)
	// OFFSET 0 keeps PostgreSQL from pulling the sub-select x into each of
	// the four columns that read it: "ended" is one probe per row, not four.
	fence := ""
	if s.d.backend == Postgres {
		fence = " OFFSET 0"
	}
	// A run older than the event's last_run_at keeps what is there.
	const older = `(v.last_run_at IS NULL OR (events.last_run_at IS NOT NULL AND v.last_run_at < events.last_run_at))`
	// The sub-select decides "ended" once per row, on the row version the
	// update applies to. PostgreSQL runs it planned by key (ByKey): a probe
	// of the primary key per VALUES row. SQLite gets the id list beside
	// the join, which lets its planner find the rows by key. (On PostgreSQL
	// the list made the key scan drive the join and compare every row with
	// every VALUES row.)
	q := `WITH ` + runs + statusSQL(`
		UPDATE events SET
			last_run_at = CASE WHEN `+older+` THEN events.last_run_at ELSE v.last_run_at END,
			last_status = CASE WHEN `+older+` THEN events.last_status
				WHEN v.last_status = `+quote(string(model.OccurrenceAwaitingAck))+` THEN `+ackedStatusSQL+`
				WHEN v.last_status LIKE `+quote(string(model.OccurrenceRunning)+"%")+` THEN `+runningStatusSQL+`
				ELSE v.last_status END,
			(status, next_run_at, updated_at, version) = (SELECT
				CASE WHEN x.ended THEN {inactive} ELSE events.status END,
				CASE WHEN x.ended THEN NULL ELSE COALESCE(
					(SELECT MIN(o.next_attempt_at) FROM queued_occurrences o
						WHERE o.event_id = events.id AND o.status IN {waiting}),
					CASE WHEN events.status = {active} AND events.next_run_at > v.now THEN events.next_run_at END)
				END,
				CASE WHEN x.ended THEN v.now ELSE events.updated_at END,
				events.version + CASE WHEN x.ended THEN 1 ELSE 0 END
			FROM (SELECT `) + settleEventsWhere + ` AS ended` + fence + `) x)
		FROM v WHERE events.id = v.id`
	if s.d.backend != Postgres {
		q += ` AND events.id IN (` + placeholders(len(chunk)) + `)`
		for _, r := range chunk {
			args = append(args, r.EventID)
		}
	}
	if _, err := s.execHot(ctx, q, args...); err != nil {
		return fmt.Errorf("note event runs: %w", err)
	}
	return nil
}

// RepairEventRuns rewrites the bookkeeping of events whose runs a crash
// may have forgotten: it reads the occurrences that finished in [from, to)
// (by their attempts' start, or when they ended otherwise
// than completed), at most limit, oldest first, keeps those whose event does
// not show them — last_run_at before the occurrence's first attempt, or an
// active event whose next_run_at is not after the moment it finished — and
// writes those events' Runs again with NoteEventRuns, rebuilt from each
// occurrence's newest attempt (looked up in its own time partition). A
// one-time event's scheduled occurrence is left out: its end is never
// written, readers derive it (EventEnds).
//
// The read is two index ranges (attempts_by_time, occurrence_ends) and a
// key lookup per row, over a window the caller moves forward (the
// rescuer: every run, up to a few seconds ago); writes happen only for events that need them,
// normally none, since the bookkeeper wrote them long before. It returns
// how many events it wrote and where the next call should start: to when
// the window was read to its end, else the last instant read.
func (s *Store) RepairEventRuns(ctx context.Context, from, to time.Time, limit int) (int, time.Time, error) {
	var rows []finishedOccurrence
	// Occurrences keep no index on when they finished (an outcome's update
	// stays in place only so, 0036): a delivered row is found by its
	// attempts (attempts_by_time), one that ended otherwise by its mirror
	// in occurrence_ends.
	instant := ""
	if s.d.backend == Postgres {
		instant = ` AND o.scheduled_at = a.scheduled_at` // each row in its own slice
	}
	const forgotten = `e.deleted_at IS NULL
		AND NOT (NOT o.manual AND e.rrule IS NULL AND e.schedule IS NULL AND e.cron IS NULL
			AND e.expanded_until IS NOT NULL AND e.expanded_until >= ?)
		AND ((o.started_at IS NOT NULL AND (e.last_run_at IS NULL OR e.last_run_at < o.started_at))
			OR (e.status = {active} AND e.next_run_at IS NOT NULL AND e.next_run_at <= o.updated_at))`
	err := s.selectAll(ctx, &rows, statusSQL(`SELECT o.id, o.event_id, o.scheduled_at, o.updated_at, a.started_at AS at,
		o.started_at IS NOT NULL AS started
		FROM attempts a JOIN occurrences o ON o.id = a.occurrence_id`+instant+` JOIN events e ON e.id = o.event_id
		WHERE a.started_at >= ? AND a.started_at < ? AND o.status IN {finished} AND `+forgotten+`
		UNION ALL
		SELECT o.id, o.event_id, o.scheduled_at, o.updated_at, o.updated_at AS at, o.started_at IS NOT NULL AS started
		FROM ended_occurrences o JOIN events e ON e.id = o.event_id
		WHERE o.updated_at >= ? AND o.updated_at < ? AND `+forgotten+`
		ORDER BY at LIMIT ?`), s.ts(from), s.ts(to), s.ts(model.SeriesEnd), s.ts(from), s.ts(to),
		s.ts(model.SeriesEnd), limit)
	if err != nil {
		return 0, from, fmt.Errorf("find forgotten event runs: %w", err)
	}
	next := to
	if len(rows) == limit && limit > 0 {
		next = rows[len(rows)-1].At.UTC()
		if !next.After(from) {
			next = from.Add(time.Microsecond) // a page of one instant: move on
		}
	}
	runs, err := s.runsOf(ctx, rows, "attempts")
	if err != nil {
		return 0, from, err
	}
	list := make([]EventRun, 0, len(runs))
	for _, r := range runs {
		list = append(list, r)
	}
	if err := s.NoteEventRuns(ctx, list); err != nil {
		return 0, from, err
	}
	return len(list), next, nil
}

// finishedOccurrence is a finished occurrence as runsOf reads it.
type finishedOccurrence struct {
	ID          string    `db:"id"`
	EventID     string    `db:"event_id"`
	ScheduledAt time.Time `db:"scheduled_at"`
	UpdatedAt   time.Time `db:"updated_at"`
	At          time.Time `db:"at"`
	Started     bool      `db:"started"`
}

// runsOf rebuilds the Runs of finished occurrences, merged per event: each
// from its newest attempt, read from attempts (the live table, or
// attempts_archive) in the occurrence's own time partition; an occurrence
// never attempted counts for its event's end, not as a run.
func (s *Store) runsOf(ctx context.Context, occs []finishedOccurrence, attempts string) (map[string]EventRun, error) {
	last, err := s.newestAttempts(ctx, occs, attempts)
	if err != nil {
		return nil, err
	}
	runs := map[string]EventRun{}
	for _, o := range occs {
		run := EventRun{EventID: o.EventID, Now: o.UpdatedAt.UTC()}
		if a, ok := last[o.ID]; ok && o.Started {
			code, msg := 0, ""
			if a.StatusCode != nil {
				code = *a.StatusCode
			}
			if a.Error != nil {
				msg = *a.Error
			}
			at := a.StartedAt.UTC()
			run.RanAt, run.LastStatus = &at, model.RunStatus(a.Outcome, code, msg)
		}
		if prev, ok := runs[o.EventID]; ok {
			run = prev.Merge(run)
		}
		runs[o.EventID] = run
	}
	return runs, nil
}

// lastAttempt is what an event's run shows of an attempt.
type lastAttempt struct {
	OccurrenceID string    `db:"occurrence_id"`
	Attempt      int       `db:"attempt"`
	StartedAt    time.Time `db:"started_at"`
	Outcome      string    `db:"outcome"`
	StatusCode   *int      `db:"status_code"`
	Error        *string   `db:"error"`
}

// newestAttempts reads the newest attempt of each started occurrence, by
// (occurrence, instant) so that PostgreSQL looks in each one's own time
// partition only: one statement per 200 occurrences.
func (s *Store) newestAttempts(ctx context.Context, occs []finishedOccurrence, attempts string) (map[string]lastAttempt, error) {
	var started []finishedOccurrence
	for _, o := range occs {
		if o.Started {
			started = append(started, o)
		}
	}
	out := make(map[string]lastAttempt, len(started))
	for start := 0; start < len(started); start += 200 {
		chunk := started[start:min(start+200, len(started))]
		var q string
		var args []any
		if s.d.backend == Postgres {
			// A join on arrays: a probe per pair, also planned by key.
			ids, at := make([]string, len(chunk)), make([]time.Time, len(chunk))
			for k, o := range chunk {
				ids[k], at[k] = o.ID, o.ScheduledAt.UTC()
			}
			q = `SELECT a.occurrence_id, a.attempt, a.started_at, a.outcome, a.status_code, a.error
				FROM unnest(?::uuid[], ?::timestamptz[]) AS k(id, at)
				JOIN ` + attempts + ` a ON a.occurrence_id = k.id AND a.scheduled_at = k.at`
			args = []any{uuidArray(ids), at}
		} else {
			for _, o := range chunk {
				args = append(args, o.ID, s.ts(o.ScheduledAt))
			}
			q = `SELECT occurrence_id, attempt, started_at, outcome, status_code, error FROM ` + attempts +
				` WHERE (occurrence_id, scheduled_at) IN (` + strings.TrimSuffix(strings.Repeat("(?, ?), ", len(chunk)), ", ") + `)`
		}
		var rows []lastAttempt
		err := s.selectAll(ctx, &rows, q, args...)
		if err != nil {
			return nil, fmt.Errorf("read last attempts: %w", err)
		}
		for _, a := range rows {
			if prev, ok := out[a.OccurrenceID]; !ok || a.Attempt > prev.Attempt {
				out[a.OccurrenceID] = a
			}
		}
	}
	return out, nil
}
