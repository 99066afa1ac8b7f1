package client

import (
	"context"
	"iter"
	"net/http"
)

// EventHistoryParams are the parameters of an event's history (generated
// from the document).
type EventHistoryParams = GetEventsIDHistoryParams

// History lists one page of an event's history, oldest first: who changed
// what and when (GET /events/{id}/history). IncludeDeleted reaches a
// deleted or archived event.
func (s *EventsService) History(ctx context.Context, id string, p EventHistoryParams) (*Page[HistoryEntry], error) {
	r := newRequest(http.MethodGet, "/events/"+pathID(id)+"/history", nil)
	r.query = encodeQuery(p)
	var out HistoryPage
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	page := &Page[HistoryEntry]{Items: out.Data}
	if out.Pagination.NextCursor != nil {
		page.NextCursor = *out.Pagination.NextCursor
	}
	return page, nil
}

// AllHistory iterates over an event's whole history, oldest first.
func (s *EventsService) AllHistory(ctx context.Context, id string, p EventHistoryParams) iter.Seq2[HistoryEntry, error] {
	return paginate(ctx, func(ctx context.Context, cursor string) (*Page[HistoryEntry], error) {
		if cursor != "" {
			p.Cursor = &cursor
		}
		return s.History(ctx, id, p)
	})
}
