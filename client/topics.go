package client

import (
	"context"
	"iter"
	"net/http"
)

// ListTopicsParams and ListSubscriptionsParams are the parameters of the
// lists of topics and subscriptions (generated from the document).
type (
	ListTopicsParams        = GetTopicsParams
	ListSubscriptionsParams = GetSubscriptionsParams
)

// TopicsService is /topics: the catalogue of what can fire. Every token
// reads it; only admins change it.
type TopicsService struct{ c *Client }

// Create adds a topic (POST /topics); a taken name is ErrConflict.
func (s *TopicsService) Create(ctx context.Context, in TopicRequest) (*Topic, error) {
	r := newRequest(http.MethodPost, "/topics", nil)
	r.body = in
	var out Topic
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// List reads one page of the catalogue, in name order (GET /topics).
func (s *TopicsService) List(ctx context.Context, p ListTopicsParams) (*Page[Topic], error) {
	r := newRequest(http.MethodGet, "/topics", nil)
	r.query = encodeQuery(p)
	var out TopicPage
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	page := &Page[Topic]{Items: out.Data}
	if out.Pagination.NextCursor != nil {
		page.NextCursor = *out.Pagination.NextCursor
	}
	return page, nil
}

// All iterates over the whole catalogue, in name order.
func (s *TopicsService) All(ctx context.Context, p ListTopicsParams) iter.Seq2[Topic, error] {
	return paginate(ctx, func(ctx context.Context, cursor string) (*Page[Topic], error) {
		if cursor != "" {
			p.Cursor = &cursor
		}
		return s.List(ctx, p)
	})
}

// Get reads one topic (GET /topics/{name}).
func (s *TopicsService) Get(ctx context.Context, name string) (*Topic, error) {
	var out Topic
	if _, err := s.c.do(ctx, newRequest(http.MethodGet, "/topics/"+pathID(name), nil), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Update changes a topic's description or schema (PATCH /topics/{name});
// IfMatch makes it conditional.
func (s *TopicsService) Update(ctx context.Context, name string, in TopicRequest, opts ...CallOption) (*Topic, error) {
	return s.patch(ctx, name, in, opts)
}

// UpdateFields is Update with a body of raw members: "schema": nil removes
// the schema.
func (s *TopicsService) UpdateFields(ctx context.Context, name string, fields map[string]any, opts ...CallOption) (*Topic, error) {
	return s.patch(ctx, name, fields, opts)
}

func (s *TopicsService) patch(ctx context.Context, name string, body any, opts []CallOption) (*Topic, error) {
	r := newRequest(http.MethodPatch, "/topics/"+pathID(name), opts)
	r.body = body
	var out Topic
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Delete removes a topic no subscription names exactly
// (DELETE /topics/{name}); ErrConflict while one does.
func (s *TopicsService) Delete(ctx context.Context, name string, opts ...CallOption) error {
	_, err := s.c.do(ctx, newRequest(http.MethodDelete, "/topics/"+pathID(name), opts), nil)
	return err
}

// SubscriptionsService is /subscriptions: endpoints subscribed to a topic
// or a pattern of topics, with a CEL filter; scoped by tags like endpoints.
type SubscriptionsService struct{ c *Client }

// Create subscribes an endpoint (POST /subscriptions).
func (s *SubscriptionsService) Create(ctx context.Context, in TopicSubscriptionRequest) (*TopicSubscription, error) {
	r := newRequest(http.MethodPost, "/subscriptions", nil)
	r.body = in
	var out TopicSubscription
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// List reads one page of the subscriptions the token can read, newest
// first (GET /subscriptions).
func (s *SubscriptionsService) List(ctx context.Context, p ListSubscriptionsParams) (*Page[TopicSubscription], error) {
	r := newRequest(http.MethodGet, "/subscriptions", nil)
	r.query = encodeQuery(p)
	var out TopicSubscriptionPage
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	page := &Page[TopicSubscription]{Items: out.Data}
	if out.Pagination.NextCursor != nil {
		page.NextCursor = *out.Pagination.NextCursor
	}
	return page, nil
}

// All iterates over every subscription matching p, page after page.
func (s *SubscriptionsService) All(ctx context.Context, p ListSubscriptionsParams) iter.Seq2[TopicSubscription, error] {
	return paginate(ctx, func(ctx context.Context, cursor string) (*Page[TopicSubscription], error) {
		if cursor != "" {
			p.Cursor = &cursor
		}
		return s.List(ctx, p)
	})
}

// Get reads one subscription (GET /subscriptions/{id}).
func (s *SubscriptionsService) Get(ctx context.Context, id string) (*TopicSubscription, error) {
	var out TopicSubscription
	if _, err := s.c.do(ctx, newRequest(http.MethodGet, "/subscriptions/"+pathID(id), nil), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Update changes the members set in in (PATCH /subscriptions/{id}).
func (s *SubscriptionsService) Update(ctx context.Context, id string, in TopicSubscriptionRequest, opts ...CallOption) (*TopicSubscription, error) {
	return s.patch(ctx, id, in, opts)
}

// UpdateFields is Update with a body of raw members: "filter": nil
// delivers every firing again, "description": nil clears it.
func (s *SubscriptionsService) UpdateFields(ctx context.Context, id string, fields map[string]any, opts ...CallOption) (*TopicSubscription, error) {
	return s.patch(ctx, id, fields, opts)
}

// Pause stops deliveries to the subscription until Resume.
func (s *SubscriptionsService) Pause(ctx context.Context, id string) (*TopicSubscription, error) {
	return s.patch(ctx, id, map[string]any{"paused": true}, nil)
}

// Resume delivers the subscription's firings again.
func (s *SubscriptionsService) Resume(ctx context.Context, id string) (*TopicSubscription, error) {
	return s.patch(ctx, id, map[string]any{"paused": false}, nil)
}

func (s *SubscriptionsService) patch(ctx context.Context, id string, body any, opts []CallOption) (*TopicSubscription, error) {
	r := newRequest(http.MethodPatch, "/subscriptions/"+pathID(id), opts)
	r.body = body
	var out TopicSubscription
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Delete removes a subscription (DELETE /subscriptions/{id}).
func (s *SubscriptionsService) Delete(ctx context.Context, id string, opts ...CallOption) error {
	_, err := s.c.do(ctx, newRequest(http.MethodDelete, "/subscriptions/"+pathID(id), opts), nil)
	return err
}

// Deliveries reads one page of the attempts made for a subscription,
// newest first (GET /subscriptions/{id}/deliveries).
func (s *SubscriptionsService) Deliveries(ctx context.Context, id string, p ListSubscriptionDeliveriesParams) (*Page[Attempt], error) {
	r := newRequest(http.MethodGet, "/subscriptions/"+pathID(id)+"/deliveries", nil)
	r.query = encodeQuery(p)
	var out AttemptPage
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	page := &Page[Attempt]{Items: out.Data}
	if out.Pagination.NextCursor != nil {
		page.NextCursor = *out.Pagination.NextCursor
	}
	return page, nil
}
