package client

import (
	"context"
	"net/http"
)

// NotificationChannelsService is /notification-channels (admin): the
// operator channels notices go to.
type NotificationChannelsService struct{ c *Client }

// Create adds a channel (POST /notification-channels); a webhook's secret
// is in this answer only.
func (s *NotificationChannelsService) Create(ctx context.Context, in NotificationChannelRequest) (*NotificationChannel, error) {
	r := newRequest(http.MethodPost, "/notification-channels", nil)
	r.body = in
	var out NotificationChannel
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// List lists the stored channels (GET /notification-channels).
func (s *NotificationChannelsService) List(ctx context.Context) ([]NotificationChannel, error) {
	var out []NotificationChannel
	if _, err := s.c.do(ctx, newRequest(http.MethodGet, "/notification-channels", nil), &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Get reads one channel (GET /notification-channels/{id}).
func (s *NotificationChannelsService) Get(ctx context.Context, id string) (*NotificationChannel, error) {
	var out NotificationChannel
	if _, err := s.c.do(ctx, newRequest(http.MethodGet, "/notification-channels/"+pathID(id), nil), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Update changes the members set in in (PATCH /notification-channels/{id}).
func (s *NotificationChannelsService) Update(ctx context.Context, id string, in NotificationChannelRequest) (*NotificationChannel, error) {
	r := newRequest(http.MethodPatch, "/notification-channels/"+pathID(id), nil)
	r.body = in
	var out NotificationChannel
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Delete removes a channel (DELETE /notification-channels/{id}).
func (s *NotificationChannelsService) Delete(ctx context.Context, id string) error {
	_, err := s.c.do(ctx, newRequest(http.MethodDelete, "/notification-channels/"+pathID(id), nil), nil)
	return err
}

// Test sends a test notice now and reports whether the channel took it
// (POST /notification-channels/{id}/test).
func (s *NotificationChannelsService) Test(ctx context.Context, id string) (*NotificationTestResult, error) {
	var out NotificationTestResult
	r := newRequest(http.MethodPost, "/notification-channels/"+pathID(id)+"/test", nil)
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// NoticesParams are the parameters of a channel's notices (generated from
// the document).
type NoticesParams = ListNotificationChannelNoticesParams

// Notices lists one page of the notices sent to a channel, newest first:
// when, kind, summary, delivered or failed and the receiver's answer (GET
// /notification-channels/{id}/notices).
func (s *NotificationChannelsService) Notices(ctx context.Context, id string, p NoticesParams) (*Page[SentNotice], error) {
	r := newRequest(http.MethodGet, "/notification-channels/"+pathID(id)+"/notices", nil)
	r.query = encodeQuery(p)
	var out NoticePage
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	page := &Page[SentNotice]{Items: out.Data}
	if out.Pagination.NextCursor != nil {
		page.NextCursor = *out.Pagination.NextCursor
	}
	return page, nil
}

// UpdateFields is Update with a body of raw members: an empty list clears
// kinds or tags ("kinds": [] takes every kind, "tags": [] every notice),
// which NotificationChannelRequest cannot say (its lists are left out when
// empty).
func (s *NotificationChannelsService) UpdateFields(ctx context.Context, id string, fields map[string]any) (*NotificationChannel, error) {
	r := newRequest(http.MethodPatch, "/notification-channels/"+pathID(id), nil)
	r.body = fields
	var out NotificationChannel
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
