package repository

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/qhronos/qhronos/internal/model"
)

const historyColumns = `id, event_id, at, subject, channel, action, reason, changes`

// historyRow is a HistoryEntry as stored: changes as text, NULL when none.
type historyRow struct {
	ID      string    `db:"id"`
	EventID string    `db:"event_id"`
	At      time.Time `db:"at"`
	Subject string    `db:"subject"`
	Channel string    `db:"channel"`
	Action  string    `db:"action"`
	Reason  string    `db:"reason"`
	Changes JSON      `db:"changes"`
}

// AppendHistory records entries in their events' history. An entry without
// an id gets a time-ordered one (UUIDv7), so entries written in the same
// microsecond still list in the order they were appended; one without a
// channel is "api". Run it in the transaction of the change it records.
func (s *Store) AppendHistory(ctx context.Context, entries ...model.HistoryEntry) error {
	for _, e := range entries {
		e, err := prepareEntry(e)
		if err != nil {
			return err
		}
		if _, err := s.exec(ctx, insertHistorySQL, s.historyArgs(e)...); err != nil {
			return fmt.Errorf("append history: %w", err)
		}
	}
	return nil
}

const insertHistorySQL = `INSERT INTO event_history (` + historyColumns + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`

// prepareEntry checks an entry and fills its id (time-ordered, so entries
// of one microsecond keep their order) and default channel.
func prepareEntry(e model.HistoryEntry) (model.HistoryEntry, error) {
	if e.EventID == "" || e.Action == "" || e.At.IsZero() {
		return e, errors.New("append history: an entry needs event_id, action and at")
	}
	if len(e.Changes) > 0 && !json.Valid(e.Changes) {
		return e, fmt.Errorf("append history: changes of %s on event %s are not JSON", e.Action, e.EventID)
	}
	if e.ID == "" {
		id, err := uuid.NewV7()
		if err != nil {
			return e, fmt.Errorf("append history: %w", err)
		}
		e.ID = id.String()
	}
	if e.Channel == "" {
		e.Channel = "api"
	}
	return e, nil
}

func (s *Store) historyArgs(e model.HistoryEntry) []any {
	return []any{e.ID, e.EventID, s.ts(model.RoundUp(e.At)), e.Subject, e.Channel, e.Action, e.Reason, JSON(e.Changes)}
}

// ListHistory returns one page of an event's history, oldest first, from
// the live table and the archive together: an archived event's history is
// read where the event's own rows went. The caller checks that the
// principal may read the event.
func (s *Store) ListHistory(ctx context.Context, eventID string, f model.HistoryFilter) ([]model.HistoryEntry, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = 50
	}
	where, args := `event_id = ?`, []any{eventID}
	if f.After != nil {
		at := s.ts(f.After.At)
		// The redundant bound lets the (event_id, at, id) index start at
		// the cursor.
		where += ` AND at >= ? AND (at > ? OR (at = ? AND id > ?))`
		args = append(args, at, at, at, f.After.ID)
	}
	part := func(table string) string {
		return `SELECT ` + historyColumns + ` FROM ` + table + ` WHERE ` + where
	}
	q := `SELECT ` + historyColumns + ` FROM (` + part("event_history") + ` UNION ALL ` +
		part("event_history_archive") + `) h ORDER BY at, id LIMIT ?`
	var rows []historyRow
	if err := s.selectAll(ctx, &rows, q, append(append(append([]any{}, args...), args...), limit)...); err != nil {
		return nil, fmt.Errorf("list history: %w", err)
	}
	out := make([]model.HistoryEntry, 0, len(rows))
	for _, r := range rows {
		e := model.HistoryEntry{ID: r.ID, EventID: r.EventID, At: utc(r.At), Subject: r.Subject,
			Channel: r.Channel, Action: r.Action, Reason: r.Reason}
		if len(r.Changes) > 0 {
			e.Changes = json.RawMessage(r.Changes)
		}
		out = append(out, e)
	}
	return out, nil
}
