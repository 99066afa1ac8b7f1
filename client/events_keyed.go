package client

import (
	"context"
	"net/http"
)

// Upsert creates the event named key in the token's key scope, or replaces
// that event's schedule and content with in (PUT /events/by-key/{key});
// created tells which (201 or 200). Concurrent upserts of one key end with
// one event. With in.Debounce each upsert moves the event's one pending
// occurrence to debounce after it, never past in.MaxWait after the first
// upsert of the burst.
func (s *EventsService) Upsert(ctx context.Context, key string, in EventUpsertInput, opts ...CallOption) (
	ev *Event, created bool, err error) {
	r := newRequest(http.MethodPut, "/events/by-key/"+pathID(key), opts)
	r.body = in
	var out Event
	res, err := s.c.do(ctx, r, &out)
	if err != nil {
		return nil, false, err
	}
	return &out, res.status == http.StatusCreated, nil
}

// DeleteByKey soft-deletes the event named key in the token's key scope
// (DELETE /events/by-key/{key}); the key is free again afterwards.
func (s *EventsService) DeleteByKey(ctx context.Context, key string, opts ...CallOption) error {
	_, err := s.c.do(ctx, newRequest(http.MethodDelete, "/events/by-key/"+pathID(key), opts), nil)
	return err
}
