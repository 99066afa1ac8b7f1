package repository

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/qhronos/qhronos/internal/model"
)

const eventColumns = `id, name, description, start_time, timezone, rrule, schedule, cron, action_type,
	action, webhook, hmac_secret, previous_secret, previous_secret_expires_at, tags_json, metadata, retry,
	catch_up, timeout_ms, status, last_status, created_by, created_via, version, expanded_until, next_run_at,
	last_run_at, created_at, updated_at, deleted_at, paused_at, paused_until, pause_reason, paused_by,
	pause_catch_up, dst, jitter_ms, calendars, endpoint_id, no_trace_propagation,
	key_scope, event_key, debounce_ms, max_wait_ms, debounce_since, completion, max_runtime_ms, overlap,
	concurrency_key, concurrency_limit, topic`

// eventRow is an Event as stored: the JSON members as text, tags as JSON
// beside the event_tags index table. It is decoded once, here.
type eventRow struct {
	ID                    string            `db:"id"`
	Name                  string            `db:"name"`
	Description           string            `db:"description"`
	StartTime             time.Time         `db:"start_time"`
	Timezone              string            `db:"timezone"`
	RRule                 *string           `db:"rrule"`
	Schedule              JSON              `db:"schedule"`
	Cron                  *string           `db:"cron"`
	ActionType            string            `db:"action_type"`
	Action                JSON              `db:"action"`
	Webhook               string            `db:"webhook"`
	HMACSecret            []byte            `db:"hmac_secret"`
	PreviousSecret        []byte            `db:"previous_secret"`
	PreviousSecretExpires *time.Time        `db:"previous_secret_expires_at"`
	TagsJSON              string            `db:"tags_json"`
	Metadata              JSON              `db:"metadata"`
	Retry                 JSON              `db:"retry"`
	CatchUp               string            `db:"catch_up"`
	TimeoutMS             int64             `db:"timeout_ms"`
	Status                model.EventStatus `db:"status"`
	LastStatus            string            `db:"last_status"`
	CreatedBy             string            `db:"created_by"`
	CreatedVia            string            `db:"created_via"`
	Version               int64             `db:"version"`
	ExpandedUntil         *time.Time        `db:"expanded_until"`
	NextRunAt             *time.Time        `db:"next_run_at"`
	LastRunAt             *time.Time        `db:"last_run_at"`
	CreatedAt             time.Time         `db:"created_at"`
	UpdatedAt             time.Time         `db:"updated_at"`
	DeletedAt             *time.Time        `db:"deleted_at"`
	PausedAt              *time.Time        `db:"paused_at"`
	PausedUntil           *time.Time        `db:"paused_until"`
	PauseReason           string            `db:"pause_reason"`
	PausedBy              string            `db:"paused_by"`
	PauseCatchUp          string            `db:"pause_catch_up"`
	DST                   JSON              `db:"dst"`
	JitterMS              int64             `db:"jitter_ms"`
	Calendars             JSON              `db:"calendars"`
	EndpointID            *string           `db:"endpoint_id"`
	NoTracePropagation    bool              `db:"no_trace_propagation"`
	KeyScope              *string           `db:"key_scope"`
	Key                   *string           `db:"event_key"`
	DebounceMS            int64             `db:"debounce_ms"`
	MaxWaitMS             int64             `db:"max_wait_ms"`
	DebounceSince         *time.Time        `db:"debounce_since"`
	Completion            string            `db:"completion"`
	MaxRuntimeMS          int64             `db:"max_runtime_ms"`
	Overlap               string            `db:"overlap"`
	ConcurrencyKey        *string           `db:"concurrency_key"`
	ConcurrencyLimit      int               `db:"concurrency_limit"`
	Topic                 *string           `db:"topic"` // the action's topic, for DeleteTopic's check
}

// fields lists the row's fields in eventColumns' order (selectListed;
// TestListedFieldsAreInColumnOrder keeps the two in step).
func (r *eventRow) fields(into []any) []any {
	return append(into, &r.ID, &r.Name, &r.Description, &r.StartTime, &r.Timezone, &r.RRule, &r.Schedule, &r.Cron,
		&r.ActionType, &r.Action, &r.Webhook, &r.HMACSecret, &r.PreviousSecret, &r.PreviousSecretExpires, &r.TagsJSON,
		&r.Metadata, &r.Retry, &r.CatchUp, &r.TimeoutMS, &r.Status, &r.LastStatus, &r.CreatedBy, &r.CreatedVia,
		&r.Version, &r.ExpandedUntil, &r.NextRunAt, &r.LastRunAt, &r.CreatedAt, &r.UpdatedAt, &r.DeletedAt,
		&r.PausedAt, &r.PausedUntil, &r.PauseReason, &r.PausedBy, &r.PauseCatchUp, &r.DST, &r.JitterMS,
		&r.Calendars, &r.EndpointID, &r.NoTracePropagation, &r.KeyScope, &r.Key, &r.DebounceMS, &r.MaxWaitMS,
		&r.DebounceSince, &r.Completion, &r.MaxRuntimeMS, &r.Overlap, &r.ConcurrencyKey, &r.ConcurrencyLimit, &r.Topic)
}

func (r *eventRow) event() (model.Event, error) {
	e := model.Event{ID: r.ID, Name: r.Name, Description: r.Description, StartTime: utc(r.StartTime),
		Timezone: r.Timezone, RRule: r.RRule, Cron: r.Cron, Webhook: r.Webhook, HMACSecret: r.HMACSecret,
		PreviousSecret: r.PreviousSecret, PreviousSecretExpires: utcp(r.PreviousSecretExpires),
		CatchUp: r.CatchUp, TimeoutMS: r.TimeoutMS, Status: r.Status, LastStatus: r.LastStatus,
		CreatedBy: r.CreatedBy, CreatedVia: r.CreatedVia, Version: r.Version, ExpandedUntil: utcp(r.ExpandedUntil),
		NextRunAt: utcp(r.NextRunAt), LastRunAt: utcp(r.LastRunAt), CreatedAt: utc(r.CreatedAt),
		UpdatedAt: utc(r.UpdatedAt), DeletedAt: utcp(r.DeletedAt), PausedAt: utcp(r.PausedAt),
		PausedUntil: utcp(r.PausedUntil), PauseReason: r.PauseReason, PausedBy: r.PausedBy,
		PauseCatchUp: r.PauseCatchUp, Jitter: time.Duration(r.JitterMS) * time.Millisecond,
		EndpointID: r.EndpointID, NoTracePropagation: r.NoTracePropagation,
		Debounce: time.Duration(r.DebounceMS) * time.Millisecond, MaxWait: time.Duration(r.MaxWaitMS) * time.Millisecond,
		DebounceSince: utcp(r.DebounceSince), Completion: r.Completion,
		MaxRuntime: time.Duration(r.MaxRuntimeMS) * time.Millisecond, Overlap: r.Overlap}
	if r.ConcurrencyKey != nil {
		e.Concurrency = &model.Concurrency{Key: *r.ConcurrencyKey, Limit: r.ConcurrencyLimit}
	}
	if r.KeyScope != nil {
		e.KeyScope = *r.KeyScope
	}
	if r.Key != nil && r.KeyScope != nil {
		e.Key = *r.Key
	}
	if len(r.Metadata) > 0 {
		e.Metadata = json.RawMessage(r.Metadata)
	}
	var err error
	if e.Schedule, err = model.DecodeSchedule(json.RawMessage(r.Schedule)); err != nil {
		return model.Event{}, fmt.Errorf("event %s: %w", r.ID, err)
	}
	e.Action.Type = r.ActionType
	if len(r.Action) > 0 {
		if err := decodeAction(r.Action, &e.Action); err != nil {
			return model.Event{}, fmt.Errorf("decode action of event %s: %w", r.ID, err)
		}
	}
	if len(r.Retry) > 0 && string(r.Retry) != "null" {
		e.Retry = new(model.Retry)
		if err := json.Unmarshal(r.Retry, e.Retry); err != nil {
			return model.Event{}, fmt.Errorf("decode retry of event %s: %w", r.ID, err)
		}
	}
	if len(r.DST) > 0 {
		if err := json.Unmarshal(r.DST, &e.DST); err != nil {
			return model.Event{}, fmt.Errorf("decode dst of event %s: %w", r.ID, err)
		}
	}
	if len(r.Calendars) > 0 {
		if err := json.Unmarshal(r.Calendars, &e.Calendars); err != nil {
			return model.Event{}, fmt.Errorf("decode calendars of event %s: %w", r.ID, err)
		}
	}
	if r.TagsJSON != "[]" { // most events have no tags: no decoder for them
		if err := json.Unmarshal([]byte(r.TagsJSON), &e.Tags); err != nil {
			return model.Event{}, fmt.Errorf("decode tags of event %s: %w", r.ID, err)
		}
	}
	if e.Tags == nil {
		e.Tags = []string{}
	}
	return e, nil
}

// decodeAction reads an action column into a. The column holds what
// json.Marshal wrote, {"type":"…","params":…}: that shape is cut apart
// by hand, its params checked with json.Valid, because encoding/json's
// reflection over every due event's action was most of the events read's
// decoding in a burst (BENCHMARKS.md, "#36: twenty-seventh step"). Any
// other text, a type with escapes or fields in another order, is decoded
// by encoding/json.
func decodeAction(raw []byte, a *model.Action) error {
	if rest, ok := bytes.CutPrefix(raw, []byte(`{"type":"`)); ok {
		if end := bytes.IndexByte(rest, '"'); end >= 0 && plainASCII(rest[:end]) {
			params, ok := bytes.CutPrefix(rest[end+1:], []byte(`,"params":`))
			// encoding/json's raw value leaves out the whitespace around it.
			if params, closed := bytes.CutSuffix(params, []byte("}")); ok && closed && bareJSON(params) {
				a.Type, a.Params = string(rest[:end]), json.RawMessage(params)
				return nil
			}
		}
	}
	return json.Unmarshal(raw, a)
}

// bareJSON reports whether b is one valid JSON value with no whitespace
// around it (a valid value can only be surrounded by JSON's whitespace,
// which TrimSpace takes off).
func bareJSON(b []byte) bool {
	return json.Valid(b) && len(bytes.TrimSpace(b)) == len(b)
}

// plainASCII reports whether b is printable ASCII without a backslash: a
// JSON string's contents that mean themselves.
func plainASCII(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c > 0x7e || c == '\\' {
			return false
		}
	}
	return true
}

// policyColumns encodes the event's time policy and calendars (NULL when
// none, which keeps rows of events without them as they were).
func policyColumns(e *model.Event) (dst, calendars JSON) {
	if !e.DST.IsZero() {
		dst, _ = json.Marshal(e.DST)
	}
	if len(e.Calendars) > 0 {
		calendars, _ = json.Marshal(e.Calendars)
	}
	return dst, calendars
}

// eventJSONColumns encodes the event's JSON members for storage.
func eventJSONColumns(e *model.Event) (schedule, action, metadata, retry JSON) {
	if e.Schedule != nil {
		schedule = JSON(e.Schedule.Echo)
	}
	action, _ = json.Marshal(e.Action) // a struct of a string and raw JSON always encodes
	metadata = JSON(e.Metadata)
	if e.Retry != nil {
		retry, _ = json.Marshal(e.Retry)
	}
	return schedule, action, metadata, retry
}

func tagsJSON(tags []string) string {
	if tags == nil {
		tags = []string{}
	}
	b, _ := json.Marshal(tags)
	return string(b)
}

// CreateEvent inserts e with its tags and, when given, its first
// occurrences (pending, not manual). e.ID, timestamps and version must be
// set by the caller. It is atomic: one statement on PostgreSQL, one
// transaction on SQLite.
func (s *Store) CreateEvent(ctx context.Context, e *model.Event, first ...model.Planned) error {
	return s.CreateEventRecorded(ctx, e, model.HistoryEntry{}, first...)
}

// CreateEventRecorded is CreateEvent with the event's first history entry
// (none when h has no action), written in the same statement.
func (s *Store) CreateEventRecorded(ctx context.Context, e *model.Event, h model.HistoryEntry, first ...model.Planned) error {
	const maxInOneStatement = 2000 // 13 parameters an occurrence
	if h.Action != "" {
		var err error
		if h, err = prepareEntry(h); err != nil {
			return err
		}
	}
	// First rows that are already finished (skipped by a calendar, say)
	// are counted in the statistics by InsertPlanned, in a transaction.
	if !s.d.writableCTEs || len(first) > maxInOneStatement || anyFinished(first) {
		return s.WithTx(ctx, func(tx *Store) error {
			if _, err := tx.exec(ctx, insertEventSQL, tx.eventArgs(e)...); err != nil {
				return fmt.Errorf("insert event: %w", err)
			}
			if err := tx.insertTags(ctx, e.ID, e.Tags); err != nil {
				return err
			}
			if h.Action != "" {
				if err := tx.AppendHistory(ctx, h); err != nil {
					return err
				}
			}
			_, err := tx.InsertPlanned(ctx, e.ID, first, e.CreatedAt)
			return err
		})
	}
	// Data-modifying CTEs: the event, its tags, its history entry and its
	// first rows in one round trip; foreign keys are checked at the end of
	// the statement.
	q := `WITH ev AS (` + insertEventSQL + `)`
	args := s.eventArgs(e)
	if tags := dedupe(e.Tags); len(tags) > 0 {
		q += `, tg AS (INSERT INTO event_tags (event_id, tag) VALUES ` +
			strings.TrimSuffix(strings.Repeat("(?, ?), ", len(tags)), ", ") + `)`
		for _, t := range tags {
			args = append(args, e.ID, t)
		}
	}
	if h.Action != "" {
		q += `, hi AS (` + insertHistorySQL + `)`
		args = append(args, s.historyArgs(h)...)
	}
	if len(first) > 0 {
		if err := s.EnsurePartitionsFor(ctx, plannedInstants(first), e.CreatedAt); err != nil {
			return err
		}
		values, oargs := s.occurrenceValues(e.ID, first, false, e.CreatedAt)
		q += `, oc AS (INSERT INTO occurrences (` + occurrenceInsertColumns + `) VALUES ` + values + `)`
		args = append(args, oargs...)
	}
	if _, err := s.exec(ctx, q+` SELECT 1`, args...); err != nil {
		return fmt.Errorf("insert event: %w", err)
	}
	return nil
}

const insertEventSQL = `INSERT INTO events (` + eventColumns + `) VALUES
	(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
	 ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

func (s *Store) eventArgs(e *model.Event) []any {
	schedule, action, metadata, retry := eventJSONColumns(e)
	dst, calendars := policyColumns(e)
	return []any{e.ID, e.Name, e.Description, s.ts(e.StartTime), e.Timezone, e.RRule,
		schedule, e.Cron, e.Action.Type, action, e.Webhook, e.HMACSecret,
		e.PreviousSecret, s.tsp(e.PreviousSecretExpires), tagsJSON(e.Tags), metadata,
		retry, e.CatchUp, e.TimeoutMS, e.Status, e.LastStatus, e.CreatedBy, e.CreatedVia,
		e.Version, s.tsp(e.ExpandedUntil), s.tsp(e.NextRunAt), s.tsp(e.LastRunAt), s.ts(e.CreatedAt),
		s.ts(e.UpdatedAt), s.tsp(e.DeletedAt), s.tsp(e.PausedAt), s.tsp(e.PausedUntil), e.PauseReason,
		e.PausedBy, e.PauseCatchUp, dst, e.Jitter.Milliseconds(), calendars, e.EndpointID, e.NoTracePropagation,
		nullable(e.KeyScope, e.KeyScope), nullable(e.Key, e.Key), e.Debounce.Milliseconds(), e.MaxWait.Milliseconds(),
		s.tsp(e.DebounceSince), completionColumn(e), e.MaxRuntime.Milliseconds(), e.OverlapPolicy(), concurrencyKey(e),
		concurrencyLimit(e), nullable(e.Topic(), e.Topic())}
}

// completionColumn is the event's stored completion mode.
func completionColumn(e *model.Event) string {
	if e.Completion == "" {
		return model.CompletionResponse
	}
	return e.Completion
}

// concurrencyKey and concurrencyLimit are the event's stored concurrency
// key (NULL for none) and limit (0 for none).
func concurrencyKey(e *model.Event) any {
	if e.Concurrency == nil {
		return nil
	}
	return e.Concurrency.Key
}

func concurrencyLimit(e *model.Event) int {
	if e.Concurrency == nil {
		return 0
	}
	return e.Concurrency.Limit
}

// nullable is v, or NULL when key is empty: an event without a key stores
// none, so the unique index on keys leaves it out.
func nullable(v, key string) *string {
	if key == "" {
		return nil
	}
	return &v
}

func (s *Store) replaceTags(ctx context.Context, eventID string, tags []string) error {
	if _, err := s.exec(ctx, `DELETE FROM event_tags WHERE event_id = ?`, eventID); err != nil {
		return fmt.Errorf("clear event tags: %w", err)
	}
	return s.insertTags(ctx, eventID, tags)
}

// insertTags indexes an event's tags in one statement.
func (s *Store) insertTags(ctx context.Context, eventID string, tags []string) error {
	tags = dedupe(tags)
	if len(tags) == 0 {
		return nil
	}
	args := make([]any, 0, 2*len(tags))
	for _, t := range tags {
		args = append(args, eventID, t)
	}
	q := `INSERT INTO event_tags (event_id, tag) VALUES ` + strings.TrimSuffix(strings.Repeat("(?, ?), ", len(tags)), ", ")
	if _, err := s.exec(ctx, q, args...); err != nil {
		return fmt.Errorf("insert event tags: %w", err)
	}
	return nil
}

// GetEvent returns a live (not deleted) event.
func (s *Store) GetEvent(ctx context.Context, id string) (model.Event, error) {
	var r eventRow
	err := s.get(ctx, &r, `SELECT `+eventColumns+` FROM events WHERE id = ? AND deleted_at IS NULL`, id)
	if err != nil {
		return model.Event{}, fmt.Errorf("get event: %w", err)
	}
	return s.decodeWithEnd(ctx, r)
}

// GetEventByKey returns the live event with key in scope, or ErrNotFound.
func (s *Store) GetEventByKey(ctx context.Context, scope, key string) (model.Event, error) {
	var r eventRow
	err := s.get(ctx, &r, `SELECT `+eventColumns+` FROM events
		WHERE key_scope = ? AND event_key = ? AND deleted_at IS NULL`, scope, key)
	if err != nil {
		return model.Event{}, fmt.Errorf("get event by key: %w", err)
	}
	return s.decodeWithEnd(ctx, r)
}

// LockEventKey serializes the transactions that upsert one key of one
// scope until tx ends, so that concurrent upserts read and write one after
// the other instead of racing on the unique index (PostgreSQL: a
// transaction advisory lock; SQLite's single writer already serializes).
// Call it inside a transaction.
func (s *Store) LockEventKey(ctx context.Context, scope, key string) error {
	if s.d.keyLockSQL == "" {
		return nil
	}
	// Neither a tag nor a key holds a newline, so the text names one pair.
	if _, err := s.exec(ctx, s.d.keyLockSQL, "event_key\n"+scope+"\n"+key); err != nil {
		return fmt.Errorf("lock event key: %w", err)
	}
	return nil
}

// GetEventAny returns an event even when it is soft-deleted (the dispatcher
// must see deletions to refuse stale occurrences).
func (s *Store) GetEventAny(ctx context.Context, id string) (model.Event, error) {
	var r eventRow
	if err := s.get(ctx, &r, `SELECT `+eventColumns+` FROM events WHERE id = ?`, id); err != nil {
		return model.Event{}, fmt.Errorf("get event: %w", err)
	}
	return s.decodeWithEnd(ctx, r)
}

// UpdateEvent writes every mutable field of e when the stored version equals
// expectedVersion, then bumps e.Version. ErrStaleVersion when it moved on,
// ErrNotFound when the event is gone.
func (s *Store) UpdateEvent(ctx context.Context, e *model.Event, expectedVersion int64) error {
	return s.WithTx(ctx, func(tx *Store) error {
		const q = `UPDATE events SET name = ?, description = ?, start_time = ?, timezone = ?, rrule = ?,
			schedule = ?, cron = ?, action_type = ?, action = ?, webhook = ?, hmac_secret = ?,
			previous_secret = ?, previous_secret_expires_at = ?, tags_json = ?, metadata = ?, retry = ?,
			catch_up = ?, timeout_ms = ?, status = ?, last_status = ?, expanded_until = ?, next_run_at = ?,
			last_run_at = ?, updated_at = ?, paused_at = ?, paused_until = ?, pause_reason = ?, paused_by = ?,
			pause_catch_up = ?, dst = ?, jitter_ms = ?, calendars = ?, endpoint_id = ?, no_trace_propagation = ?,
			debounce_ms = ?, max_wait_ms = ?, debounce_since = ?, completion = ?, max_runtime_ms = ?,
			overlap = ?, concurrency_key = ?, concurrency_limit = ?, topic = ?, version = version + 1
			WHERE id = ? AND version = ? AND deleted_at IS NULL`
		schedule, action, metadata, retry := eventJSONColumns(e)
		dst, calendars := policyColumns(e)
		res, err := tx.exec(ctx, q, e.Name, e.Description, tx.ts(e.StartTime), e.Timezone, e.RRule,
			schedule, e.Cron, e.Action.Type, action, e.Webhook, e.HMACSecret,
			e.PreviousSecret, tx.tsp(e.PreviousSecretExpires), tagsJSON(e.Tags), metadata,
			retry, e.CatchUp, e.TimeoutMS, e.Status, e.LastStatus, tx.tsp(e.ExpandedUntil),
			tx.tsp(e.NextRunAt), tx.tsp(e.LastRunAt), tx.ts(e.UpdatedAt), tx.tsp(e.PausedAt),
			tx.tsp(e.PausedUntil), e.PauseReason, e.PausedBy, e.PauseCatchUp, dst, e.Jitter.Milliseconds(),
			calendars, e.EndpointID, e.NoTracePropagation, e.Debounce.Milliseconds(), e.MaxWait.Milliseconds(),
			tx.tsp(e.DebounceSince), completionColumn(e), e.MaxRuntime.Milliseconds(), e.OverlapPolicy(),
			concurrencyKey(e), concurrencyLimit(e), nullable(e.Topic(), e.Topic()), e.ID, expectedVersion)
		if err != nil {
			return fmt.Errorf("update event: %w", err)
		}
		if err := tx.checkVersioned(ctx, res, e.ID); err != nil {
			return err
		}
		e.Version = expectedVersion + 1
		return tx.replaceTags(ctx, e.ID, e.Tags)
	})
}

// checkVersioned turns "no row updated" into ErrNotFound or model.ErrStaleVersion.
func (s *Store) checkVersioned(ctx context.Context, res interface{ RowsAffected() (int64, error) }, id string) error {
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("rows affected: %w", err)
	}
	if n == 1 {
		return nil
	}
	var exists int
	err = s.get(ctx, &exists, `SELECT COUNT(*) FROM events WHERE id = ? AND deleted_at IS NULL`, id)
	if err != nil {
		return fmt.Errorf("check event version: %w", err)
	}
	if exists == 0 {
		return model.ErrNotFound
	}
	return model.ErrStaleVersion
}

// DeleteEvent marks an event soft-deleted (the events service cancels what
// it had not fired in the same transaction). expectedVersion 0 skips the
// version check.
func (s *Store) DeleteEvent(ctx context.Context, id string, expectedVersion int64, now time.Time) error {
	return s.WithTx(ctx, func(tx *Store) error {
		q := `UPDATE events SET status = ?, deleted_at = ?, updated_at = ?, next_run_at = NULL,
			version = version + 1 WHERE id = ? AND deleted_at IS NULL`
		args := []any{model.EventDeleted, tx.ts(now), tx.ts(now), id}
		if expectedVersion != 0 {
			q += ` AND version = ?`
			args = append(args, expectedVersion)
		}
		res, err := tx.exec(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("delete event: %w", err)
		}
		return tx.checkVersioned(ctx, res, id)
	})
}

// ListEvents returns live events newest first.
func (s *Store) ListEvents(ctx context.Context, f model.EventFilter) ([]model.Event, error) {
	where, args, ok := tagPredicates("e.id", f.Scope, f.Unrestricted, f.AnyTags, f.AllTags)
	if !ok {
		return []model.Event{}, nil
	}
	where = append(where, "e.deleted_at IS NULL")
	if len(f.Status) > 0 {
		pred, pargs := s.eventStatusPredicate(f.Status)
		where, args = append(where, pred), append(args, pargs...)
	}
	if f.EndpointID != "" {
		if uuid.Validate(f.EndpointID) != nil {
			return []model.Event{}, nil // no endpoint has such an id
		}
		where = append(where, `e.endpoint_id = ?`)
		args = append(args, f.EndpointID)
	}
	if f.Topic != "" {
		// Equality on topic implies the partial index events_by_topic's
		// "topic IS NOT NULL" on both backends, so it can serve this.
		where = append(where, `e.topic = ?`)
		args = append(args, f.Topic)
	}
	if f.CalendarID != "" {
		if uuid.Validate(f.CalendarID) != nil {
			return []model.Event{}, nil // no calendar has such an id
		}
		where = append(where, `EXISTS (SELECT 1 FROM event_calendars ec WHERE ec.event_id = e.id AND ec.calendar_id = ?)`)
		args = append(args, f.CalendarID)
	}
	if f.Key != "" {
		where = append(where, `e.event_key = ?`)
		args = append(args, f.Key)
	}
	if f.NameContains != "" {
		where = append(where, `LOWER(e.name) LIKE ? ESCAPE '\'`)
		args = append(args, "%"+likeEscaper.Replace(asciiLower(f.NameContains))+"%")
	}
	if f.CreatedFrom != nil {
		where = append(where, `e.created_at >= ?`)
		args = append(args, s.ts(*f.CreatedFrom))
	}
	if f.CreatedTo != nil {
		where = append(where, `e.created_at < ?`)
		args = append(args, s.ts(*f.CreatedTo))
	}
	if f.After != nil {
		where = append(where, `(e.created_at < ? OR (e.created_at = ? AND e.id < ?))`)
		args = append(args, s.ts(f.After.CreatedAt), s.ts(f.After.CreatedAt), f.After.ID)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 50
	}
	q := `SELECT ` + prefixed("e.", eventColumns) + ` FROM events e WHERE ` + strings.Join(where, " AND ") +
		` ORDER BY e.created_at DESC, e.id DESC LIMIT ?`
	args = append(args, limit)
	var rows []eventRow
	if err := s.selectAll(ctx, &rows, q, args...); err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	evs, err := decodeEvents(rows)
	if err != nil {
		return nil, err
	}
	return evs, s.EventEnds(ctx, evs)
}

// eventStatusPredicate tests an event of the alias e for any of the
// statuses as read (a one-time event that ended reads as inactive while
// stored active: EventEnds). Known statuses are written into the SQL as
// literals: a partial index such as events_paused_listing is only usable
// when the planner can prove its predicate, which PostgreSQL's generic plan
// of a cached statement cannot do with "status IN ($1)".
func (s *Store) eventStatusPredicate(statuses []model.EventStatus) (string, []any) {
	var in, ended []string
	var inArgs, endedArgs []any
	seen := map[model.EventStatus]bool{}
	for _, st := range statuses {
		if seen[st] {
			continue
		}
		seen[st] = true
		lit, ok := eventStatusLiterals[st]
		switch {
		case st == model.EventActive:
			ended = append(ended, `(e.status = 'active' AND NOT `+oneTimeEndedSQL+`)`)
			endedArgs = append(endedArgs, s.ts(model.SeriesEnd))
		case st == model.EventInactive:
			in = append(in, lit)
			ended = append(ended, oneTimeEndedSQL)
			endedArgs = append(endedArgs, s.ts(model.SeriesEnd))
		case ok:
			in = append(in, lit)
		default:
			in = append(in, "?")
			inArgs = append(inArgs, st)
		}
	}
	var ors []string
	switch {
	case len(in) == 1:
		// SQLite matches a partial index's "status = 'paused'" only
		// against an equality, not against a one-element IN.
		ors = append(ors, `e.status = `+in[0])
	case len(in) > 1:
		ors = append(ors, `e.status IN (`+strings.Join(in, ", ")+`)`)
	}
	ors = append(ors, ended...)
	args := append(inArgs, endedArgs...)
	if len(ors) == 1 {
		return ors[0], args
	}
	return `(` + strings.Join(ors, " OR ") + `)`, args
}

// eventStatusLiterals are the event statuses as SQL literals, from
// constants only, so nothing a caller sends is ever spliced into SQL.
var eventStatusLiterals = map[model.EventStatus]string{
	model.EventActive:   `'active'`,
	model.EventPaused:   `'paused'`,
	model.EventInactive: `'inactive'`,
	model.EventDeleted:  `'deleted'`,
}

// likeEscaper escapes LIKE's wildcards and its escape character.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// asciiLower folds ASCII letters only, as SQLite's LOWER does, so a search
// matches the same rows on both backends.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// tagPredicates builds the tag conditions on the event whose id is in
// idColumn: inside the scope (unless unrestricted), any of anyTags, all of
// allTags. ok is false when the scope can match nothing.
func tagPredicates(idColumn string, scope []string, unrestricted bool, anyTags, allTags []string) (where []string, args []any, ok bool) {
	anyOf := func(tags []string) {
		where = append(where, `EXISTS (SELECT 1 FROM event_tags t WHERE t.event_id = `+idColumn+
			` AND t.tag IN (`+placeholders(len(tags))+`))`)
		for _, t := range tags {
			args = append(args, t)
		}
	}
	if !unrestricted {
		if len(scope) == 0 {
			return nil, nil, false
		}
		anyOf(scope)
	}
	if len(anyTags) > 0 {
		anyOf(anyTags)
	}
	if all := dedupe(allTags); len(all) > 0 {
		where = append(where, `(SELECT COUNT(*) FROM event_tags t WHERE t.event_id = `+idColumn+
			` AND t.tag IN (`+placeholders(len(all))+`)) = ?`)
		for _, t := range all {
			args = append(args, t)
		}
		args = append(args, len(all))
	}
	return where, args, true
}

// EventsByID returns the events with the given ids, deleted ones included
// (the dispatcher must see deletions to refuse stale occurrences).
func (s *Store) EventsByID(ctx context.Context, ids []string) (map[string]model.Event, error) {
	out := make(map[string]model.Event, len(ids))
	ids = dedupe(ids)
	err := s.ByKey(ctx, func(tx *Store) error {
		start := 0
		for _, size := range s.batchSizes(len(ids), 256, insertBatch) {
			chunk := ids[start : start+size]
			start += size
			rows := make([]eventRow, 0, size) // scanned into without regrowth
			q, args := `SELECT `+eventColumns+` FROM events WHERE `, []any{uuidArray(chunk)}
			if tx.d.backend == Postgres {
				q += `id = ANY(?::uuid[])` // one text for every batch size
			} else {
				q += `id IN (` + placeholders(len(chunk)) + `)`
				args = stringArgs(chunk)
			}
			if err := selectListed(ctx, tx, &rows, (*eventRow).fields, q, args...); err != nil {
				return fmt.Errorf("get events by id: %w", err)
			}
			for i := range rows { // into the map: a slice of events between was a copy too many
				e, err := rows[i].event()
				if err != nil {
					return err
				}
				out[e.ID] = e
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func decodeEvents(rows []eventRow) ([]model.Event, error) { return decodeRows(rows, (*eventRow).event) }

// decodeWithEnd decodes one event read for the API or the lifecycle, with
// a one-time event's end derived (EventEnds).
func (s *Store) decodeWithEnd(ctx context.Context, r eventRow) (model.Event, error) {
	ev, err := r.event()
	if err != nil {
		return ev, err
	}
	evs := []model.Event{ev}
	err = s.EventEnds(ctx, evs)
	return evs[0], err
}
