package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/qhronos/qhronos/internal/auth"
	"github.com/qhronos/qhronos/internal/calendar"
	"github.com/qhronos/qhronos/internal/fanout"
	"github.com/qhronos/qhronos/internal/input"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/outbound"
	"github.com/qhronos/qhronos/internal/repository"
)

// TopicCheck and SubscriptionCheck check the stored resource before a
// change (the API's If-Match); nil means the change is unconditional.
type (
	TopicCheck        = func(*model.Topic) error
	SubscriptionCheck = func(*model.Subscription) error
)

// maxDescription bounds a topic's or a subscription's description.
const maxDescription = 1000

var (
	topicFields        = input.Set("name", "description", "schema")
	subscriptionFields = input.Set("topic", "endpoint_id", "filter", "description", "tags", "paused")
	// Members of an answer a client may send back; they are ignored.
	topicReadOnly        = input.Set("version", "created_by", "created_at", "updated_at")
	subscriptionReadOnly = input.Set("id", "version", "created_by", "created_at", "updated_at")

	errTopicConcurrent = &input.Error{Status: http.StatusConflict,
		Message: "the topic was changed concurrently; retry"}
	errSubscriptionConcurrent = &input.Error{Status: http.StatusConflict,
		Message: "the subscription was changed concurrently; retry"}
)

// CreateTopic adds a topic to the catalogue (the API lets admins only).
func (s *Service) CreateTopic(ctx context.Context, p auth.Principal, body map[string]json.RawMessage) (model.Topic, error) {
	if err := input.RejectUnknown(body, topicFields, topicReadOnly); err != nil {
		return model.Topic{}, err
	}
	var t model.Topic
	if _, err := input.DecodeField(body, "name", &t.Name); err != nil {
		return model.Topic{}, err
	}
	if err := fanout.CheckTopicName("name", t.Name); err != nil {
		return model.Topic{}, err
	}
	if err := applyTopic(body, &t); err != nil {
		return model.Topic{}, err
	}
	now := s.now().UTC().Truncate(time.Microsecond)
	t.Version, t.CreatedBy, t.CreatedAt, t.UpdatedAt = 1, p.Subject, now, now
	err := s.store.CreateTopic(ctx, &t)
	if errors.Is(err, model.ErrConflict) {
		return model.Topic{}, &input.Error{Status: http.StatusConflict, Field: "name",
			Message: fmt.Sprintf("name: a topic named %q exists", t.Name)}
	}
	return t, err
}

// applyTopic writes a body's description and schema onto t.
func applyTopic(body map[string]json.RawMessage, t *model.Topic) error {
	if _, err := input.DecodeField(body, "description", &t.Description); err != nil {
		return err
	}
	if len(t.Description) > maxDescription {
		return input.BadRequestf("description", "must be at most %d characters", maxDescription)
	}
	if raw, ok := body["schema"]; ok {
		if input.IsNull(raw) {
			t.Schema = nil
			return nil
		}
		if _, err := fanout.CompileSchema("schema", raw); err != nil {
			return err
		}
		t.Schema = append(json.RawMessage(nil), raw...)
	}
	return nil
}

// GetTopic returns a topic; every token may read the catalogue.
func (s *Service) GetTopic(ctx context.Context, name string) (model.Topic, error) {
	return s.store.GetTopic(ctx, name)
}

// ListTopics returns a page of the catalogue in name order.
func (s *Service) ListTopics(ctx context.Context, after string, limit int) ([]model.Topic, error) {
	return s.store.ListTopics(ctx, after, limit)
}

// UpdateTopic changes a topic's description or schema; its name is its
// identity and cannot change.
func (s *Service) UpdateTopic(ctx context.Context, name string, body map[string]json.RawMessage, check TopicCheck) (
	model.Topic, error) {
	if err := input.RejectUnknown(body, topicFields, topicReadOnly); err != nil {
		return model.Topic{}, err
	}
	t, err := s.store.GetTopic(ctx, name)
	if err != nil {
		return model.Topic{}, err
	}
	if check != nil {
		if err := check(&t); err != nil {
			return model.Topic{}, err
		}
	}
	var newName string
	if ok, err := input.DecodeField(body, "name", &newName); err != nil {
		return model.Topic{}, err
	} else if ok && newName != t.Name {
		return model.Topic{}, input.BadRequest("name", "cannot change; create a new topic instead")
	}
	version := t.Version
	if err := applyTopic(body, &t); err != nil {
		return model.Topic{}, err
	}
	t.UpdatedAt = s.now().UTC().Truncate(time.Microsecond)
	err = s.store.UpdateTopic(ctx, &t, version)
	if errors.Is(err, model.ErrStaleVersion) && check == nil {
		return model.Topic{}, errTopicConcurrent
	}
	return t, err
}

// DeleteTopic removes a topic no subscription names exactly; otherwise 409
// saying how many do.
func (s *Service) DeleteTopic(ctx context.Context, name string, check TopicCheck) error {
	t, err := s.store.GetTopic(ctx, name)
	if err != nil {
		return err
	}
	var version int64
	if check != nil {
		if err := check(&t); err != nil {
			return err
		}
		version = t.Version
	}
	err = s.store.DeleteTopic(ctx, name, version)
	var inUse *repository.TopicInUseError
	switch {
	case errors.As(err, &inUse):
		what, find := "1 subscription names it", "GET /subscriptions?topic="+name
		switch {
		case inUse.Subscriptions > 1:
			what = fmt.Sprintf("%d subscriptions name it", inUse.Subscriptions)
		case inUse.Subscriptions == 0 && inUse.Events == 1:
			what, find = "1 event targets it", "GET /events?topic="+name
		case inUse.Subscriptions == 0:
			what, find = fmt.Sprintf("%d events target it", inUse.Events), "GET /events?topic="+name
		}
		return &input.Error{Status: http.StatusConflict, Message: "topic is in use: " + what +
			"; delete them or point them elsewhere first (" + find + " lists them)"}
	case errors.Is(err, model.ErrStaleVersion) && check == nil:
		return errTopicConcurrent
	}
	return err
}

// CreateSubscription validates and stores a subscription; scoped tokens
// give it tags inside their scope, and its endpoint must be one they can
// read.
func (s *Service) CreateSubscription(ctx context.Context, p auth.Principal, body map[string]json.RawMessage) (
	model.Subscription, error) {
	sub := model.Subscription{Tags: []string{}}
	if err := s.applySubscription(ctx, p, body, &sub, true); err != nil {
		return model.Subscription{}, err
	}
	now := s.now().UTC().Truncate(time.Microsecond)
	sub.ID, sub.Version, sub.CreatedBy, sub.CreatedAt, sub.UpdatedAt = model.NewID(), 1, p.Subject, now, now
	err := s.store.CreateSubscription(ctx, &sub, subscribable(sub.EndpointID))
	if errors.Is(err, model.ErrNotFound) { // the endpoint went meanwhile
		return model.Subscription{}, input.BadRequestf("endpoint_id", "unknown endpoint %s", sub.EndpointID)
	}
	return sub, err
}

// subscribable checks that endpoint id, whose URL is url, can take a
// subscription's deliveries: a firing reaches its subscribers as signed
// webhooks, so not a message broker's. It runs once on the endpoint as
// read, and again under its lock in the write (the URL's kind may have
// changed between them).
func subscribable(id string) func(url string) error {
	return func(url string) error {
		if kind := outbound.BrokerKind(url); kind != "" {
			return input.BadRequestf("endpoint_id", "endpoint %s is a message broker endpoint (%s): a subscription "+
				"delivers webhooks, so subscribe an HTTP endpoint", id, kind)
		}
		return nil
	}
}

// applySubscription validates a create or PATCH body onto sub: absent
// members keep their value, a null filter or description clears it.
func (s *Service) applySubscription(ctx context.Context, p auth.Principal, body map[string]json.RawMessage,
	sub *model.Subscription, creating bool) error {
	if err := input.RejectUnknown(body, subscriptionFields, subscriptionReadOnly); err != nil {
		return err
	}
	// The scope first: a token names only endpoints it can read, so a tag
	// outside its scope is the refusal it should see.
	if _, ok := body["tags"]; ok {
		var tags []string
		if _, err := input.DecodeField(body, "tags", &tags); err != nil {
			return err
		}
		checked, err := calendar.CheckTags(tags)
		if err != nil {
			return err
		}
		sub.Tags = checked
	}
	if _, ok := body["tags"]; ok || creating {
		if err := mayTag(p, sub.Tags); err != nil {
			return err
		}
	}
	if _, ok := body["topic"]; ok || creating {
		if _, err := input.DecodeField(body, "topic", &sub.Topic); err != nil {
			return err
		}
		if err := s.checkSubscribedTopic(ctx, sub.Topic); err != nil {
			return err
		}
	}
	if _, ok := body["endpoint_id"]; ok || creating {
		var id string
		if _, err := input.DecodeField(body, "endpoint_id", &id); err != nil {
			return err
		}
		if id == "" {
			return input.BadRequest("endpoint_id", "is required: the endpoint the firings are delivered to")
		}
		canonical, ok := input.CanonicalUUID(id)
		if !ok {
			return input.BadRequestf("endpoint_id", "unknown endpoint %s", id)
		}
		e, err := s.store.GetEndpoint(ctx, canonical)
		if errors.Is(err, model.ErrNotFound) || (err == nil && !p.CanRead(e.Tags)) {
			return input.BadRequestf("endpoint_id", "unknown endpoint %s", id)
		}
		if err != nil {
			return err
		}
		if err := subscribable(canonical)(e.URL); err != nil {
			return err
		}
		sub.EndpointID = canonical
	}
	if raw, ok := body["filter"]; ok {
		sub.Filter = ""
		if !input.IsNull(raw) {
			if err := input.DecodeStrict(raw, "filter", &sub.Filter); err != nil {
				return err
			}
		}
		if strings.TrimSpace(sub.Filter) != "" {
			if _, err := fanout.CompileFilter("filter", sub.Filter); err != nil {
				return err
			}
		} else {
			sub.Filter = ""
		}
	}
	if raw, ok := body["description"]; ok {
		sub.Description = ""
		if !input.IsNull(raw) {
			if err := input.DecodeStrict(raw, "description", &sub.Description); err != nil {
				return err
			}
		}
		if len(sub.Description) > maxDescription {
			return input.BadRequestf("description", "must be at most %d characters", maxDescription)
		}
	}
	if _, err := input.DecodeField(body, "paused", &sub.Paused); err != nil {
		return err
	}
	return nil
}

// checkSubscribedTopic checks a subscription's topic: a valid name or
// pattern, and a name (not a pattern, which may name topics to come) that
// is in the catalogue.
func (s *Service) checkSubscribedTopic(ctx context.Context, topic string) error {
	if err := fanout.CheckPattern("topic", topic); err != nil {
		return err
	}
	if fanout.IsGlob(topic) {
		return nil
	}
	_, err := s.store.GetTopic(ctx, topic)
	if errors.Is(err, model.ErrNotFound) {
		return input.BadRequestf("topic", "no topic named %q: create it first (POST /topics), or name a pattern "+
			"such as \"%s.*\"", topic, strings.SplitN(topic, ".", 2)[0])
	}
	return err
}

// GetSubscription returns a subscription the principal may read; anything
// else is not found.
func (s *Service) GetSubscription(ctx context.Context, p auth.Principal, id string) (model.Subscription, error) {
	sub, err := s.store.GetSubscription(ctx, id)
	if err != nil {
		return model.Subscription{}, err
	}
	if !p.CanRead(sub.Tags) {
		return model.Subscription{}, errNotFound
	}
	return sub, nil
}

// ListSubscriptions lists the subscriptions the principal may read, newest
// first.
func (s *Service) ListSubscriptions(ctx context.Context, p auth.Principal, f model.SubscriptionFilter) (
	[]model.Subscription, error) {
	f.Scope, f.Unrestricted = p.ScopeFilter()
	return s.store.ListSubscriptions(ctx, f)
}

// UpdateSubscription applies a PATCH body to a subscription the principal
// may modify.
func (s *Service) UpdateSubscription(ctx context.Context, p auth.Principal, id string,
	body map[string]json.RawMessage, check SubscriptionCheck) (model.Subscription, error) {
	sub, err := s.GetSubscription(ctx, p, id)
	if err != nil {
		return model.Subscription{}, err
	}
	if sub, err = changeable(p, sub, sub.Tags, check); err != nil {
		return model.Subscription{}, err
	}
	version := sub.Version
	if err := s.applySubscription(ctx, p, body, &sub, false); err != nil {
		return model.Subscription{}, err
	}
	sub.UpdatedAt = s.now().UTC().Truncate(time.Microsecond)
	var checkEndpoint func(string) error
	if _, ok := body["endpoint_id"]; ok {
		checkEndpoint = subscribable(sub.EndpointID)
	}
	err = s.store.UpdateSubscription(ctx, &sub, version, checkEndpoint)
	switch {
	case errors.Is(err, model.ErrStaleVersion) && check == nil:
		return model.Subscription{}, errSubscriptionConcurrent
	case errors.Is(err, model.ErrNotFound) && body["endpoint_id"] != nil:
		return model.Subscription{}, input.BadRequestf("endpoint_id", "unknown endpoint %s", sub.EndpointID)
	}
	return sub, err
}

// DeleteSubscription removes a subscription the principal may modify.
func (s *Service) DeleteSubscription(ctx context.Context, p auth.Principal, id string, check SubscriptionCheck) error {
	sub, err := s.GetSubscription(ctx, p, id)
	if err != nil {
		return err
	}
	if sub, err = changeable(p, sub, sub.Tags, check); err != nil {
		return err
	}
	var version int64
	if check != nil {
		version = sub.Version
	}
	err = s.store.DeleteSubscription(ctx, sub.ID, version)
	if errors.Is(err, model.ErrStaleVersion) && check == nil {
		return errSubscriptionConcurrent
	}
	return err
}

// checkEventTopic checks an event that targets a topic: the topic is in the
// catalogue, its metadata follows the topic's schema, and it completes by
// its deliveries' answers (a run by callback has one receiver, a fan-out
// many).
func (s *Service) checkEventTopic(ctx context.Context, ev *model.Event) error {
	name := ev.Topic()
	if name == "" {
		return nil
	}
	if ev.Callback() {
		return input.BadRequest("completion", `must be "response" for an event that targets a topic`)
	}
	t, err := s.store.GetTopic(ctx, name)
	if errors.Is(err, model.ErrNotFound) {
		return input.BadRequestf("topic", "no topic named %q: create it first (POST /topics)", name)
	}
	if err != nil || t.Schema == nil {
		return err
	}
	schema, err := fanout.CompileSchema("schema", t.Schema)
	if err != nil {
		return fmt.Errorf("topic %s: stored schema: %w", name, err)
	}
	meta := ev.Metadata
	if len(meta) == 0 {
		meta = json.RawMessage("{}")
	}
	return schema.Validate("metadata", meta)
}
