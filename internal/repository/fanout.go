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
}

func (e *TopicInUseError) Error() string {
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
// concurrent deletion of the endpoint either sees it or refuses: ErrNotFound
// when the endpoint is gone.
func (s *Store) CreateSubscription(ctx context.Context, sub *model.Subscription) error {
	return s.WithTx(ctx, func(tx *Store) error {
		if err := tx.LockEndpoint(ctx, sub.EndpointID); err != nil {
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
// endpoint is locked first like on create. ErrStaleVersion when it moved
// on, ErrNotFound when the subscription or its endpoint is gone.
func (s *Store) UpdateSubscription(ctx context.Context, sub *model.Subscription, expectedVersion int64) error {
	return s.WithTx(ctx, func(tx *Store) error {
		if err := tx.LockEndpoint(ctx, sub.EndpointID); err != nil {
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
