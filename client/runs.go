package client

import (
	"context"
	"net/http"
)

// Runs of callback events. An event with completion "callback" stays
// running after its receiver accepts a delivery, until the receiver reports
// how the work ended (Complete) or its max_runtime passes without a report
// or a heartbeat (status timed_out).

// RunToken authenticates one call with a run token instead of the client's
// token: the Qhronos-Run-Token header (or payload run.token) of a callback
// event's delivery. It is valid for Complete and Heartbeat of that
// delivery's occurrence only, so a receiver needs no API token of its own:
//
//	c, _ := client.New(qhronosURL)
//	c.Occurrences.Complete(ctx, occurrenceID, report, client.RunToken(token))
func RunToken(token string) CallOption {
	return func(h http.Header) { h.Set("Authorization", "Bearer "+token) }
}

// Complete reports how the run of a callback event's occurrence ended
// (POST /occurrences/{id}/complete): status succeeded completes the
// occurrence, failed fails it. report.Output is any JSON value (at most
// 16 KB): a struct, a map, or a json.RawMessage sent as it is; the server
// keeps it, redacted, as the occurrence's run.output. It needs the run
// token (RunToken) or a token that may write the event.
//
// The same report again answers the occurrence as it is, so Complete is
// retried like a PUT. A different report after the run ended, or any
// report after it timed out, is ErrConflict (a late report is kept in
// run.status but does not change the outcome).
func (s *OccurrencesService) Complete(ctx context.Context, id string, report RunReport, opts ...CallOption) (*Occurrence, error) {
	return s.run(ctx, id, "/complete", report, opts)
}

// Heartbeat says the run of a callback event's occurrence is still alive:
// its deadline moves to now plus the event's max_runtime
// (POST /occurrences/{id}/heartbeat); the answer's Run.Deadline is the new
// one. Same credentials as Complete; ErrConflict once the run is over.
func (s *OccurrencesService) Heartbeat(ctx context.Context, id string, opts ...CallOption) (*Occurrence, error) {
	return s.run(ctx, id, "/heartbeat", nil, opts)
}

func (s *OccurrencesService) run(ctx context.Context, id, action string, body any, opts []CallOption) (*Occurrence, error) {
	r := newRequest(http.MethodPost, "/occurrences/"+pathID(id)+action, opts)
	r.body = body
	// A repeated report or heartbeat leaves the run as the first one did.
	r.idempotent = true
	var occ Occurrence
	if _, err := s.c.do(ctx, r, &occ); err != nil {
		return nil, err
	}
	return &occ, nil
}
