package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
)

// MaxBatch is the most events one POST /events/batch takes; CreateMany
// sends larger slices in chunks of this size.
const MaxBatch = 1000

// BatchResult is one event's outcome in CreateMany: Status is what a single
// create would have answered (201 with Event, or the error's status with
// Error and Field). Index is the event's position in CreateMany's input.
type BatchResult = EventBatchItemResult

// CreateMany creates events with POST /events/batch, MaxBatch at a time,
// each validated and written as Create would, and returns one result per
// event in input order; an event refused is a result, not an error. Each
// chunk is idempotent: with an IdempotencyKey option, chunk n of a slice
// larger than MaxBatch is sent under "<key>/<n>"; without one, every chunk
// gets a fresh key (unless retries are off), so a retried chunk never
// creates twice. On an error (the server unreachable, a 5xx, a 429 after
// the retries) it returns the results of the chunks that completed and the
// error.
func (s *EventsService) CreateMany(ctx context.Context, in []EventInput, opts ...CallOption) ([]BatchResult, error) {
	return createMany(ctx, s, in, opts)
}

// ReturnMinimal asks CreateMany and CreateManyJSON for each created
// event's id (BatchResult.Id) instead of the whole event: less to send,
// store for the idempotency key and decode when the events are not needed.
func ReturnMinimal() CallOption { return func(h http.Header) { h.Set("Prefer", "return=minimal") } }

// CreateManyJSON is CreateMany for events given as JSON objects — as read
// from a JSON Lines file — sent verbatim, so the server sees (and refuses)
// exactly what the caller has, unknown fields included.
func (s *EventsService) CreateManyJSON(ctx context.Context, in []json.RawMessage, opts ...CallOption) ([]BatchResult, error) {
	return createMany(ctx, s, in, opts)
}

// createMany sends in, MaxBatch at a time, as POST /events/batch.
func createMany[T any](ctx context.Context, s *EventsService, in []T, opts []CallOption) ([]BatchResult, error) {
	results := make([]BatchResult, 0, len(in))
	for start, n := 0, 0; start < len(in); start, n = start+MaxBatch, n+1 {
		chunk := in[start:min(start+MaxBatch, len(in))]
		r := newRequest(http.MethodPost, "/events/batch", opts)
		if key := r.header.Get("Idempotency-Key"); key != "" && len(in) > MaxBatch {
			r.header.Set("Idempotency-Key", fmt.Sprintf("%s/%d", key, n))
		}
		r.body = struct {
			Events []T `json:"events"`
		}{chunk}
		r.ensureIdempotencyKey(s.c)
		var out EventBatchResult
		if _, err := s.c.do(ctx, r, &out); err != nil {
			return results, err
		}
		if len(out.Results) != len(chunk) {
			return results, fmt.Errorf("POST /events/batch: %d results for %d events", len(out.Results), len(chunk))
		}
		for _, res := range out.Results {
			res.Index += start
			results = append(results, res)
		}
	}
	return results, nil
}
