package client

import (
	"context"
	"iter"
	"net/http"
	"time"
)

// Parameter types of the list routes (generated from the document).
type (
	ListEventsParams           = GetEventsParams
	ListEventOccurrencesParams = GetEventsIDOccurrencesParams
	PreviewEventParams         = GetEventsIDPreviewParams
	ListOccurrencesParams      = GetOccurrencesParams
	StatsParams                = GetStatsParams
	StatsTimelineParams        = GetStatsTimelineParams
	PunctualityParams          = GetStatsPunctualityParams
)

// EventsService is /events.
type EventsService struct{ c *Client }

// Create creates an event (POST /events). Without an IdempotencyKey option
// it sends a fresh one (unless retries are off), so a retried create never
// creates twice.
func (s *EventsService) Create(ctx context.Context, in EventInput, opts ...CallOption) (*Event, error) {
	r := newRequest(http.MethodPost, "/events", opts)
	r.body = in
	r.ensureIdempotencyKey(s.c)
	var ev Event
	if _, err := s.c.do(ctx, r, &ev); err != nil {
		return nil, err
	}
	return &ev, nil
}

// List reads one page of events, newest first (GET /events).
func (s *EventsService) List(ctx context.Context, p ListEventsParams) (*Page[Event], error) {
	r := newRequest(http.MethodGet, "/events", nil)
	r.query = encodeQuery(p)
	var evs []Event
	res, err := s.c.do(ctx, r, &evs)
	if err != nil {
		return nil, err
	}
	return &Page[Event]{Items: evs, NextCursor: nextCursor(res.header.Get("Link"))}, nil
}

// All iterates over every event matching p, page after page.
func (s *EventsService) All(ctx context.Context, p ListEventsParams) iter.Seq2[Event, error] {
	return paginate(ctx, func(ctx context.Context, cursor string) (*Page[Event], error) {
		if cursor != "" {
			p.Cursor = &cursor
		}
		return s.List(ctx, p)
	})
}

// Get reads one event (GET /events/{id}); a deleted or unknown one is
// ErrNotFound.
func (s *EventsService) Get(ctx context.Context, id string) (*Event, error) {
	ev, _, err := s.GetWithETag(ctx, id)
	return ev, err
}

// GetIncludingDeleted reads one event even when it is soft-deleted; a
// deleted event has status "deleted" (GET /events/{id}?include_deleted=true).
func (s *EventsService) GetIncludingDeleted(ctx context.Context, id string) (*Event, error) {
	r := newRequest(http.MethodGet, "/events/"+pathID(id), nil)
	r.query = encodeQuery(GetEventsIDParams{IncludeDeleted: Ptr(true)})
	var ev Event
	if _, err := s.c.do(ctx, r, &ev); err != nil {
		return nil, err
	}
	return &ev, nil
}

// GetWithETag reads one event and its ETag, for IfMatch.
func (s *EventsService) GetWithETag(ctx context.Context, id string) (*Event, string, error) {
	var ev Event
	res, err := s.c.do(ctx, newRequest(http.MethodGet, "/events/"+pathID(id), nil), &ev)
	if err != nil {
		return nil, "", err
	}
	return &ev, res.header.Get("ETag"), nil
}

// Update changes the fields set in in (PUT /events/{id}).
func (s *EventsService) Update(ctx context.Context, id string, in EventInput, opts ...CallOption) (*Event, error) {
	r := newRequest(http.MethodPut, "/events/"+pathID(id), opts)
	r.body = in
	var ev Event
	if _, err := s.c.do(ctx, r, &ev); err != nil {
		return nil, err
	}
	return &ev, nil
}

// Delete soft-deletes an event (DELETE /events/{id}); future occurrences
// are cancelled, history is kept.
func (s *EventsService) Delete(ctx context.Context, id string, opts ...CallOption) error {
	_, err := s.c.do(ctx, newRequest(http.MethodDelete, "/events/"+pathID(id), opts), nil)
	return err
}

// Pause pauses an event (POST /events/{id}/pause).
func (s *EventsService) Pause(ctx context.Context, id string) (*Event, error) {
	return s.post(ctx, id, "/pause")
}

// Resume resumes a paused event (POST /events/{id}/resume).
func (s *EventsService) Resume(ctx context.Context, id string) (*Event, error) {
	return s.post(ctx, id, "/resume")
}

func (s *EventsService) post(ctx context.Context, id, action string) (*Event, error) {
	r := newRequest(http.MethodPost, "/events/"+pathID(id)+action, nil)
	r.idempotent = true // pausing or resuming twice ends in the same state
	var ev Event
	if _, err := s.c.do(ctx, r, &ev); err != nil {
		return nil, err
	}
	return &ev, nil
}

// Trigger fires one manual occurrence now (POST /events/{id}/trigger), also
// while paused. Without an IdempotencyKey option it sends a fresh one, so a
// retry never fires twice (unless retries are off).
func (s *EventsService) Trigger(ctx context.Context, id string, opts ...CallOption) (*Occurrence, error) {
	r := newRequest(http.MethodPost, "/events/"+pathID(id)+"/trigger", opts)
	r.ensureIdempotencyKey(s.c)
	var occ Occurrence
	if _, err := s.c.do(ctx, r, &occ); err != nil {
		return nil, err
	}
	return &occ, nil
}

// Backfill fires the instants of an event's pattern in [in.From, in.To]
// that have no occurrence yet: each gets one, due now, with reason
// "backfill" (POST /events/{id}/backfill). The range may start before the
// event's start time; in.To may not be in the future. A one-time or paused
// event is ErrConflict. Repeating a backfill creates nothing more (the
// instants it created count as existing), so it is retried like a PUT; a
// retry after a lost answer reports those instants as existing, not created.
func (s *EventsService) Backfill(ctx context.Context, id string, in BackfillRequest) (*BackfillResult, error) {
	r := newRequest(http.MethodPost, "/events/"+pathID(id)+"/backfill", nil)
	r.body = in
	r.idempotent = true
	var out BackfillResult
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RotateSecret issues a new signing secret, shown only in this answer; the
// previous one keeps signing for grace (zero: the server's default)
// (POST /events/{id}/rotate-secret).
func (s *EventsService) RotateSecret(ctx context.Context, id string, grace time.Duration) (*SecretRotation, error) {
	r := newRequest(http.MethodPost, "/events/"+pathID(id)+"/rotate-secret", nil)
	body := PostEventsIDRotateSecretJSONBody{}
	if grace > 0 {
		body.Grace = Ptr(grace.String())
	}
	r.body = body
	var out SecretRotation
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Occurrences reads one page of an event's occurrences
// (GET /events/{id}/occurrences).
func (s *EventsService) Occurrences(ctx context.Context, id string, p ListEventOccurrencesParams) (*Page[Occurrence], error) {
	r := newRequest(http.MethodGet, "/events/"+pathID(id)+"/occurrences", nil)
	r.query = encodeQuery(p)
	var occs []Occurrence
	res, err := s.c.do(ctx, r, &occs)
	if err != nil {
		return nil, err
	}
	return &Page[Occurrence]{Items: occs, NextCursor: nextCursor(res.header.Get("Link"))}, nil
}

// AllOccurrences iterates over every occurrence of an event matching p.
func (s *EventsService) AllOccurrences(ctx context.Context, id string, p ListEventOccurrencesParams) iter.Seq2[Occurrence, error] {
	return paginate(ctx, func(ctx context.Context, cursor string) (*Page[Occurrence], error) {
		if cursor != "" {
			p.Cursor = &cursor
		}
		return s.Occurrences(ctx, id, p)
	})
}

// Preview lists the next instants of an event (GET /events/{id}/preview).
func (s *EventsService) Preview(ctx context.Context, id string, p PreviewEventParams) (*Preview, error) {
	r := newRequest(http.MethodGet, "/events/"+pathID(id)+"/preview", nil)
	r.query = encodeQuery(p)
	var out Preview
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
