package client

import (
	"context"
	"iter"
	"net/http"
)

// OccurrencesService is /occurrences.
type OccurrencesService struct{ c *Client }

// List reads one page of occurrences in the original envelope, with its
// total (GET /occurrences).
func (s *OccurrencesService) List(ctx context.Context, p ListOccurrencesParams) (*OccurrencePage, error) {
	r := newRequest(http.MethodGet, "/occurrences", nil)
	r.query = encodeQuery(p)
	var out OccurrencePage
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// All iterates over every occurrence matching p, following the cursor.
func (s *OccurrencesService) All(ctx context.Context, p ListOccurrencesParams) iter.Seq2[Occurrence, error] {
	p.Page = nil // cursor and page cannot be combined
	return paginate(ctx, func(ctx context.Context, cursor string) (*Page[Occurrence], error) {
		if cursor != "" {
			p.Cursor = &cursor
		}
		page, err := s.List(ctx, p)
		if err != nil {
			return nil, err
		}
		next := ""
		if page.Pagination.NextCursor != nil {
			next = *page.Pagination.NextCursor
		}
		return &Page[Occurrence]{Items: page.Data, NextCursor: next}, nil
	})
}

// Get reads one occurrence (GET /occurrences/{id}).
func (s *OccurrencesService) Get(ctx context.Context, id string) (*Occurrence, error) {
	var occ Occurrence
	if _, err := s.c.do(ctx, newRequest(http.MethodGet, "/occurrences/"+pathID(id), nil), &occ); err != nil {
		return nil, err
	}
	return &occ, nil
}

// Attempts lists the attempts of an occurrence, oldest first
// (GET /occurrences/{id}/attempts).
func (s *OccurrencesService) Attempts(ctx context.Context, id string) ([]Attempt, error) {
	var out []Attempt
	if _, err := s.c.do(ctx, newRequest(http.MethodGet, "/occurrences/"+pathID(id)+"/attempts", nil), &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Replay delivers one occurrence again, whatever its state: a new manual
// attempt with the same delivery id (POST /occurrences/{id}/retry). A
// fan-out occurrence re-sends its failed deliveries (ReplayDelivery: one
// subscription's).
func (s *OccurrencesService) Replay(ctx context.Context, id string) (*Occurrence, error) {
	var occ Occurrence
	if _, err := s.c.do(ctx, newRequest(http.MethodPost, "/occurrences/"+pathID(id)+"/retry", nil), &occ); err != nil {
		return nil, err
	}
	return &occ, nil
}

// ReplayMatching re-queues every terminal occurrence matching the filter, up
// to its limit (POST /occurrences/retry).
func (s *OccurrencesService) ReplayMatching(ctx context.Context, f RetryFilter) (*RetryResult, error) {
	r := newRequest(http.MethodPost, "/occurrences/retry", nil)
	r.body = f
	var out RetryResult
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Deliveries reads one page of a fan-out occurrence's deliveries, one per
// subscription with its attempts (GET /occurrences/{id}/deliveries).
func (s *OccurrencesService) Deliveries(ctx context.Context, id string, p ListOccurrenceDeliveriesParams) (*Page[Delivery], error) {
	r := newRequest(http.MethodGet, "/occurrences/"+pathID(id)+"/deliveries", nil)
	r.query = encodeQuery(p)
	var out DeliveryPage
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	page := &Page[Delivery]{Items: out.Data}
	if out.Pagination.NextCursor != nil {
		page.NextCursor = *out.Pagination.NextCursor
	}
	return page, nil
}

// AllDeliveries iterates over every delivery of a fan-out occurrence.
func (s *OccurrencesService) AllDeliveries(ctx context.Context, id string) iter.Seq2[Delivery, error] {
	var p ListOccurrenceDeliveriesParams
	return paginate(ctx, func(ctx context.Context, cursor string) (*Page[Delivery], error) {
		if cursor != "" {
			p.Cursor = &cursor
		}
		return s.Deliveries(ctx, id, p)
	})
}

// ReplayDelivery delivers one subscription's delivery of a finished
// fan-out occurrence again (POST /occurrences/{id}/retry with
// subscription_id); Replay re-sends its failed deliveries.
func (s *OccurrencesService) ReplayDelivery(ctx context.Context, id, subscriptionID string) (*Occurrence, error) {
	r := newRequest(http.MethodPost, "/occurrences/"+pathID(id)+"/retry", nil)
	r.body = ReplayRequest{SubscriptionID: &subscriptionID}
	var occ Occurrence
	if _, err := s.c.do(ctx, r, &occ); err != nil {
		return nil, err
	}
	return &occ, nil
}
