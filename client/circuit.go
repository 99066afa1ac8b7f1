package client

import (
	"context"
	"iter"
	"net/http"
)

// CircuitHistoryParams are the parameters of an endpoint's circuit history
// (generated from the document).
type CircuitHistoryParams = GetEndpointCircuitHistoryParams

// CircuitHistory lists one page of an endpoint's circuit transitions,
// newest first: opened, reopened, closed, disabled, enabled, with why and
// who (GET /endpoints/{id}/circuit-history).
func (s *EndpointsService) CircuitHistory(ctx context.Context, id string, p CircuitHistoryParams) (*Page[CircuitEntry], error) {
	r := newRequest(http.MethodGet, "/endpoints/"+pathID(id)+"/circuit-history", nil)
	r.query = encodeQuery(p)
	var out CircuitHistoryPage
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	page := &Page[CircuitEntry]{Items: out.Data}
	if out.Pagination.NextCursor != nil {
		page.NextCursor = *out.Pagination.NextCursor
	}
	return page, nil
}

// AllCircuitHistory iterates over an endpoint's kept circuit history,
// newest first.
func (s *EndpointsService) AllCircuitHistory(ctx context.Context, id string, p CircuitHistoryParams) iter.Seq2[CircuitEntry, error] {
	return paginate(ctx, func(ctx context.Context, cursor string) (*Page[CircuitEntry], error) {
		if cursor != "" {
			p.Cursor = &cursor
		}
		return s.CircuitHistory(ctx, id, p)
	})
}
