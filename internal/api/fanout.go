package api

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/qhronos/qhronos/internal/input"
	"github.com/qhronos/qhronos/internal/model"
)

// topicJSON is a topic as the API shows it.
type topicJSON struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
	Version     int64           `json:"version"`
	CreatedBy   string          `json:"created_by"`
	CreatedAt   time.Time       `json:"created_at"`
	UpdatedAt   time.Time       `json:"updated_at"`
}

func toTopicJSON(t *model.Topic) topicJSON {
	out := topicJSON{Name: t.Name, Description: t.Description, Schema: t.Schema, Version: t.Version,
		CreatedBy: t.CreatedBy, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt}
	if len(out.Schema) == 0 {
		out.Schema = json.RawMessage("null")
	}
	return out
}

func topicETag(t *model.Topic) string { return versionETag(t.Name, t.Version) }

func writeTopic(c *gin.Context, status int, t *model.Topic) {
	c.Header("ETag", topicETag(t))
	c.JSON(status, toTopicJSON(t))
}

func (s *Server) createTopic(c *gin.Context) error {
	members, _, err := readObject(c)
	if err != nil {
		return err
	}
	t, err := s.Events.CreateTopic(c.Request.Context(), principal(c), members)
	if err != nil {
		return err
	}
	c.Header("Location", "/topics/"+t.Name)
	writeTopic(c, http.StatusCreated, &t)
	return nil
}

// listTopics answers GET /topics: the catalogue in name order, in pages of
// limit with a next_cursor while more follow. Every token may read it.
func (s *Server) listTopics(c *gin.Context) error {
	q, err := parseListQuery(c, s.Now())
	if err != nil {
		return err
	}
	after, err := afterKey(q.cursor)
	if err != nil {
		return err
	}
	topics, err := s.Events.ListTopics(c.Request.Context(), after, q.limit+1)
	if err != nil {
		return err
	}
	topics, pagination := nextPage(c, topics, q.limit, func(last *model.Topic) string { return keyCursor(last.Name) })
	data := make([]topicJSON, 0, len(topics))
	for i := range topics {
		data = append(data, toTopicJSON(&topics[i]))
	}
	c.JSON(http.StatusOK, gin.H{"data": data, "pagination": pagination})
	return nil
}

func (s *Server) getTopic(c *gin.Context) error {
	t, err := s.Events.GetTopic(c.Request.Context(), c.Param("name"))
	if err != nil {
		return err
	}
	writeTopic(c, http.StatusOK, &t)
	return nil
}

func (s *Server) updateTopic(c *gin.Context) error {
	members, _, err := readObject(c)
	if err != nil {
		return err
	}
	t, err := s.Events.UpdateTopic(c.Request.Context(), c.Param("name"), members,
		ifMatchVersion(c, "topic", topicETag))
	if err != nil {
		return err
	}
	writeTopic(c, http.StatusOK, &t)
	return nil
}

func (s *Server) deleteTopic(c *gin.Context) error {
	if err := s.Events.DeleteTopic(c.Request.Context(), c.Param("name"), ifMatchVersion(c, "topic", topicETag)); err != nil {
		return err
	}
	c.Status(http.StatusNoContent)
	return nil
}

// subscriptionJSON is a subscription as the API shows it.
type subscriptionJSON struct {
	ID          string    `json:"id"`
	Topic       string    `json:"topic"`
	EndpointID  string    `json:"endpoint_id"`
	Filter      *string   `json:"filter"`
	Description string    `json:"description"`
	Tags        []string  `json:"tags"`
	Paused      bool      `json:"paused"`
	Version     int64     `json:"version"`
	CreatedBy   string    `json:"created_by"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

func toSubscriptionJSON(sub *model.Subscription) subscriptionJSON {
	out := subscriptionJSON{ID: sub.ID, Topic: sub.Topic, EndpointID: sub.EndpointID, Description: sub.Description,
		Tags: nonNilTags(sub.Tags), Paused: sub.Paused, Version: sub.Version, CreatedBy: sub.CreatedBy,
		CreatedAt: sub.CreatedAt, UpdatedAt: sub.UpdatedAt}
	if sub.Filter != "" {
		out.Filter = &sub.Filter
	}
	return out
}

func subscriptionETag(sub *model.Subscription) string { return versionETag(sub.ID, sub.Version) }

func writeSubscription(c *gin.Context, status int, sub *model.Subscription) {
	c.Header("ETag", subscriptionETag(sub))
	c.JSON(status, toSubscriptionJSON(sub))
}

func (s *Server) createSubscription(c *gin.Context) error {
	members, _, err := readObject(c)
	if err != nil {
		return err
	}
	sub, err := s.Events.CreateSubscription(c.Request.Context(), principal(c), members)
	if err != nil {
		return err
	}
	c.Header("Location", "/subscriptions/"+sub.ID)
	writeSubscription(c, http.StatusCreated, &sub)
	return nil
}

// listSubscriptions answers GET /subscriptions: the subscriptions the token
// may read, newest first, filtered by topic (the pattern as written),
// endpoint_id, paused and tags, in cursor pages.
func (s *Server) listSubscriptions(c *gin.Context) error {
	q, err := parseListQuery(c, s.Now())
	if err != nil {
		return err
	}
	values := c.Request.URL.Query()
	f := model.SubscriptionFilter{Topic: values.Get("topic"), EndpointID: values.Get("endpoint_id"),
		AnyTags: q.anyTags, AllTags: q.allTags, Limit: q.limit + 1}
	if v := values.Get("paused"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return input.BadRequest("paused", "must be true or false")
		}
		f.Paused = &b
	}
	if q.cursor != "" {
		at, id, err := decodeCursor(q.cursor)
		if err != nil {
			return err
		}
		f.After = &model.PageCursor{At: at, ID: id}
	}
	subs, err := s.Events.ListSubscriptions(c.Request.Context(), principal(c), f)
	if err != nil {
		return err
	}
	subs, pagination := nextPage(c, subs, q.limit, func(last *model.Subscription) string { return encodeCursor(last.CreatedAt, last.ID) })
	data := make([]subscriptionJSON, 0, len(subs))
	for i := range subs {
		data = append(data, toSubscriptionJSON(&subs[i]))
	}
	c.JSON(http.StatusOK, gin.H{"data": data, "pagination": pagination})
	return nil
}

func (s *Server) getSubscription(c *gin.Context) error {
	sub, err := s.Events.GetSubscription(c.Request.Context(), principal(c), c.Param("id"))
	if err != nil {
		return err
	}
	writeSubscription(c, http.StatusOK, &sub)
	return nil
}

func (s *Server) updateSubscription(c *gin.Context) error {
	members, _, err := readObject(c)
	if err != nil {
		return err
	}
	sub, err := s.Events.UpdateSubscription(c.Request.Context(), principal(c), c.Param("id"), members,
		ifMatchVersion(c, "subscription", subscriptionETag))
	if err != nil {
		return err
	}
	writeSubscription(c, http.StatusOK, &sub)
	return nil
}

func (s *Server) deleteSubscription(c *gin.Context) error {
	if err := s.Events.DeleteSubscription(c.Request.Context(), principal(c), c.Param("id"),
		ifMatchVersion(c, "subscription", subscriptionETag)); err != nil {
		return err
	}
	c.Status(http.StatusNoContent)
	return nil
}

// deliveryJSON is one subscription's delivery of a fan-out occurrence.
type deliveryJSON struct {
	SubscriptionID string        `json:"subscription_id"`
	EndpointID     *string       `json:"endpoint_id"`
	Status         string        `json:"status"` // delivered, failed, pending, filtered
	Error          *string       `json:"error"`
	NextAttemptAt  *time.Time    `json:"next_attempt_at"`
	Attempts       []attemptJSON `json:"attempts"`
}

// occurrenceDeliveries answers GET /occurrences/{id}/deliveries: one row
// per subscription of the occurrence's fan-out, in subscription id order,
// with its attempts.
func (s *Server) occurrenceDeliveries(c *gin.Context) error {
	q, err := parseListQuery(c, s.Now())
	if err != nil {
		return err
	}
	after, err := afterKey(q.cursor)
	if err != nil {
		return err
	}
	rows, err := s.Events.Deliveries(c.Request.Context(), principal(c), c.Param("id"), after, q.limit+1)
	if err != nil {
		return err
	}
	rows, pagination := nextPage(c, rows, q.limit, func(last *model.Delivery) string { return keyCursor(last.SubscriptionID) })
	data := make([]deliveryJSON, 0, len(rows))
	for _, d := range rows {
		dj := deliveryJSON{SubscriptionID: d.SubscriptionID, EndpointID: d.EndpointID, Status: d.Status,
			NextAttemptAt: d.NextAttemptAt, Attempts: toAttemptsJSON(d.Attempts)}
		if d.Error != "" {
			e := d.Error
			dj.Error = &e
		}
		data = append(data, dj)
	}
	c.JSON(http.StatusOK, gin.H{"data": data, "pagination": pagination})
	return nil
}

// subscriptionDeliveries answers GET /subscriptions/{id}/deliveries: the
// attempts made for the subscription, newest first.
func (s *Server) subscriptionDeliveries(c *gin.Context) error {
	q, err := parseListQuery(c, s.Now())
	if err != nil {
		return err
	}
	var before *model.PageCursor
	if q.cursor != "" {
		at, id, err := decodeCursor(q.cursor)
		if err != nil {
			return err
		}
		before = &model.PageCursor{At: at, ID: id}
	}
	attempts, err := s.Events.SubscriptionDeliveries(c.Request.Context(), principal(c), c.Param("id"), before, q.limit+1)
	if err != nil {
		return err
	}
	attempts, pagination := nextPage(c, attempts, q.limit, func(last *model.Attempt) string { return encodeCursor(last.StartedAt, last.ID) })
	c.JSON(http.StatusOK, gin.H{"data": toAttemptsJSON(attempts), "pagination": pagination})
	return nil
}
