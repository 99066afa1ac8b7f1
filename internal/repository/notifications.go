package repository

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/qhronos/qhronos/internal/model"
)

const notificationChannelColumns = `id, name, type, url, secret, to_json, kinds_json, tags_json, created_by,
	created_at, updated_at`

// notificationChannelRow is a NotificationChannel as stored: its lists as
// JSON text.
type notificationChannelRow struct {
	ID        string    `db:"id"`
	Name      string    `db:"name"`
	Type      string    `db:"type"`
	URL       string    `db:"url"`
	Secret    []byte    `db:"secret"`
	ToJSON    string    `db:"to_json"`
	KindsJSON string    `db:"kinds_json"`
	TagsJSON  string    `db:"tags_json"`
	CreatedBy string    `db:"created_by"`
	CreatedAt time.Time `db:"created_at"`
	UpdatedAt time.Time `db:"updated_at"`
}

func (r *notificationChannelRow) channel() (model.NotificationChannel, error) {
	c := model.NotificationChannel{ID: r.ID, Name: r.Name, Type: r.Type, URL: r.URL, Secret: r.Secret,
		CreatedBy: r.CreatedBy, CreatedAt: utc(r.CreatedAt), UpdatedAt: utc(r.UpdatedAt)}
	if err := json.Unmarshal([]byte(r.ToJSON), &c.To); err != nil {
		return model.NotificationChannel{}, fmt.Errorf("decode to of notification channel %s: %w", r.ID, err)
	}
	if err := json.Unmarshal([]byte(r.KindsJSON), &c.Kinds); err != nil {
		return model.NotificationChannel{}, fmt.Errorf("decode kinds of notification channel %s: %w", r.ID, err)
	}
	c.Tags = decodeTags(r.TagsJSON)
	if c.To == nil {
		c.To = []string{}
	}
	if c.Kinds == nil {
		c.Kinds = []string{}
	}
	return c, nil
}

// CreateNotificationChannel inserts c; its id and timestamps are set by the
// caller. A taken name is ErrConflict.
func (s *Store) CreateNotificationChannel(ctx context.Context, c *model.NotificationChannel) error {
	_, err := s.exec(ctx, `INSERT INTO notification_channels (`+notificationChannelColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, c.ID, c.Name, c.Type, c.URL, c.Secret, jsonList(c.To),
		jsonList(c.Kinds), jsonList(c.Tags), c.CreatedBy, s.ts(c.CreatedAt), s.ts(c.UpdatedAt))
	if err != nil {
		return fmt.Errorf("insert notification channel: %w", err)
	}
	return nil
}

// GetNotificationChannel returns one channel; ErrNotFound when there is
// none with that id.
func (s *Store) GetNotificationChannel(ctx context.Context, id string) (model.NotificationChannel, error) {
	var r notificationChannelRow
	if err := s.get(ctx, &r, `SELECT `+notificationChannelColumns+` FROM notification_channels WHERE id = ?`,
		id); err != nil {
		return model.NotificationChannel{}, fmt.Errorf("get notification channel: %w", err)
	}
	return r.channel()
}

// ListNotificationChannels returns every channel, oldest first (operators
// keep a handful).
func (s *Store) ListNotificationChannels(ctx context.Context) ([]model.NotificationChannel, error) {
	var rows []notificationChannelRow
	if err := s.selectAll(ctx, &rows, `SELECT `+notificationChannelColumns+` FROM notification_channels
		ORDER BY created_at, id`); err != nil {
		return nil, fmt.Errorf("list notification channels: %w", err)
	}
	return decodeRows(rows, (*notificationChannelRow).channel)
}

// UpdateNotificationChannel writes every field of c but its id, creator
// and creation time. ErrNotFound when it is gone, ErrConflict when the
// new name is taken.
func (s *Store) UpdateNotificationChannel(ctx context.Context, c *model.NotificationChannel) error {
	res, err := s.exec(ctx, `UPDATE notification_channels SET name = ?, type = ?, url = ?, secret = ?,
		to_json = ?, kinds_json = ?, tags_json = ?, updated_at = ? WHERE id = ?`, c.Name, c.Type, c.URL, c.Secret,
		jsonList(c.To), jsonList(c.Kinds), jsonList(c.Tags), s.ts(c.UpdatedAt), c.ID)
	if err != nil {
		return fmt.Errorf("update notification channel: %w", err)
	}
	if affected(res) != 1 {
		return model.ErrNotFound
	}
	return nil
}

// DeleteNotificationChannel removes a channel; ErrNotFound when there is
// none.
// Its sent notices go with it.
func (s *Store) DeleteNotificationChannel(ctx context.Context, id string) error {
	return s.WithTx(ctx, func(tx *Store) error {
		res, err := tx.exec(ctx, `DELETE FROM notification_channels WHERE id = ?`, id)
		if err != nil {
			return fmt.Errorf("delete notification channel: %w", err)
		}
		if affected(res) != 1 {
			return model.ErrNotFound
		}
		if _, err := tx.exec(ctx, `DELETE FROM notification_notices WHERE channel_id = ?`, id); err != nil {
			return fmt.Errorf("delete notices of notification channel: %w", err)
		}
		return nil
	})
}

const noticeColumns = `id, channel_id, at, kind, summary, outcome, answer, test`

// noticeRow is a SentNotice as stored.
type noticeRow struct {
	ID        string    `db:"id"`
	ChannelID string    `db:"channel_id"`
	At        time.Time `db:"at"`
	Kind      string    `db:"kind"`
	Summary   string    `db:"summary"`
	Outcome   string    `db:"outcome"`
	Answer    string    `db:"answer"`
	Test      bool      `db:"test"`
}

// RecordNotice records one notice sent to a stored channel and trims the
// channel's notices to the newest model.NoticesKeep. A channel that is not
// stored (one from the configuration, "config:<name>") has no list to
// read it from and is skipped. Each instance records only the sends it
// made, so a notice is recorded once per send.
func (s *Store) RecordNotice(ctx context.Context, n model.SentNotice) error {
	if uuid.Validate(n.ChannelID) != nil {
		return nil
	}
	if n.ID == "" {
		id, err := uuid.NewV7() // time-ordered: notices of one microsecond keep their order
		if err != nil {
			return fmt.Errorf("record notice: %w", err)
		}
		n.ID = id.String()
	}
	return s.WithTx(ctx, func(tx *Store) error {
		_, err := tx.exec(ctx, `INSERT INTO notification_notices (`+noticeColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			n.ID, n.ChannelID, tx.ts(n.At.UTC().Truncate(time.Microsecond)), n.Kind, n.Summary, n.Outcome, n.Answer,
			n.Test)
		if err != nil {
			return fmt.Errorf("record notice: %w", err)
		}
		// Bounded growth, as for the circuit history: notices are few
		// (rate-limited, digested), so trimming on each one is cheap.
		if err := tx.keepNewest(ctx, "notification_notices", "channel_id", n.ChannelID, model.NoticesKeep); err != nil {
			return fmt.Errorf("trim notices: %w", err)
		}
		return nil
	})
}

// ListNotices returns one page of a channel's sent notices, newest first,
// strictly before before when set.
func (s *Store) ListNotices(ctx context.Context, channelID string, before *model.PageCursor, limit int) (
	[]model.SentNotice, error) {
	if uuid.Validate(channelID) != nil {
		return []model.SentNotice{}, nil
	}
	where, args := s.newestFirstPage("channel_id", channelID, before)
	var rows []noticeRow
	err := s.selectAll(ctx, &rows, `SELECT `+noticeColumns+` FROM notification_notices WHERE `+where+
		` ORDER BY at DESC, id DESC LIMIT ?`, append(args, pageLimit(limit))...)
	if err != nil {
		return nil, fmt.Errorf("list notices: %w", err)
	}
	out := make([]model.SentNotice, 0, len(rows))
	for _, r := range rows {
		out = append(out, model.SentNotice{ID: r.ID, ChannelID: r.ChannelID, At: utc(r.At), Kind: r.Kind,
			Summary: r.Summary, Outcome: r.Outcome, Answer: r.Answer, Test: r.Test})
	}
	return out, nil
}

// NotificationCursor returns how far the scan named name has read; ok is
// false before its first run.
func (s *Store) NotificationCursor(ctx context.Context, name string) (c model.ScanCursor, ok bool, err error) {
	var rows []struct {
		At     time.Time `db:"at"`
		LastID string    `db:"last_id"`
	}
	if err := s.selectAll(ctx, &rows, `SELECT at, last_id FROM notification_cursors WHERE name = ?`,
		name); err != nil {
		return model.ScanCursor{}, false, fmt.Errorf("read notification cursor: %w", err)
	}
	if len(rows) == 0 {
		return model.ScanCursor{}, false, nil
	}
	return model.ScanCursor{At: rows[0].At.UTC(), LastID: rows[0].LastID}, true, nil
}

// SetNotificationCursor records how far the scan named name has read.
func (s *Store) SetNotificationCursor(ctx context.Context, name string, c model.ScanCursor, now time.Time) error {
	_, err := s.exec(ctx, `INSERT INTO notification_cursors (name, at, last_id, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET at = excluded.at, last_id = excluded.last_id,
		updated_at = excluded.updated_at`, name, s.ts(c.At), c.LastID, s.ts(now))
	if err != nil {
		return fmt.Errorf("write notification cursor: %w", err)
	}
	return nil
}

// reasonEndpointDisabled marks rows failed because their endpoint is
// disabled; the endpoint's own notice covers them.
const reasonEndpointDisabled = "endpoint_disabled"

var failedAfterSQL = statusSQL(`SELECT o.id, o.status, o.run_status, o.event_id, e.name AS event_name,
	e.endpoint_id, o.scheduled_at, o.attempt_count, o.status_code, o.error_message, o.updated_at, e.tags_json
	FROM ended_occurrences o JOIN events e ON e.id = o.event_id
	WHERE o.status IN ({failed}, {timed_out}) AND (o.reason IS NULL OR o.reason <> ?)
	AND (o.updated_at > ? OR (o.updated_at = ? AND o.id > ?)) AND o.updated_at <= ?
	ORDER BY o.updated_at, o.id LIMIT ?`)

// FailedOccurrencesAfter returns up to limit occurrences that failed after
// their last retry (or whose run failed or timed out) and changed after the cursor and at or before upto, in
// (updated_at, id) order. Rows failed because their endpoint is disabled
// are left out.
func (s *Store) FailedOccurrencesAfter(ctx context.Context, after model.ScanCursor, upto time.Time, limit int) ([]model.FailedOccurrence, error) {
	var out []model.FailedOccurrence
	if err := s.selectAll(ctx, &out, failedAfterSQL, reasonEndpointDisabled, s.ts(after.At), s.ts(after.At),
		s.afterID(after.LastID), s.ts(upto), limit); err != nil {
		return nil, fmt.Errorf("read failed occurrences: %w", err)
	}
	for i := range out {
		out[i].ScheduledAt, out[i].UpdatedAt = utc(out[i].ScheduledAt), utc(out[i].UpdatedAt)
		out[i].Tags = decodeTags(out[i].TagsJSON)
	}
	return out, nil
}

// recurringSQL picks events with a recurrence; it matches the predicate of
// events_inactive_changed, so one-time events are neither indexed there nor
// read.
const recurringSQL = `(rrule IS NOT NULL OR schedule IS NOT NULL OR cron IS NOT NULL)`

var endedAfterSQL = statusSQL(`SELECT id, name, endpoint_id, last_run_at, updated_at, tags_json FROM events
	WHERE status = {inactive} AND ` + recurringSQL + ` AND deleted_at IS NULL
	AND (updated_at > ? OR (updated_at = ? AND id > ?)) AND updated_at <= ?
	ORDER BY updated_at, id LIMIT ?`)

// EndedEventsAfter returns up to limit recurring events whose series ended
// (they are inactive) and that changed after the cursor and at or before
// upto, in (updated_at, id) order. A one-time event that fired is not a
// series that ended: a million of them would be a million notices.
func (s *Store) EndedEventsAfter(ctx context.Context, after model.ScanCursor, upto time.Time, limit int) ([]model.EndedEvent, error) {
	var out []model.EndedEvent
	if err := s.selectAll(ctx, &out, endedAfterSQL, s.ts(after.At), s.ts(after.At), s.afterID(after.LastID), s.ts(upto),
		limit); err != nil {
		return nil, fmt.Errorf("read ended events: %w", err)
	}
	for i := range out {
		out[i].UpdatedAt, out[i].LastRunAt = utc(out[i].UpdatedAt), utcp(out[i].LastRunAt)
		out[i].Tags = decodeTags(out[i].TagsJSON)
	}
	return out, nil
}

// afterID is a keyset cursor's id; before the first row it sorts before
// every id.
func (s *Store) afterID(id string) string {
	if id == "" {
		return s.d.minUUID
	}
	return id
}
