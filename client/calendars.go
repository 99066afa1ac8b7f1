package client

import (
	"context"
	"iter"
	"net/http"
)

// CalendarsService manages exclusion calendars: shared sets of days on
// which the events that honour them do not fire (or roll to another day).
type CalendarsService struct{ c *Client }

// Create stores a calendar (POST /calendars).
func (s *CalendarsService) Create(ctx context.Context, in CalendarInput) (*Calendar, error) {
	r := newRequest(http.MethodPost, "/calendars", nil)
	r.body = in
	var out Calendar
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// List reads one page of calendars, newest first (GET /calendars).
func (s *CalendarsService) List(ctx context.Context, p GetCalendarsParams) (*Page[Calendar], error) {
	r := newRequest(http.MethodGet, "/calendars", nil)
	r.query = encodeQuery(p)
	var cals []Calendar
	res, err := s.c.do(ctx, r, &cals)
	if err != nil {
		return nil, err
	}
	return &Page[Calendar]{Items: cals, NextCursor: nextCursor(res.header.Get("Link"))}, nil
}

// All iterates over every calendar matching p, page after page.
func (s *CalendarsService) All(ctx context.Context, p GetCalendarsParams) iter.Seq2[Calendar, error] {
	return paginate(ctx, func(ctx context.Context, cursor string) (*Page[Calendar], error) {
		if cursor != "" {
			p.Cursor = &cursor
		}
		return s.List(ctx, p)
	})
}

// Get reads one calendar (GET /calendars/{id}).
func (s *CalendarsService) Get(ctx context.Context, id string) (*Calendar, error) {
	var out Calendar
	if _, err := s.c.do(ctx, newRequest(http.MethodGet, "/calendars/"+pathID(id), nil), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Update replaces a calendar (PUT /calendars/{id}); the events that use it
// are re-planned in the background. IfMatch makes it conditional.
func (s *CalendarsService) Update(ctx context.Context, id string, in CalendarInput, opts ...CallOption) (*Calendar, error) {
	r := newRequest(http.MethodPut, "/calendars/"+pathID(id), opts)
	r.body = in
	var out Calendar
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Delete removes a calendar no event uses (DELETE /calendars/{id}).
func (s *CalendarsService) Delete(ctx context.Context, id string, opts ...CallOption) error {
	_, err := s.c.do(ctx, newRequest(http.MethodDelete, "/calendars/"+pathID(id), opts), nil)
	return err
}
