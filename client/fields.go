package client

import (
	"context"
	"net/http"
)

// Calls with a free-form body, for a caller that relays members as a user
// typed them (the console's event form): a schedule object passes through
// as written, and an update can clear a member with nil (JSON null), which
// EventInput's optional fields cannot say.

// CreateFields creates an event from its members (POST /events). Without
// an IdempotencyKey option it sends a fresh one (unless retries are off).
func (s *EventsService) CreateFields(ctx context.Context, fields map[string]any, opts ...CallOption) (*Event, error) {
	r := newRequest(http.MethodPost, "/events", opts)
	r.body = fields
	r.ensureIdempotencyKey(s.c)
	var ev Event
	if _, err := s.c.do(ctx, r, &ev); err != nil {
		return nil, err
	}
	return &ev, nil
}

// UpdateFields changes the members given (PUT /events/{id}); a nil value
// clears the member.
func (s *EventsService) UpdateFields(ctx context.Context, id string, fields map[string]any, opts ...CallOption) (*Event, error) {
	r := newRequest(http.MethodPut, "/events/"+pathID(id), opts)
	r.body = fields
	var ev Event
	if _, err := s.c.do(ctx, r, &ev); err != nil {
		return nil, err
	}
	return &ev, nil
}

// PreviewFields lists the next instants of a schedule given as members
// (POST /schedules/preview): the members of PreviewRequest.
func (s *SchedulesService) PreviewFields(ctx context.Context, fields map[string]any) (*Preview, error) {
	r := newRequest(http.MethodPost, "/schedules/preview", nil)
	r.body = fields
	r.idempotent = true // it changes nothing
	var out Preview
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
