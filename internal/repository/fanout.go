package repository

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/qhronos/qhronos/internal/fanout"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/qhronos/qhronos/internal/model"
)

const topicColumns = `name, description, schema_json, version, created_by, created_at, updated_at`

type topicRow struct {
	Name        string    `db:"name"`
	Description string    `db:"description"`
	Schema      *string   `db:"schema_json"`
	Version     int64     `db:"version"`
	CreatedBy   string    `db:"created_by"`
	CreatedAt   time.Time `db:"created_at"`
	UpdatedAt   time.Time `db:"updated_at"`
}

func (r *topicRow) topic() (model.Topic, error) {
	t := model.Topic{Name: r.Name, Description: r.Description, Version: r.Version, CreatedBy: r.CreatedBy,
		CreatedAt: utc(r.CreatedAt), UpdatedAt: utc(r.UpdatedAt)}
	if r.Schema != nil {
		t.Schema = json.RawMessage(*r.Schema)
	}
	return t, nil
}

func schemaText(raw json.RawMessage) *string {
	if len(raw) == 0 {
		return nil
	}
	s := string(raw)
	return &s
}

// CreateTopic inserts t; a taken name is ErrConflict.
func (s *Store) CreateTopic(ctx context.Context, t *model.Topic) error {
	_, err := s.exec(ctx, `INSERT INTO topics (`+topicColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?)`, t.Name,
		t.Description, schemaText(t.Schema), t.Version, t.CreatedBy, s.ts(t.CreatedAt), s.ts(t.UpdatedAt))
	if err != nil {
		return fmt.Errorf("insert topic: %w", err)
	}
	return nil
}

// GetTopic returns one topic; ErrNotFound when there is none.
func (s *Store) GetTopic(ctx context.Context, name string) (model.Topic, error) {
	var r topicRow
	if err := s.get(ctx, &r, `SELECT `+topicColumns+` FROM topics WHERE name = ?`, name); err != nil {
		return model.Topic{}, fmt.Errorf("get topic: %w", err)
	}
	return r.topic()
}

// ListTopics returns up to limit topics after the name after, in name
// order.
func (s *Store) ListTopics(ctx context.Context, after string, limit int) ([]model.Topic, error) {
	var rows []topicRow
	if err := s.selectAll(ctx, &rows, `SELECT `+topicColumns+` FROM topics WHERE name > ? ORDER BY name LIMIT ?`,
		after, pageLimit(limit)); err != nil {
		return nil, fmt.Errorf("list topics: %w", err)
	}
	return decodeRows(rows, (*topicRow).topic)
}

// UpdateTopic writes t's description and schema when the stored version is
// expectedVersion, and bumps t.Version; ErrStaleVersion when it moved on,
// ErrNotFound when the topic is gone.
func (s *Store) UpdateTopic(ctx context.Context, t *model.Topic, expectedVersion int64) error {
	res, err := s.exec(ctx, `UPDATE topics SET description = ?, schema_json = ?, updated_at = ?,
		version = version + 1 WHERE name = ? AND version = ?`, t.Description, schemaText(t.Schema),
		s.ts(t.UpdatedAt), t.Name, expectedVersion)
	if err != nil {
		return fmt.Errorf("update topic: %w", err)
	}
	if affected(res) != 1 {
		if _, err := s.GetTopic(ctx, t.Name); err != nil {
			return err
		}
		return model.ErrStaleVersion
	}
	t.Version = expectedVersion + 1
	return nil
}

// TopicInUseError refuses to delete a topic that subscriptions name by its
// exact name; it is a model.ErrConflict.
type TopicInUseError struct {
	Topic         string
	Subscriptions int
	Events        int // live events that target it (counted when no subscription names it)
}

func (e *TopicInUseError) Error() string {
	if e.Subscriptions == 0 {
		return fmt.Sprintf("topic %s is targeted by %d events", e.Topic, e.Events)
	}
	return fmt.Sprintf("topic %s is named by %d subscriptions", e.Topic, e.Subscriptions)
}

func (e *TopicInUseError) Unwrap() error { return model.ErrConflict }

// DeleteTopic removes a topic no subscription names exactly (patterns may
// outlive it); otherwise *TopicInUseError. expectedVersion 0 skips the
// version check.
func (s *Store) DeleteTopic(ctx context.Context, name string, expectedVersion int64) error {
	return s.WithTx(ctx, func(tx *Store) error {
		var version int64
		if err := tx.get(ctx, &version, `SELECT version FROM topics WHERE name = ?`+tx.d.forUpdate, name); err != nil {
			return fmt.Errorf("delete topic: %w", err)
		}
		if expectedVersion != 0 && version != expectedVersion {
			return model.ErrStaleVersion
		}
		var n int
		if err := tx.get(ctx, &n, `SELECT COUNT(*) FROM subscriptions WHERE topic = ?`, name); err != nil {
			return fmt.Errorf("count subscriptions of topic: %w", err)
		}
		if n > 0 {
			return &TopicInUseError{Topic: name, Subscriptions: n}
		}
		if err := tx.get(ctx, &n, `SELECT COUNT(*) FROM events WHERE topic = ? AND deleted_at IS NULL`, name); err != nil {
			return fmt.Errorf("count events of topic: %w", err)
		}
		if n > 0 {
			return &TopicInUseError{Topic: name, Events: n}
		}
		if _, err := tx.exec(ctx, `DELETE FROM topics WHERE name = ?`, name); err != nil {
			return fmt.Errorf("delete topic: %w", err)
		}
		return nil
	})
}

const subscriptionColumns = `id, topic, endpoint_id, filter, description, tags_json, paused, version, created_by,
	created_at, updated_at`

type subscriptionRow struct {
	ID          string    `db:"id"`
	Topic       string    `db:"topic"`
	EndpointID  string    `db:"endpoint_id"`
	Filter      string    `db:"filter"`
	Description string    `db:"description"`
	TagsJSON    string    `db:"tags_json"`
	Paused      bool      `db:"paused"`
	Version     int64     `db:"version"`
	CreatedBy   string    `db:"created_by"`
	CreatedAt   time.Time `db:"created_at"`
	UpdatedAt   time.Time `db:"updated_at"`
}

func (r *subscriptionRow) subscription() (model.Subscription, error) {
	return model.Subscription{ID: r.ID, Topic: r.Topic, EndpointID: r.EndpointID, Filter: r.Filter,
		Description: r.Description, Tags: decodeTags(r.TagsJSON), Paused: r.Paused, Version: r.Version,
		CreatedBy: r.CreatedBy, CreatedAt: utc(r.CreatedAt), UpdatedAt: utc(r.UpdatedAt)}, nil
}

// CreateSubscription inserts sub. It takes its endpoint's lock first, so a
// concurrent deletion of the endpoint, or a change of its URL's kind, either
// sees it or refuses: ErrNotFound when the endpoint is gone; check, when
// set, is given the endpoint's URL under the lock, and its error ends the
// transaction.
func (s *Store) CreateSubscription(ctx context.Context, sub *model.Subscription, check func(url string) error) error {
	return s.WithTx(ctx, func(tx *Store) error {
		if err := tx.lockEndpointChecked(ctx, sub.EndpointID, check); err != nil {
			return err
		}
		_, err := tx.exec(ctx, `INSERT INTO subscriptions (`+subscriptionColumns+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, sub.ID, sub.Topic, sub.EndpointID, sub.Filter, sub.Description,
			tagsJSON(sub.Tags), sub.Paused, sub.Version, sub.CreatedBy, tx.ts(sub.CreatedAt), tx.ts(sub.UpdatedAt))
		if err != nil {
			return fmt.Errorf("insert subscription: %w", err)
		}
		return nil
	})
}

// GetSubscription returns one subscription; ErrNotFound when there is none.
func (s *Store) GetSubscription(ctx context.Context, id string) (model.Subscription, error) {
	if uuid.Validate(id) != nil {
		return model.Subscription{}, fmt.Errorf("get subscription: %w", model.ErrNotFound)
	}
	var r subscriptionRow
	if err := s.get(ctx, &r, `SELECT `+subscriptionColumns+` FROM subscriptions WHERE id = ?`, id); err != nil {
		return model.Subscription{}, fmt.Errorf("get subscription: %w", err)
	}
	return r.subscription()
}

// ListSubscriptions returns the subscriptions f selects, newest first; scope
// and tag filters read the subscription's own tags, as for endpoints.
func (s *Store) ListSubscriptions(ctx context.Context, f model.SubscriptionFilter) ([]model.Subscription, error) {
	where, args, ok := s.jsonTagWhere("sb.tags_json", f.Scope, f.Unrestricted, f.AnyTags, f.AllTags)
	if !ok {
		return []model.Subscription{}, nil
	}
	if f.Topic != "" {
		where, args = append(where, `sb.topic = ?`), append(args, f.Topic)
	}
	if f.EndpointID != "" {
		if uuid.Validate(f.EndpointID) != nil {
			return []model.Subscription{}, nil
		}
		where, args = append(where, `sb.endpoint_id = ?`), append(args, f.EndpointID)
	}
	if f.Paused != nil {
		where, args = append(where, `sb.paused = ?`), append(args, *f.Paused)
	}
	if f.After != nil {
		where = append(where, `(sb.created_at < ? OR (sb.created_at = ? AND sb.id < ?))`)
		args = append(args, s.ts(f.After.At), s.ts(f.After.At), f.After.ID)
	}
	q := `SELECT ` + subscriptionColumns + ` FROM subscriptions sb`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	var rows []subscriptionRow
	if err := s.selectAll(ctx, &rows, q+` ORDER BY sb.created_at DESC, sb.id DESC LIMIT ?`,
		append(args, pageLimit(f.Limit))...); err != nil {
		return nil, fmt.Errorf("list subscriptions: %w", err)
	}
	return decodeRows(rows, (*subscriptionRow).subscription)
}

// UpdateSubscription writes sub (not its id, creator or creation time) when
// the stored version is expectedVersion and bumps sub.Version; a new
// endpoint is locked first and checked like on create. ErrStaleVersion when
// it moved on, ErrNotFound when the subscription or its endpoint is gone.
func (s *Store) UpdateSubscription(ctx context.Context, sub *model.Subscription, expectedVersion int64,
	check func(url string) error) error {
	return s.WithTx(ctx, func(tx *Store) error {
		if err := tx.lockEndpointChecked(ctx, sub.EndpointID, check); err != nil {
			return err
		}
		res, err := tx.exec(ctx, `UPDATE subscriptions SET topic = ?, endpoint_id = ?, filter = ?, description = ?,
			tags_json = ?, paused = ?, updated_at = ?, version = version + 1 WHERE id = ? AND version = ?`,
			sub.Topic, sub.EndpointID, sub.Filter, sub.Description, tagsJSON(sub.Tags), sub.Paused,
			tx.ts(sub.UpdatedAt), sub.ID, expectedVersion)
		if err != nil {
			return fmt.Errorf("update subscription: %w", err)
		}
		if affected(res) != 1 {
			if _, err := tx.GetSubscription(ctx, sub.ID); err != nil {
				return err
			}
			return model.ErrStaleVersion
		}
		sub.Version = expectedVersion + 1
		return nil
	})
}

// DeleteSubscription removes a subscription; expectedVersion 0 skips the
// version check. ErrNotFound when it is gone, ErrStaleVersion when it moved
// on.
func (s *Store) DeleteSubscription(ctx context.Context, id string, expectedVersion int64) error {
	if uuid.Validate(id) != nil {
		return fmt.Errorf("delete subscription: %w", model.ErrNotFound)
	}
	q, args := `DELETE FROM subscriptions WHERE id = ?`, []any{id}
	if expectedVersion != 0 {
		q, args = q+` AND version = ?`, append(args, expectedVersion)
	}
	res, err := s.exec(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("delete subscription: %w", err)
	}
	if affected(res) != 1 {
		if _, err := s.GetSubscription(ctx, id); err != nil {
			return err
		}
		return model.ErrStaleVersion
	}
	return nil
}

// SubscriptionsUsingEndpoint counts the subscriptions that deliver to an
// endpoint.
func (s *Store) SubscriptionsUsingEndpoint(ctx context.Context, endpointID string) (int, error) {
	var n int
	if err := s.get(ctx, &n, `SELECT COUNT(*) FROM subscriptions WHERE endpoint_id = ?`, endpointID); err != nil {
		return 0, fmt.Errorf("count subscriptions of endpoint: %w", err)
	}
	return n, nil
}

// ActiveSubscriptionsFor returns the subscriptions that are not paused and
// whose topic is the given one or a pattern that matches it, in id order.
// Patterns are matched here rather than in SQL: a catalogue holds few of
// them, and fanout.Matches is the one definition of a match.
func (s *Store) ActiveSubscriptionsFor(ctx context.Context, topic string) ([]model.Subscription, error) {
	var rows []subscriptionRow
	err := s.selectAll(ctx, &rows, `SELECT `+subscriptionColumns+` FROM subscriptions
		WHERE paused = ? AND (topic = ? OR topic LIKE '%*%') ORDER BY id`, false, topic)
	if err != nil {
		return nil, fmt.Errorf("read subscriptions of topic: %w", err)
	}
	subs, err := decodeRows(rows, (*subscriptionRow).subscription)
	if err != nil {
		return nil, err
	}
	out := subs[:0]
	for _, sub := range subs {
		if fanout.Matches(sub.Topic, topic) {
			out = append(out, sub)
		}
	}
	return out, nil
}

// SubscriptionsByID returns the subscriptions among ids that still exist,
// by id.
func (s *Store) SubscriptionsByID(ctx context.Context, ids []string) (map[string]model.Subscription, error) {
	out := make(map[string]model.Subscription, len(ids))
	for start := 0; start < len(ids); start += 500 {
		chunk := ids[start:min(start+500, len(ids))]
		args := make([]any, 0, len(chunk))
		for _, id := range chunk {
			if uuid.Validate(id) == nil {
				args = append(args, id)
			}
		}
		if len(args) == 0 {
			continue
		}
		var rows []subscriptionRow
		if err := s.selectAll(ctx, &rows, `SELECT `+subscriptionColumns+` FROM subscriptions WHERE id IN (`+
			placeholders(len(args))+`)`, args...); err != nil {
			return nil, fmt.Errorf("read subscriptions: %w", err)
		}
		for i := range rows {
			sub, err := rows[i].subscription()
			if err != nil {
				return nil, err
			}
			out[sub.ID] = sub
		}
	}
	return out, nil
}

// PauseSubscription pauses a subscription whose receiver answered 410 Gone;
// it reports whether it was active.
func (s *Store) PauseSubscription(ctx context.Context, id string, now time.Time) (bool, error) {
	res, err := s.exec(ctx, `UPDATE subscriptions SET paused = ?, updated_at = ?, version = version + 1
		WHERE id = ? AND paused = ?`, true, s.ts(now), id, false)
	if err != nil {
		return false, fmt.Errorf("pause subscription: %w", err)
	}
	return affected(res) == 1, nil
}

// DeliveryAttempts returns the attempts of an occurrence's fan-out by
// subscription, for the subscriptions in ids (each one's in order), without
// the requests they sent (GET /occurrences/{id}/attempts has those).
func (s *Store) DeliveryAttempts(ctx context.Context, occurrenceID string, ids []string) (map[string][]model.Attempt, error) {
	out := map[string][]model.Attempt{}
	if len(ids) == 0 {
		return out, nil
	}
	args := []any{occurrenceID}
	for _, id := range ids {
		args = append(args, id)
	}
	var rows []model.Attempt
	err := s.selectAll(ctx, &rows, `SELECT `+attemptColumnsWithoutRequest+
		` FROM attempts WHERE occurrence_id = ? AND subscription_id IN (`+placeholders(len(ids))+`)
		ORDER BY started_at, attempt`, args...)
	if err != nil {
		return nil, fmt.Errorf("read delivery attempts: %w", err)
	}
	for _, a := range rows {
		a.StartedAt, a.ScheduledAt = utc(a.StartedAt), utc(a.ScheduledAt)
		out[*a.SubscriptionID] = append(out[*a.SubscriptionID], a)
	}
	return out, nil
}

// DeliveredSubscriptions returns the subscriptions of an occurrence's
// fan-out that have an attempt, after the given id, in id order, at most
// limit.
func (s *Store) DeliveredSubscriptions(ctx context.Context, occurrenceID, after string, limit int) ([]string, error) {
	var ids []string
	err := s.selectAll(ctx, &ids, `SELECT DISTINCT subscription_id FROM attempts WHERE occurrence_id = ?
		AND subscription_id IS NOT NULL AND subscription_id > ? ORDER BY subscription_id LIMIT ?`,
		occurrenceID, afterID(after), limit)
	if err != nil {
		return nil, fmt.Errorf("read delivered subscriptions: %w", err)
	}
	return ids, nil
}

// afterID is a cursor's id, or the nil UUID (before every id) for none.
func afterID(after string) string {
	if after == "" {
		return "00000000-0000-0000-0000-000000000000"
	}
	return after
}

// SubscriptionAttempts returns a subscription's delivery attempts, newest
// first, before the cursor (started_at, id), at most limit; without the
// requests they sent.
func (s *Store) SubscriptionAttempts(ctx context.Context, subscriptionID string, before *model.PageCursor, limit int) (
	[]model.Attempt, error) {
	if uuid.Validate(subscriptionID) != nil {
		return []model.Attempt{}, nil
	}
	q := `SELECT ` + attemptColumnsWithoutRequest +
		` FROM attempts WHERE subscription_id = ?`
	args := []any{subscriptionID}
	if before != nil {
		q += ` AND (started_at < ? OR (started_at = ? AND id < ?))`
		args = append(args, s.ts(before.At), s.ts(before.At), before.ID)
	}
	var out []model.Attempt
	if err := s.selectAll(ctx, &out, q+` ORDER BY started_at DESC, id DESC LIMIT ?`, append(args, limit)...); err != nil {
		return nil, fmt.Errorf("list subscription attempts: %w", err)
	}
	for i := range out {
		out[i].StartedAt, out[i].ScheduledAt = utc(out[i].StartedAt), utc(out[i].ScheduledAt)
	}
	if out == nil {
		out = []model.Attempt{}
	}
	return out, nil
}
