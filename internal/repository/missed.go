package repository

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/qhronos/qhronos/internal/model"
)

// decodeTags reads a tags_json column; text this package did not write
// reads as no tags.
func decodeTags(raw string) []string {
	var tags []string
	if json.Unmarshal([]byte(raw), &tags) != nil || tags == nil {
		return []string{}
	}
	return tags
}

const unfiredColumns = `o.id, o.status, o.reason, o.event_id, e.name AS event_name, e.endpoint_id, o.scheduled_at,
	o.error_message, o.updated_at, e.tags_json`

var overdueAfterSQL = statusSQL(`SELECT ` + unfiredColumns + `
	FROM unfinished_occurrences o JOIN events e ON e.id = o.event_id
	WHERE o.status = {pending} AND e.status = {active} AND e.deleted_at IS NULL
	AND (o.scheduled_at > ? OR (o.scheduled_at = ? AND o.id > ?)) AND o.scheduled_at <= ?
	ORDER BY o.scheduled_at, o.id LIMIT ?`)

// OverdueOccurrencesAfter returns up to limit occurrences of active events
// still pending whose instant lies after the cursor and at or before upto,
// in (scheduled_at, id) order: instants that have not fired although
// their time is well past (the cursor runs on scheduled_at, so each
// instant is looked at once, when it becomes that late).
func (s *Store) OverdueOccurrencesAfter(ctx context.Context, after model.ScanCursor, upto time.Time, limit int) (
	[]model.UnfiredOccurrence, error) {
	return s.unfired(ctx, "overdue", overdueAfterSQL, after, upto, limit)
}

var missedAfterSQL = statusSQL(`SELECT ` + unfiredColumns + `
	FROM ended_occurrences o JOIN events e ON e.id = o.event_id
	WHERE o.status = {missed} AND e.deleted_at IS NULL
	AND (o.updated_at > ? OR (o.updated_at = ? AND o.id > ?)) AND o.updated_at <= ?
	ORDER BY o.updated_at, o.id LIMIT ?`)

// MissedOccurrencesAfter returns up to limit occurrences recorded missed
// after the cursor and at or before upto, in (updated_at, id) order.
func (s *Store) MissedOccurrencesAfter(ctx context.Context, after model.ScanCursor, upto time.Time, limit int) (
	[]model.UnfiredOccurrence, error) {
	return s.unfired(ctx, "missed", missedAfterSQL, after, upto, limit)
}

func (s *Store) unfired(ctx context.Context, what, query string, after model.ScanCursor, upto time.Time, limit int) (
	[]model.UnfiredOccurrence, error) {
	var out []model.UnfiredOccurrence
	if err := s.selectAll(ctx, &out, query, s.ts(after.At), s.ts(after.At), s.afterID(after.LastID), s.ts(upto),
		limit); err != nil {
		return nil, fmt.Errorf("read %s occurrences: %w", what, err)
	}
	for i := range out {
		out[i].ScheduledAt, out[i].UpdatedAt = utc(out[i].ScheduledAt), utc(out[i].UpdatedAt)
		out[i].Tags = decodeTags(out[i].TagsJSON)
	}
	return out, nil
}

// MissedAlertOf returns the outage record of an event; ok is false when
// its operators were never told of one (or it was forgotten).
func (s *Store) MissedAlertOf(ctx context.Context, eventID string) (a model.MissedAlert, recoveredAt *time.Time, ok bool, err error) {
	var rows []struct {
		FirstAt     time.Time  `db:"first_at"`
		LastAt      time.Time  `db:"last_at"`
		Instants    int64      `db:"instants"`
		NotifiedAt  time.Time  `db:"notified_at"`
		RecoveredAt *time.Time `db:"recovered_at"`
	}
	if err := s.selectAll(ctx, &rows, `SELECT first_at, last_at, instants, notified_at, recovered_at
		FROM missed_alerts WHERE event_id = ?`, eventID); err != nil {
		return model.MissedAlert{}, nil, false, fmt.Errorf("read missed alert: %w", err)
	}
	if len(rows) == 0 {
		return model.MissedAlert{}, nil, false, nil
	}
	r := rows[0]
	return model.MissedAlert{EventID: eventID, FirstAt: utc(r.FirstAt), LastAt: utc(r.LastAt), Instants: r.Instants,
		NotifiedAt: utc(r.NotifiedAt)}, utcp(r.RecoveredAt), true, nil
}

// OpenMissedAlert records a new outage of an event (replacing a recovered
// one): its operators are being told now.
func (s *Store) OpenMissedAlert(ctx context.Context, a model.MissedAlert) error {
	_, err := s.exec(ctx, `INSERT INTO missed_alerts (event_id, first_at, last_at, instants, notified_at, recovered_at)
		VALUES (?, ?, ?, ?, ?, NULL) ON CONFLICT (event_id) DO UPDATE SET first_at = excluded.first_at,
		last_at = excluded.last_at, instants = excluded.instants, notified_at = excluded.notified_at,
		recovered_at = NULL`, a.EventID, s.ts(a.FirstAt), s.ts(a.LastAt), a.Instants, s.ts(a.NotifiedAt))
	if err != nil {
		return fmt.Errorf("open missed alert: %w", err)
	}
	return nil
}

// ExtendMissedAlert adds instants of an outage already told to its record.
func (s *Store) ExtendMissedAlert(ctx context.Context, eventID string, first, last time.Time, instants int64) error {
	_, err := s.exec(ctx, `UPDATE missed_alerts SET instants = instants + ?,
		first_at = CASE WHEN first_at > ? THEN ? ELSE first_at END,
		last_at = CASE WHEN last_at < ? THEN ? ELSE last_at END WHERE event_id = ?`,
		instants, s.ts(first), s.ts(first), s.ts(last), s.ts(last), eventID)
	if err != nil {
		return fmt.Errorf("extend missed alert: %w", err)
	}
	return nil
}

// firedSQL picks the occurrences that reached their receiver (or are on
// their way): an event with one of them after its missed instants has
// recovered.
var firedSQL = statusSQL(`o.status IN ({dispatching}, {awaiting_ack}, {running}, {retrying}, {completed},
	{timed_out}) OR (o.status = {failed} AND (o.reason IS NULL OR o.reason <> 'endpoint_disabled'))`)

// RecoverMissedAlerts marks the outages that ended: the event fired an
// instant after the last one that did not (recovered_at is that instant),
// and forgets those of events no longer active (paused, ended, deleted):
// their next miss is a new outage. It returns how many changed.
func (s *Store) RecoverMissedAlerts(ctx context.Context) (int, error) {
	fired := `FROM occurrences o WHERE o.event_id = missed_alerts.event_id
		AND o.scheduled_at > missed_alerts.last_at AND (` + firedSQL + `)`
	res, err := s.exec(ctx, `UPDATE missed_alerts SET recovered_at = (SELECT MIN(o.scheduled_at) `+fired+`)
		WHERE recovered_at IS NULL AND EXISTS (SELECT 1 `+fired+`)`)
	if err != nil {
		return 0, fmt.Errorf("recover missed alerts: %w", err)
	}
	n := affected(res)
	res, err = s.exec(ctx, statusSQL(`DELETE FROM missed_alerts WHERE NOT EXISTS (SELECT 1 FROM events e
		WHERE e.id = missed_alerts.event_id AND e.status = {active} AND e.deleted_at IS NULL
		AND NOT `+oneTimeEndedSQL+`)`), s.ts(model.SeriesEnd))
	if err != nil {
		return n, fmt.Errorf("forget missed alerts: %w", err)
	}
	return n + affected(res), nil
}
