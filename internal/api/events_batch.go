package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/qhronos/qhronos/internal/events"
	"github.com/qhronos/qhronos/internal/input"
)

// batchRoute is the batch create's route (its body has its own limit).
const batchRoute = "/events/batch"

// createEvents is POST /events/batch: {"events": [...]} of at most
// events.MaxBatch, each decoded, validated and written as POST /events
// would; the answer is 200 with one result per event, in input order. An
// Idempotency-Key covers the whole batch.
func (s *Server) createEvents(c *gin.Context) error {
	members, body, err := readObject(c)
	if err != nil {
		return err
	}
	if err := input.RejectUnknown(members, map[string]bool{"events": true}, nil); err != nil {
		return err
	}
	raw, ok := members["events"]
	if !ok || input.IsNull(raw) {
		return input.BadRequest("events", "is required")
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return input.BadRequest("events", "must be an array of events")
	}
	if len(items) == 0 || len(items) > events.MaxBatch {
		return input.BadRequestf("events", "must hold 1 to %d events, got %d", events.MaxBatch, len(items))
	}
	batch := events.Batch{Items: make([]events.BatchItem, len(items)), ItemFault: s.itemFault}
	for i, item := range items {
		batch.Items[i] = s.decodeBatchItem(item)
	}
	once, err := s.once(c, body)
	if err != nil {
		return err
	}
	minimal := returnMinimal(c)
	once.Render = func(result any) (int, []byte, error) { return s.renderBatch(result, minimal) }
	ans, err := s.Events.CreateMany(c.Request.Context(), principal(c), createdVia(c), batch, once)
	if err != nil {
		return err
	}
	writeAnswer(c, ans)
	return nil
}

// decodeBatchItem decodes one event of a batch as POST /events decodes its
// body, held to the same size limit.
func (s *Server) decodeBatchItem(raw json.RawMessage) events.BatchItem {
	if int64(len(raw)) > s.opts.MaxBodyBytes {
		return events.BatchItem{Err: &input.Error{Status: http.StatusRequestEntityTooLarge, Field: "body",
			Message: fmt.Sprintf("event exceeds %d bytes (the limit of one create)", s.opts.MaxBodyBytes)}}
	}
	members, err := decodeObject(raw)
	if err != nil {
		return events.BatchItem{Err: err}
	}
	in, err := events.DecodeInput(members)
	return events.BatchItem{Input: in, Err: err}
}

// itemFault tells an item's own fault (a 4xx, answered in its result) from
// a failure of the server, which fails the whole batch.
func (s *Server) itemFault(err error) bool {
	status, _ := s.classify(err)
	return status < http.StatusInternalServerError
}

// returnMinimal reports a Prefer: return=minimal (RFC 7240): the client
// wants each created event's id, not the whole event (an import has no use
// for 1,000 events echoed back, and the answer stored for the
// Idempotency-Key shrinks with it).
func returnMinimal(c *gin.Context) bool {
	for _, v := range c.Request.Header.Values("Prefer") {
		for _, pref := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(pref), "return=minimal") {
				return true
			}
		}
	}
	return false
}

// batchResultJSON is one result of a batch create.
type batchResultJSON struct {
	Index  int        `json:"index"`
	Status int        `json:"status"`
	ID     string     `json:"id,omitempty"`
	Event  *eventJSON `json:"event,omitempty"`
	Error  string     `json:"error,omitempty"`
	Field  string     `json:"field,omitempty"`
}

// renderBatch renders a batch create's answer: 200 with each item's
// result, the status its single create would have answered; minimal
// leaves out the events (their ids stay).
func (s *Server) renderBatch(result any, minimal bool) (int, []byte, error) {
	results, ok := result.([]events.BatchResult)
	if !ok {
		return 0, nil, fmt.Errorf("render %T", result)
	}
	out := struct {
		Results []batchResultJSON `json:"results"`
	}{Results: make([]batchResultJSON, len(results))}
	for i, r := range results {
		res := batchResultJSON{Index: i}
		if r.Err != nil {
			status, body := s.classify(r.Err)
			res.Status, res.Error, res.Field = status, body.Error, body.Field
		} else {
			res.Status, res.ID = http.StatusCreated, r.Event.ID
			if !minimal {
				ev := toEventJSON(s.redact, r.Event)
				res.Event = &ev
			}
		}
		out.Results[i] = res
	}
	body, err := json.Marshal(out)
	return http.StatusOK, body, err
}
