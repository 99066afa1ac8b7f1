package client

import (
	"context"
	"iter"
	"net/http"
)

// ListConcurrencyKeysParams are the parameters of the list of concurrency
// keys (generated from the document).
type ListConcurrencyKeysParams = GetConcurrencyKeysParams

// ConcurrencyKeysService is /concurrency-keys: the keys events share a limit
// of occurrences in flight with (an event's Concurrency). A key exists while
// an event names it; its Limit is the smallest those events name.
type ConcurrencyKeysService struct{ c *Client }

// List reads one page of the keys named by events the token can read, in
// key order (GET /concurrency-keys).
func (s *ConcurrencyKeysService) List(ctx context.Context, p ListConcurrencyKeysParams) (*Page[ConcurrencyKey], error) {
	r := newRequest(http.MethodGet, "/concurrency-keys", nil)
	r.query = encodeQuery(p)
	var out ConcurrencyKeyPage
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	page := &Page[ConcurrencyKey]{Items: out.Data}
	if out.Pagination.NextCursor != nil {
		page.NextCursor = *out.Pagination.NextCursor
	}
	return page, nil
}

// All iterates over every key the token can see, in key order.
func (s *ConcurrencyKeysService) All(ctx context.Context, p ListConcurrencyKeysParams) iter.Seq2[ConcurrencyKey, error] {
	return paginate(ctx, func(ctx context.Context, cursor string) (*Page[ConcurrencyKey], error) {
		if cursor != "" {
			p.Cursor = &cursor
		}
		return s.List(ctx, p)
	})
}

// Get reads one key with its occurrences in flight and waiting
// (GET /concurrency-keys/{key}); ErrNotFound when no event the token can
// read names it.
func (s *ConcurrencyKeysService) Get(ctx context.Context, key string) (*ConcurrencyKey, error) {
	var out ConcurrencyKey
	if _, err := s.c.do(ctx, newRequest(http.MethodGet, "/concurrency-keys/"+pathID(key), nil), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Pause stops the key's occurrences from taking a slot: they wait, pending
// with reason concurrency_wait, while the runs in flight go on
// (POST /concurrency-keys/{key}/pause). A token limited to tags needs to be
// able to modify every event naming the key (ErrForbidden otherwise).
func (s *ConcurrencyKeysService) Pause(ctx context.Context, key string) (*ConcurrencyKey, error) {
	return s.post(ctx, key, "/pause")
}

// Resume lets the key's oldest waiting occurrences fire at once, as many as
// it has room for (POST /concurrency-keys/{key}/resume). Same access as Pause.
func (s *ConcurrencyKeysService) Resume(ctx context.Context, key string) (*ConcurrencyKey, error) {
	return s.post(ctx, key, "/resume")
}

func (s *ConcurrencyKeysService) post(ctx context.Context, key, action string) (*ConcurrencyKey, error) {
	r := newRequest(http.MethodPost, "/concurrency-keys/"+pathID(key)+action, nil)
	r.idempotent = true // pausing or resuming twice ends in the same state
	var out ConcurrencyKey
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
