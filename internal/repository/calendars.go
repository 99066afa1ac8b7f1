package repository

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/qhronos/qhronos/internal/model"
)

const calendarColumns = `id, name, timezone, dates_json, ranges_json, rrules_json, tags_json, version, created_by,
	created_at, updated_at, replan_requested_at`

// calendarRow is a Calendar as stored: its lists as JSON text.
type calendarRow struct {
	ID                string     `db:"id"`
	Name              string     `db:"name"`
	Timezone          string     `db:"timezone"`
	DatesJSON         string     `db:"dates_json"`
	RangesJSON        string     `db:"ranges_json"`
	RRulesJSON        string     `db:"rrules_json"`
	TagsJSON          string     `db:"tags_json"`
	Version           int64      `db:"version"`
	CreatedBy         string     `db:"created_by"`
	CreatedAt         time.Time  `db:"created_at"`
	UpdatedAt         time.Time  `db:"updated_at"`
	ReplanRequestedAt *time.Time `db:"replan_requested_at"`
}

func (r *calendarRow) calendar() (model.Calendar, error) {
	c := model.Calendar{ID: r.ID, Name: r.Name, Timezone: r.Timezone, Version: r.Version, CreatedBy: r.CreatedBy,
		CreatedAt: utc(r.CreatedAt), UpdatedAt: utc(r.UpdatedAt), ReplanRequestedAt: utcp(r.ReplanRequestedAt),
		Dates: []string{}, Ranges: []model.DateRange{}, RRules: []string{}, Tags: []string{}}
	for _, col := range []struct {
		name, text string
		dst        any
	}{
		{"dates", r.DatesJSON, &c.Dates}, {"ranges", r.RangesJSON, &c.Ranges},
		{"rrules", r.RRulesJSON, &c.RRules}, {"tags", r.TagsJSON, &c.Tags},
	} {
		if err := json.Unmarshal([]byte(col.text), col.dst); err != nil {
			return model.Calendar{}, fmt.Errorf("decode %s of calendar %s: %w", col.name, r.ID, err)
		}
	}
	return c, nil
}

func decodeCalendars(rows []calendarRow) ([]model.Calendar, error) {
	return decodeRows(rows, (*calendarRow).calendar)
}

// jsonList encodes a list column; nil is the empty list.
func jsonList[T any](v []T) string {
	if v == nil {
		v = []T{}
	}
	b, _ := json.Marshal(v) // strings and DateRanges always encode
	return string(b)
}

// CreateCalendar inserts c; its id, version and timestamps are set by the
// caller.
func (s *Store) CreateCalendar(ctx context.Context, c *model.Calendar) error {
	const q = `INSERT INTO calendars (` + calendarColumns + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	_, err := s.exec(ctx, q, c.ID, c.Name, c.Timezone, jsonList(c.Dates), jsonList(c.Ranges), jsonList(c.RRules),
		tagsJSON(c.Tags), c.Version, c.CreatedBy, s.ts(c.CreatedAt), s.ts(c.UpdatedAt), s.tsp(c.ReplanRequestedAt))
	if err != nil {
		return fmt.Errorf("insert calendar: %w", err)
	}
	return nil
}

// GetCalendar returns one calendar; ErrNotFound when there is none.
func (s *Store) GetCalendar(ctx context.Context, id string) (model.Calendar, error) {
	var r calendarRow
	if err := s.get(ctx, &r, `SELECT `+calendarColumns+` FROM calendars WHERE id = ?`, id); err != nil {
		return model.Calendar{}, fmt.Errorf("get calendar: %w", err)
	}
	return r.calendar()
}

// GetCalendars returns the calendars with the given ids that exist, in no
// particular order; ids that are not uuids find nothing.
func (s *Store) GetCalendars(ctx context.Context, ids []string) ([]model.Calendar, error) {
	ids = validUUIDs(ids)
	out := make([]model.Calendar, 0, len(ids))
	for start := 0; start < len(ids); start += insertBatch {
		chunk := ids[start:min(start+insertBatch, len(ids))]
		var rows []calendarRow
		q := `SELECT ` + calendarColumns + ` FROM calendars WHERE id IN (` + placeholders(len(chunk)) + `)`
		if err := s.selectAll(ctx, &rows, q, stringArgs(chunk)...); err != nil {
			return nil, fmt.Errorf("get calendars: %w", err)
		}
		cals, err := decodeCalendars(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, cals...)
	}
	return out, nil
}

// validUUIDs keeps the distinct ids that are uuids (PostgreSQL refuses the
// others in a uuid comparison).
func validUUIDs(ids []string) []string {
	var out []string
	for _, id := range dedupe(ids) {
		if uuid.Validate(id) == nil {
			out = append(out, id)
		}
	}
	return out
}

// ListCalendars returns calendars newest first; scope and tag filters read
// the calendar's own tags.
func (s *Store) ListCalendars(ctx context.Context, f model.CalendarFilter) ([]model.Calendar, error) {
	where, args, ok := s.jsonTagWhere("c.tags_json", f.Scope, f.Unrestricted, f.AnyTags, f.AllTags)
	if !ok {
		return []model.Calendar{}, nil
	}
	if f.After != nil {
		where = append(where, `(c.created_at < ? OR (c.created_at = ? AND c.id < ?))`)
		args = append(args, s.ts(f.After.CreatedAt), s.ts(f.After.CreatedAt), f.After.ID)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 50
	}
	q := `SELECT ` + prefixed("c.", calendarColumns) + ` FROM calendars c`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += ` ORDER BY c.created_at DESC, c.id DESC LIMIT ?`
	var rows []calendarRow
	if err := s.selectAll(ctx, &rows, q, append(args, limit)...); err != nil {
		return nil, fmt.Errorf("list calendars: %w", err)
	}
	return decodeCalendars(rows)
}

// UpdateCalendar writes c's name, zone, days and tags when the stored
// version equals expectedVersion, then bumps c.Version. ErrStaleVersion
// when it moved on, ErrNotFound when the calendar is gone.
func (s *Store) UpdateCalendar(ctx context.Context, c *model.Calendar, expectedVersion int64) error {
	const q = `UPDATE calendars SET name = ?, timezone = ?, dates_json = ?, ranges_json = ?, rrules_json = ?,
		tags_json = ?, updated_at = ?, version = version + 1 WHERE id = ? AND version = ?`
	res, err := s.exec(ctx, q, c.Name, c.Timezone, jsonList(c.Dates), jsonList(c.Ranges), jsonList(c.RRules),
		tagsJSON(c.Tags), s.ts(c.UpdatedAt), c.ID, expectedVersion)
	if err != nil {
		return fmt.Errorf("update calendar: %w", err)
	}
	if err := s.checkCalendarVersioned(ctx, res, c.ID); err != nil {
		return err
	}
	c.Version = expectedVersion + 1
	return nil
}

// checkCalendarVersioned turns "no row changed" into ErrNotFound or
// ErrStaleVersion.
func (s *Store) checkCalendarVersioned(ctx context.Context, res interface{ RowsAffected() (int64, error) }, id string) error {
	if affected(res) == 1 {
		return nil
	}
	var n int
	if err := s.get(ctx, &n, `SELECT COUNT(*) FROM calendars WHERE id = ?`, id); err != nil {
		return fmt.Errorf("check calendar version: %w", err)
	}
	if n == 0 {
		return model.ErrNotFound
	}
	return model.ErrStaleVersion
}

// InUseError refuses to delete a calendar that live events still use; it
// is a model.ErrConflict.
type InUseError struct {
	CalendarID string
	Events     int // how many live events use it; 0 when a concurrent change added the first
}

func (e *InUseError) Error() string {
	return fmt.Sprintf("calendar %s is used by %d events", e.CalendarID, e.Events)
}

func (e *InUseError) Unwrap() error { return model.ErrConflict }

// DeleteCalendar removes a calendar no live event uses (a deleted event's
// reference goes with it); otherwise *InUseError. expectedVersion 0 skips
// the version check.
func (s *Store) DeleteCalendar(ctx context.Context, id string, expectedVersion int64) error {
	return s.WithTx(ctx, func(tx *Store) error {
		if _, err := tx.exec(ctx, `DELETE FROM event_calendars WHERE calendar_id = ? AND event_id IN
			(SELECT id FROM events WHERE deleted_at IS NOT NULL)`, id); err != nil {
			return fmt.Errorf("drop deleted events' calendar references: %w", err)
		}
		n, err := tx.CalendarUsers(ctx, id)
		if err != nil {
			return err
		}
		if n > 0 {
			return &InUseError{CalendarID: id, Events: n}
		}
		q, args := `DELETE FROM calendars WHERE id = ?`, []any{id}
		if expectedVersion != 0 {
			q, args = q+` AND version = ?`, append(args, expectedVersion)
		}
		res, err := tx.exec(ctx, q, args...)
		if foreignKeyViolation(err) {
			return &InUseError{CalendarID: id}
		}
		if err != nil {
			return fmt.Errorf("delete calendar: %w", err)
		}
		return tx.checkCalendarVersioned(ctx, res, id)
	})
}

// CalendarUsers counts the live (not deleted) events that use a calendar.
func (s *Store) CalendarUsers(ctx context.Context, calendarID string) (int, error) {
	var n int
	err := s.get(ctx, &n, `SELECT COUNT(*) FROM event_calendars ec JOIN events e ON e.id = ec.event_id
		WHERE ec.calendar_id = ? AND e.deleted_at IS NULL`, calendarID)
	if err != nil {
		return 0, fmt.Errorf("count calendar users: %w", err)
	}
	return n, nil
}

// UnknownCalendarError: an event names a calendar that does not exist. It
// is a model.ErrNotFound.
type UnknownCalendarError struct{ ID string }

func (e *UnknownCalendarError) Error() string { return "unknown calendar " + e.ID }

func (e *UnknownCalendarError) Unwrap() error { return model.ErrNotFound }

// ReplaceEventCalendars records which calendars an event uses (the events
// service calls it in the event's transaction); *UnknownCalendarError
// when one does not exist.
func (s *Store) ReplaceEventCalendars(ctx context.Context, eventID string, ids []string) error {
	return s.WithTx(ctx, func(tx *Store) error {
		if _, err := tx.exec(ctx, `DELETE FROM event_calendars WHERE event_id = ?`, eventID); err != nil {
			return fmt.Errorf("clear event calendars: %w", err)
		}
		ids = dedupe(ids)
		if len(ids) == 0 {
			return nil
		}
		found, err := tx.GetCalendars(ctx, ids)
		if err != nil {
			return err
		}
		known := make(map[string]bool, len(found))
		for _, c := range found {
			known[c.ID] = true
		}
		args := make([]any, 0, 2*len(ids))
		for _, id := range ids {
			if !known[id] {
				return &UnknownCalendarError{ID: id}
			}
			args = append(args, eventID, id)
		}
		q := `INSERT INTO event_calendars (event_id, calendar_id) VALUES ` +
			strings.TrimSuffix(strings.Repeat("(?, ?), ", len(ids)), ", ")
		_, err = tx.exec(ctx, q, args...)
		if foreignKeyViolation(err) {
			return &UnknownCalendarError{ID: ids[0]} // deleted concurrently
		}
		if err != nil {
			return fmt.Errorf("insert event calendars: %w", err)
		}
		return nil
	})
}

// foreignKeyViolation reports a write refused by a foreign key.
func foreignKeyViolation(err error) bool {
	if err == nil {
		return false
	}
	if pgErr, ok := asPgError(err); ok {
		return pgErr.Code == "23503"
	}
	return strings.Contains(err.Error(), "FOREIGN KEY constraint failed")
}

// EventsUsingCalendar returns, in id order after afterEventID ("" for the
// start), up to limit live events that use the calendar.
func (s *Store) EventsUsingCalendar(ctx context.Context, calendarID, afterEventID string, limit int) ([]string, error) {
	if afterEventID == "" {
		afterEventID = s.d.minUUID
	}
	var ids []string
	err := s.selectAll(ctx, &ids, `SELECT ec.event_id FROM event_calendars ec JOIN events e ON e.id = ec.event_id
		WHERE ec.calendar_id = ? AND ec.event_id > ? AND e.deleted_at IS NULL ORDER BY ec.event_id LIMIT ?`,
		calendarID, afterEventID, limit)
	if err != nil {
		return nil, fmt.Errorf("list events using calendar: %w", err)
	}
	if ids == nil {
		ids = []string{}
	}
	return ids, nil
}

// ReplanRequest is a calendar whose events must be re-planned, and when
// that was asked (the request's identity: a later edit asks again).
type ReplanRequest struct {
	CalendarID  string    `db:"id"`
	RequestedAt time.Time `db:"replan_requested_at"`
}

// RequestReplan asks for the events using a calendar to be re-planned
// (again, if a request is pending: the walk starts over).
func (s *Store) RequestReplan(ctx context.Context, calendarID string, now time.Time) error {
	res, err := s.exec(ctx, `UPDATE calendars SET replan_requested_at = ? WHERE id = ?`,
		s.ts(now.UTC().Truncate(time.Microsecond)), calendarID)
	if err != nil {
		return fmt.Errorf("request re-plan: %w", err)
	}
	if affected(res) == 0 {
		return model.ErrNotFound
	}
	return nil
}

// CalendarsToReplan returns up to limit pending re-plan requests, oldest
// first.
func (s *Store) CalendarsToReplan(ctx context.Context, limit int) ([]ReplanRequest, error) {
	var out []ReplanRequest
	err := s.selectAll(ctx, &out, `SELECT id, replan_requested_at FROM calendars
		WHERE replan_requested_at IS NOT NULL ORDER BY replan_requested_at, id LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("list re-plan requests: %w", err)
	}
	for i := range out {
		out[i].RequestedAt = out[i].RequestedAt.UTC()
	}
	return out, nil
}

// FinishReplan clears a re-plan request unless it was asked again since
// requestedAt; it reports whether it cleared it.
func (s *Store) FinishReplan(ctx context.Context, calendarID string, requestedAt time.Time) (bool, error) {
	res, err := s.exec(ctx, `UPDATE calendars SET replan_requested_at = NULL
		WHERE id = ? AND replan_requested_at = ?`, calendarID, s.ts(requestedAt))
	if err != nil {
		return false, fmt.Errorf("finish re-plan: %w", err)
	}
	return affected(res) == 1, nil
}

// PendingReplans counts calendars whose events still wait for a re-plan.
func (s *Store) PendingReplans(ctx context.Context) (int, error) {
	var n int
	if err := s.get(ctx, &n, `SELECT COUNT(*) FROM calendars WHERE replan_requested_at IS NOT NULL`); err != nil {
		return 0, fmt.Errorf("count re-plan requests: %w", err)
	}
	return n, nil
}
