package repository

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/qhronos/qhronos/internal/model"
)

const occurrenceColumns = `id, event_id, scheduled_at, status, manual, attempt_count, next_attempt_at,
	lease_token, lease_owner, lease_expires_at, status_code, response_body, error_message, started_at,
	completed_at, created_at, updated_at, manual_retry, acked_at, reason, original_scheduled_at, lapses,
	run_status, run_output, run_reported_at, heartbeat_at, fanout_json`

// occurrenceFields lists o's fields in occurrenceColumns' order
// (selectListed; TestListedFieldsAreInColumnOrder keeps the two in step).
func occurrenceFields(o *model.Occurrence, into []any) []any {
	return append(into, &o.ID, &o.EventID, &o.ScheduledAt, &o.Status, &o.Manual, &o.AttemptCount, &o.NextAttemptAt,
		&o.LeaseToken, &o.LeaseOwner, &o.LeaseExpiresAt, &o.StatusCode, &o.ResponseBody, &o.ErrorMessage, &o.StartedAt,
		&o.CompletedAt, &o.CreatedAt, &o.UpdatedAt, &o.ManualRetry, &o.AckedAt, &o.Reason, &o.OriginalScheduledAt,
		&o.Lapses, &o.RunStatus, &o.RunOutput, &o.RunReportedAt, &o.HeartbeatAt, &o.Fanout)
}

// dueColumns are the columns of an occurrence a dispatcher fires it from:
// what queued_occurrences holds (on PostgreSQL without a probe of the
// occurrence's own row; migration 0036). The rest of a row read through
// them is left zero.
const dueColumns = `id, event_id, scheduled_at, status, manual, attempt_count, next_attempt_at, lease_expires_at,
	reason, original_scheduled_at, lapses, manual_retry, fanout_json`

// dueFields lists o's fields in dueColumns' order.
func dueFields(o *model.Occurrence, into []any) []any {
	return append(into, &o.ID, &o.EventID, &o.ScheduledAt, &o.Status, &o.Manual, &o.AttemptCount, &o.NextAttemptAt,
		&o.LeaseExpiresAt, &o.Reason, &o.OriginalScheduledAt, &o.Lapses, &o.ManualRetry, &o.Fanout)
}

func normalize(o *model.Occurrence) {
	o.ScheduledAt, o.NextAttemptAt = utc(o.ScheduledAt), utc(o.NextAttemptAt)
	o.CreatedAt, o.UpdatedAt = utc(o.CreatedAt), utc(o.UpdatedAt)
	o.LeaseExpiresAt, o.StartedAt, o.CompletedAt = utcp(o.LeaseExpiresAt), utcp(o.StartedAt), utcp(o.CompletedAt)
	o.AckedAt, o.OriginalScheduledAt = utcp(o.AckedAt), utcp(o.OriginalScheduledAt)
	o.RunReportedAt, o.HeartbeatAt = utcp(o.RunReportedAt), utcp(o.HeartbeatAt)
}

func normalizeAll(os []model.Occurrence) []model.Occurrence {
	for i := range os {
		normalize(&os[i])
	}
	if os == nil {
		return []model.Occurrence{}
	}
	return os
}

// insertBatch bounds the rows of one multi-row INSERT.
const insertBatch = 500

// InsertOccurrences materializes instants of an event as pending rows (a
// manual trigger); see InsertPlanned.
func (s *Store) InsertOccurrences(ctx context.Context, eventID string, instants []time.Time, manual bool, now time.Time) (int, error) {
	rows := make([]model.Planned, len(instants))
	for i, at := range instants {
		rows[i] = model.Planned{At: at, Status: model.OccurrencePending}
	}
	return s.insertRows(ctx, eventID, rows, manual, now)
}

// InsertPlanned writes the planner's rows of an event. It is idempotent: an
// instant that already has a row is left alone, except that a cancelled or
// skipped row still ahead of now — or skipped because of a pause — takes
// the planned state, keeping its id: that is how resume, edits, unskip and
// calendar re-plans restore or skip instants. It returns how many rows were
// inserted or changed.
func (s *Store) InsertPlanned(ctx context.Context, eventID string, rows []model.Planned, now time.Time) (int, error) {
	return s.insertRows(ctx, eventID, rows, false, now)
}

func (s *Store) insertRows(ctx context.Context, eventID string, rows []model.Planned, manual bool, now time.Time) (int, error) {
	total := 0
	for start := 0; start < len(rows); start += insertBatch {
		end := min(start+insertBatch, len(rows))
		n, err := s.insertOccurrenceBatch(ctx, eventID, rows[start:end], manual, now)
		if err != nil {
			return total, err
		}
		total += n
	}
	return total, nil
}

const occurrenceInsertColumns = `id, event_id, scheduled_at, status, manual, attempt_count, next_attempt_at,
	created_at, updated_at, reason, original_scheduled_at, error_message, completed_at`

// occurrenceValues renders rows (rounded up to the stored precision) as a
// VALUES list with its arguments.
func (s *Store) occurrenceValues(eventID string, rows []model.Planned, manual bool, now time.Time) (string, []any) {
	var sb strings.Builder
	args := make([]any, 0, len(rows)*13)
	nowArg := s.ts(now)
	for i, r := range rows {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
		args = append(args, s.occurrenceRow(eventID, r, manual, nowArg)...)
	}
	return sb.String(), args
}

// plannedInstants are the instants of planned rows.
func plannedInstants(rows []model.Planned) []time.Time {
	out := make([]time.Time, len(rows))
	for i, r := range rows {
		out[i] = r.At
	}
	return out
}

// occurrenceRow is one new row's values for occurrenceInsertColumns;
// nowArg is the creation instant as s.ts encodes it.
func (s *Store) occurrenceRow(eventID string, r model.Planned, manual bool, nowArg any) []any {
	at := s.ts(model.RoundUp(r.At))
	var reason, note, done any
	if r.Status != model.OccurrencePending {
		reason, note, done = r.Reason, r.Note, nowArg
	}
	return []any{model.NewID(), eventID, at, r.Status, manual, 0, at, nowArg, nowArg,
		reason, s.tsp(r.Original), note, done}
}

// reinstatable is which existing row a planned row may overwrite (see
// InsertPlanned); its two parameters are now.
var reinstatable = statusSQL(`occurrences.manual = false AND (
	(occurrences.status = {cancelled} AND occurrences.scheduled_at >= ?)
	OR (occurrences.status = {skipped} AND (occurrences.scheduled_at >= ? OR occurrences.reason = 'paused')))`)

// insertOccurrenceBatch inserts the rows no instant holds yet, then
// reinstates the existing rows that may be (see InsertPlanned), and counts
// in the statistics the rows it finished or reopened: the new rows from
// the insert's answer, the reinstated ones from their state read (and
// locked) before the change. Rows a concurrent writer inserted meanwhile
// are committed once the insert has waited for them, so the second step
// sees them as the one upsert this replaces did.
func (s *Store) insertOccurrenceBatch(ctx context.Context, eventID string, rows []model.Planned, manual bool, now time.Time) (int, error) {
	if err := s.EnsurePartitionsFor(ctx, plannedInstants(rows), now); err != nil {
		return 0, err
	}
	total := 0
	err := s.WithTx(ctx, func(tx *Store) error {
		values, args := tx.occurrenceValues(eventID, rows, manual, now)
		var inserted []changedOccurrence
		if err := tx.selectAll(ctx, &inserted, `INSERT INTO occurrences (`+occurrenceInsertColumns+`) VALUES `+values+
			` ON CONFLICT (event_id, scheduled_at) DO NOTHING RETURNING id, event_id, scheduled_at, status, reason`,
			args...); err != nil {
			return err
		}
		var stats rollupDeltas
		done := make(map[int64]bool, len(inserted))
		for _, o := range inserted {
			done[o.At.UnixMicro()] = true
			stats.finished(eventID, "", o.At.Time, o.Status, o.Reason, 1)
		}
		total = len(inserted)
		var rest []model.Planned
		for _, r := range rows {
			if !done[model.RoundUp(r.At).UnixMicro()] {
				rest = append(rest, r)
			}
		}
		reinstated, err := tx.reinstate(ctx, eventID, rest, manual, now)
		if err != nil {
			return err
		}
		for _, o := range reinstated {
			stats.changed(o)
		}
		total += len(reinstated)
		return tx.addRollups(ctx, &stats)
	})
	if err != nil {
		return 0, fmt.Errorf("insert occurrences: %w", err)
	}
	return total, nil
}

// reinstate gives the planned state to the existing rows at the instants
// of rows that may take it (reinstatable), locked and read first; it
// returns them, before and after.
func (s *Store) reinstate(ctx context.Context, eventID string, rows []model.Planned, manual bool, now time.Time) ([]changedOccurrence, error) {
	if len(rows) == 0 {
		return nil, nil
	}
	args := []any{eventID}
	for _, r := range rows {
		args = append(args, s.ts(model.RoundUp(r.At)))
	}
	var old []changedOccurrence
	if err := s.selectAll(ctx, &old, `SELECT id, event_id, scheduled_at, status, scheduled_at AS old_at,
		status AS old_status, reason AS old_reason FROM occurrences WHERE event_id = ? AND scheduled_at IN (`+
		placeholders(len(rows))+`) AND `+reinstatable+s.d.forUpdate, append(args, s.ts(now), s.ts(now))...); err != nil {
		return nil, err
	}
	if len(old) == 0 {
		return nil, nil
	}
	before := make(map[int64]changedOccurrence, len(old))
	for _, o := range old {
		before[o.OldAt.UnixMicro()] = o
	}
	var take []model.Planned
	for _, r := range rows {
		if _, ok := before[model.RoundUp(r.At).UnixMicro()]; ok {
			take = append(take, r)
		}
	}
	values, vargs := s.occurrenceValues(eventID, take, manual, now)
	q := `INSERT INTO occurrences (` + occurrenceInsertColumns + `) VALUES ` + values +
		` ON CONFLICT (event_id, scheduled_at) DO UPDATE SET status = excluded.status,
		next_attempt_at = excluded.next_attempt_at, updated_at = excluded.updated_at, attempt_count = 0, lapses = 0,
		status_code = NULL, response_body = NULL, error_message = excluded.error_message, started_at = NULL,
		completed_at = excluded.completed_at, reason = excluded.reason,
		original_scheduled_at = excluded.original_scheduled_at, lease_token = NULL, lease_owner = NULL,
		lease_expires_at = NULL WHERE ` + reinstatable + ` RETURNING id, event_id, scheduled_at, status, reason`
	var out []changedOccurrence
	if err := s.selectAll(ctx, &out, q, append(vargs, s.ts(now), s.ts(now))...); err != nil {
		return nil, err
	}
	for i := range out {
		o := before[out[i].At.UnixMicro()]
		out[i].OldAt, out[i].OldStatus, out[i].OldReason = o.OldAt, o.OldStatus, o.OldReason
	}
	return out, nil
}

// anyFinished tells whether some of the planned rows are inserted finished.
func anyFinished(rows []model.Planned) bool {
	for _, r := range rows {
		if r.Status.Terminal() {
			return true
		}
	}
	return false
}

// GetOccurrence returns one occurrence by id.
func (s *Store) GetOccurrence(ctx context.Context, id string) (model.Occurrence, error) {
	var o model.Occurrence
	if err := s.get(ctx, &o, `SELECT `+occurrenceColumns+` FROM occurrences WHERE id = ?`, id); err != nil {
		return model.Occurrence{}, fmt.Errorf("get occurrence: %w", err)
	}
	normalize(&o)
	return o, nil
}

// CancelPendingOccurrences ends an event's occurrences that have not fired
// yet (pending or retrying) scheduled at or after from, with reason (see
// model.EndedBy). keepManual spares manual triggers, which may fire while an
// event is paused.
func (s *Store) CancelPendingOccurrences(ctx context.Context, eventID string, from time.Time, keepManual bool, reason string, now time.Time) (int, error) {
	status, note := model.EndedBy(reason)
	where := statusSQL(`event_id = ? AND status IN {waiting} AND scheduled_at >= ?`)
	args := []any{eventID, s.ts(from)}
	if keepManual {
		where += ` AND manual = ?`
		args = append(args, false)
	}
	rows, err := s.updateOccurrences(ctx, `status = ?, reason = ?, error_message = ?, updated_at = ?, completed_at = ?`,
		[]any{status, reason, note, s.ts(now), s.ts(now)}, where, args)
	if err != nil {
		return 0, fmt.Errorf("cancel pending occurrences: %w", err)
	}
	return len(rows), nil
}

// ListOccurrences returns occurrences in f.Order (newest first by default).
func (s *Store) ListOccurrences(ctx context.Context, f model.OccurrenceFilter) ([]model.Occurrence, error) {
	where, args, ok := s.occurrenceWhere(f)
	if !ok {
		return []model.Occurrence{}, nil
	}
	out, err := listOccurrenceRows[model.Occurrence](ctx, s, occurrencesHolding(f.Status), prefixed("o.", occurrenceColumns),
		where, args, f)
	if err != nil {
		return nil, fmt.Errorf("list occurrences: %w", err)
	}
	return normalizeAll(out), nil
}

// CountOccurrences counts what ListOccurrences would return without paging.
func (s *Store) CountOccurrences(ctx context.Context, f model.OccurrenceFilter) (int, error) {
	where, args, ok := s.occurrenceWhere(f)
	if !ok {
		return 0, nil
	}
	var n int
	q, args := boundedCount(occurrencesHolding(f.Status), where, args, f.CountBound)
	if err := s.get(ctx, &n, q, args...); err != nil {
		return 0, fmt.Errorf("count occurrences: %w", err)
	}
	return n, nil
}

// boundedCount counts the rows of table matching where, stopping after
// bound+1 rows when bound is positive (the caller reports "more than
// bound" without reading the rest of the history).
func boundedCount(table string, where []string, args []any, bound int) (string, []any) {
	w := strings.Join(where, " AND ")
	if bound <= 0 {
		return `SELECT COUNT(*) FROM ` + table + ` o WHERE ` + w, args
	}
	return `SELECT COUNT(*) FROM (SELECT 1 FROM ` + table + ` o WHERE ` + w + ` LIMIT ?) c`,
		append(append([]any{}, args...), bound+1)
}

// occurrenceWhere builds the shared filter; ok is false when the scope can
// match nothing.
func (s *Store) occurrenceWhere(f model.OccurrenceFilter) (where []string, args []any, ok bool) {
	where, args, ok = tagPredicates("o.event_id", f.Scope, f.Unrestricted, f.AnyTags, f.AllTags)
	if !ok {
		return nil, nil, false
	}
	where = append(where, "1 = 1")
	if f.EventID != "" {
		where = append(where, `o.event_id = ?`)
		args = append(args, f.EventID)
	}
	if len(f.Status) > 0 {
		where = append(where, `o.status IN (`+placeholders(len(f.Status))+`)`)
		for _, st := range f.Status {
			args = append(args, st)
		}
	}
	if len(f.Reasons) > 0 {
		where = append(where, `o.reason IN (`+placeholders(len(f.Reasons))+`)`)
		for _, r := range f.Reasons {
			args = append(args, r)
		}
	}
	if f.From != nil {
		where = append(where, `o.scheduled_at >= ?`)
		args = append(args, s.ts(*f.From))
	}
	if f.To != nil {
		where = append(where, `o.scheduled_at < ?`)
		args = append(args, s.ts(*f.To))
	}
	if f.StatusCode != nil {
		where = append(where, `o.status_code = ?`)
		args = append(args, *f.StatusCode)
	}
	if f.EndpointID != "" {
		if uuid.Validate(f.EndpointID) != nil {
			return nil, nil, false // no endpoint has such an id
		}
		where = append(where, `o.event_id IN (SELECT e.id FROM events e WHERE e.endpoint_id = ?)`)
		args = append(args, f.EndpointID)
	}
	if f.EventQuery != "" {
		where = append(where, `o.event_id IN (SELECT e.id FROM events e WHERE LOWER(e.name) LIKE ? ESCAPE '\' OR e.event_key = ?)`)
		args = append(args, "%"+likeEscaper.Replace(asciiLower(f.EventQuery))+"%", f.EventQuery)
	}
	return where, args, true
}

// ListAttempts returns the attempts of one occurrence in order.
func (s *Store) ListAttempts(ctx context.Context, occurrenceID string) ([]model.Attempt, error) {
	return s.attemptsIn(ctx, "attempts", occurrenceID)
}

// attemptsIn reads one occurrence's attempts from table (live or archive).
func (s *Store) attemptsIn(ctx context.Context, table, occurrenceID string) ([]model.Attempt, error) {
	var out []model.Attempt
	err := s.selectAll(ctx, &out, `SELECT `+attemptColumns+` FROM `+table+` WHERE occurrence_id = ?
		ORDER BY attempt, started_at`, occurrenceID)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", table, err)
	}
	for i := range out {
		out[i].StartedAt, out[i].ScheduledAt = utc(out[i].StartedAt), utc(out[i].ScheduledAt)
	}
	if out == nil {
		out = []model.Attempt{}
	}
	return out, nil
}

const attemptColumns = `id, occurrence_id, event_id, attempt, manual, started_at, duration_ms, status_code,
	outcome, error, response_excerpt, truncated, lateness_ms, endpoint_id, scheduled_at, request_json, subscription_id`

// attemptColumnsWithoutRequest reads attempts for lists that do not show
// the requests they sent (up to 64 KiB each).
const attemptColumnsWithoutRequest = `id, occurrence_id, event_id, attempt, manual, started_at, duration_ms,
	status_code, outcome, error, response_excerpt, truncated, lateness_ms, endpoint_id, scheduled_at,
	NULL AS request_json, subscription_id`

// CancelFutureOccurrences ends an event's occurrences scheduled at or after
// from that have not fired, with reason (see model.EndedBy): pending and retrying
// rows, and rows a dispatcher has claimed but is still holding until their
// instant (their lease is revoked, so the dispatcher's pre-fire check drops
// them). A re-plan (reason rule_changed) also cancels future skipped rows,
// so that the plan decides them afresh. Manual triggers are kept when
// keepManual. Used by pause, edit and re-plans.
func (s *Store) CancelFutureOccurrences(ctx context.Context, eventID string, from time.Time, keepManual bool, reason string, now time.Time) (int, error) {
	return s.CancelOccurrencesBefore(ctx, eventID, from, time.Time{}, keepManual, reason, now)
}

// CancelOccurrencesBefore is CancelFutureOccurrences for the rows scheduled
// in [from, before) only (no upper bound when before is zero): a pause
// until a moment covers the instants before it, not those after.
func (s *Store) CancelOccurrencesBefore(ctx context.Context, eventID string, from, before time.Time, keepManual bool, reason string, now time.Time) (int, error) {
	status, note := model.EndedBy(reason)
	where := statusSQL(`event_id = ? AND scheduled_at >= ? AND (status IN {waiting}
			OR (status = {dispatching} AND scheduled_at > ?)`)
	args := []any{eventID, s.ts(from), s.ts(now)}
	if reason == model.ReasonRuleChanged {
		where += statusSQL(` OR (status = {skipped} AND scheduled_at > ?)`)
		args = append(args, s.ts(now))
	}
	where += `)`
	if !before.IsZero() {
		where += ` AND scheduled_at < ?`
		args = append(args, s.ts(before))
	}
	if keepManual {
		where += ` AND manual = ?`
		args = append(args, false)
	}
	rows, err := s.updateOccurrences(ctx, `status = ?, reason = ?, error_message = ?, lease_token = NULL,
		lease_owner = NULL, lease_expires_at = NULL, updated_at = ?, completed_at = ?`,
		[]any{status, reason, note, s.ts(now), s.ts(now)}, where, args)
	if err != nil {
		return 0, fmt.Errorf("cancel future occurrences: %w", err)
	}
	return len(rows), nil
}

// stillAhead selects rows that have not fired and may still change: waiting
// rows (an owner may hold one until its instant: its pre-fire check finds
// the change and drops it), and rows leased by an instance of the previous
// version until their instant (the change revokes the lease). Its parameter
// is now.
var stillAhead = statusSQL(`(status IN {waiting} OR (status = {dispatching} AND scheduled_at > ?))`)

// MoveOccurrence moves a row that has not fired to to, keeping its id and
// recording original as the instant it was planned at. ErrConflict when
// the row fired or changed meanwhile, or another row of the event holds to.
func (s *Store) MoveOccurrence(ctx context.Context, id string, to, original, now time.Time) error {
	to = model.RoundUp(to)
	orig := s.ts(original)
	if original.Equal(to) {
		orig = nil // moved back where it was planned
	}
	if err := s.EnsurePartitionsFor(ctx, []time.Time{to}, now); err != nil {
		return err
	}
	return s.WithTx(ctx, func(tx *Store) error {
		res, err := tx.exec(ctx, statusSQL(`UPDATE occurrences SET scheduled_at = ?, next_attempt_at = ?,
		original_scheduled_at = ?, status = {pending}, reason = NULL, error_message = NULL, completed_at = NULL,
		lease_token = NULL, lease_owner = NULL, lease_expires_at = NULL, updated_at = ?
		WHERE id = ? AND `+stillAhead+` AND NOT EXISTS (SELECT 1 FROM occurrences o2
			WHERE o2.event_id = occurrences.event_id AND o2.scheduled_at = ? AND o2.id <> occurrences.id)`),
			tx.ts(to), tx.ts(to), orig, tx.ts(now), id, tx.ts(now), tx.ts(to))
		if err != nil {
			return fmt.Errorf("move occurrence: %w", err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return model.ErrConflict
		}
		if err := tx.mirror(ctx, id); err != nil {
			return err
		}
		// A retrying row moved keeps its attempts in its new time slice.
		if _, err := tx.exec(ctx, `UPDATE attempts SET scheduled_at = ? WHERE occurrence_id = ?`, tx.ts(to), id); err != nil {
			return fmt.Errorf("move occurrence attempts: %w", err)
		}
		return nil
	})
}

// SkipOccurrence records a row that has not fired as skipped with reason
// and note. ErrConflict when it fired or changed meanwhile.
func (s *Store) SkipOccurrence(ctx context.Context, id, reason, note string, now time.Time) error {
	rows, err := s.updateOccurrences(ctx, statusSQL(`status = {skipped}, reason = ?, error_message = ?,
		completed_at = ?, lease_token = NULL, lease_owner = NULL, lease_expires_at = NULL, updated_at = ?`),
		[]any{reason, note, s.ts(now), s.ts(now)}, `id = ? AND `+stillAhead, []any{id, s.ts(now)})
	if err != nil {
		return fmt.Errorf("skip occurrence: %w", err)
	}
	if len(rows) != 1 {
		return model.ErrConflict
	}
	return nil
}

// OccurrenceAt returns the event's row at instant at, ErrNotFound when
// there is none.
func (s *Store) OccurrenceAt(ctx context.Context, eventID string, at time.Time) (model.Occurrence, error) {
	var o model.Occurrence
	err := s.get(ctx, &o, `SELECT `+occurrenceColumns+` FROM occurrences WHERE event_id = ? AND scheduled_at = ?`,
		eventID, s.ts(model.RoundUp(at)))
	if err != nil {
		return model.Occurrence{}, fmt.Errorf("occurrence at instant: %w", err)
	}
	normalize(&o)
	return o, nil
}

// mirror makes the mirrors of occurrence id agree with it (PostgreSQL, see
// migration 0036): after an update that may have moved it to another
// week's slice, which PostgreSQL runs as a delete and an insert that no
// statement-level insert trigger sees.
func (s *Store) mirror(ctx context.Context, id string) error {
	if s.d.backend != Postgres {
		return nil
	}
	if _, err := s.exec(ctx, `SELECT qhronos_mirror_occurrence(o) FROM occurrences o WHERE o.id = ?`, id); err != nil {
		return fmt.Errorf("mirror occurrence: %w", err)
	}
	return nil
}
