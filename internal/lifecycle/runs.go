package lifecycle

import (
	"context"
	"errors"
	"net/http"

	"github.com/qhronos/qhronos/internal/auth"
	"github.com/qhronos/qhronos/internal/events"
	"github.com/qhronos/qhronos/internal/input"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
)

// CompleteRun records how the run of a callback event's occurrence ended.
// byRunToken says the caller holds the occurrence's run token (checked by
// the API); otherwise p must be able to modify the event. The output is
// kept redacted like any value the API shows.
func (s *Service) CompleteRun(ctx context.Context, p auth.Principal, byRunToken bool, id string,
	r events.RunReport) (model.Occurrence, error) {
	ev, err := s.runOccurrence(ctx, p, byRunToken, id)
	if err != nil {
		return model.Occurrence{}, err
	}
	var output *string
	if r.Output != nil {
		o := string(s.redact.JSON(r.Output))
		output = &o
	}
	now := s.now()
	got, err := s.store.CompleteRun(ctx, id, r.Status, output, now)
	if err == nil && (ev.Buffers() || ev.Concurrency != nil) {
		s.wake(ctx, &now) // what waited for this run is due now
	}
	return got, runConflict(got, err)
}

// Heartbeat says the run of a callback event's occurrence is alive: its
// deadline moves to now + the event's max_runtime.
func (s *Service) Heartbeat(ctx context.Context, p auth.Principal, byRunToken bool, id string) (model.Occurrence, error) {
	ev, err := s.runOccurrence(ctx, p, byRunToken, id)
	if err != nil {
		return model.Occurrence{}, err
	}
	got, err := s.store.Heartbeat(ctx, id, ev.RunDeadline(), s.now())
	return got, runConflict(got, err)
}

// runOccurrence returns the event of an occurrence whose run the caller
// may report: any event the principal may modify (404 when it may not
// read it, 403 when it may only read), or the token's own occurrence.
func (s *Service) runOccurrence(ctx context.Context, p auth.Principal, byRunToken bool, id string) (model.Event, error) {
	occ, err := s.store.GetOccurrence(ctx, id)
	if err != nil {
		return model.Event{}, err
	}
	ev, err := s.store.GetEventAny(ctx, occ.EventID)
	if err != nil {
		return model.Event{}, err
	}
	if !byRunToken {
		if !p.CanRead(ev.Tags) {
			return model.Event{}, errNotFound
		}
		if !p.CanModify(ev.Tags) {
			return model.Event{}, errForbidden
		}
	}
	if !ev.Callback() && occ.Status != model.OccurrenceRunning && occ.RunStatus == nil {
		return model.Event{}, &input.Error{Status: http.StatusConflict,
			Message: `the event's occurrences complete by the receiver's response ("completion": "response"); it has no runs to report`}
	}
	return ev, nil
}

// runConflict turns a report on an occurrence with no run under way into
// a 409 that says what the occurrence is.
func runConflict(occ model.Occurrence, err error) error {
	if !errors.Is(err, repository.ErrRunEnded) {
		return err
	}
	msg := "occurrence is " + string(occ.Status) + "; its run is not under way"
	switch {
	case occ.RunStatus != nil && !occ.Status.Terminal():
		msg = "the run was already reported " + *occ.RunStatus + " while its delivery was in flight"
	case occ.Status == model.OccurrenceTimedOut && occ.RunStatus != nil:
		msg = "occurrence is timed_out: the run's report came after its deadline and is kept as late"
	case occ.Status.Terminal() && occ.RunStatus != nil:
		msg = "occurrence is " + string(occ.Status) + ": its run was reported " + *occ.RunStatus
	case occ.Status.Terminal():
		msg = "occurrence is " + string(occ.Status) + "; its run is over"
	}
	return &input.Error{Status: http.StatusConflict, Message: msg}
}
