package client

import (
	"context"
	"net/http"
	"time"
)

// PauseUntil pauses an event with a reason and, when until is not zero,
// resumes it by itself then (POST /events/{id}/pause). catchUp is "skip"
// (the default when empty) or "fire".
func (s *EventsService) PauseUntil(ctx context.Context, id string, until time.Time, reason, catchUp string) (*Event, error) {
	body := PauseRequest{}
	if !until.IsZero() {
		body.Until = &until
	}
	if reason != "" {
		body.Reason = &reason
	}
	if catchUp != "" {
		body.CatchUp = Ptr(PauseRequestCatchUp(catchUp))
	}
	return s.postWith(ctx, id, "/pause", body)
}

// ResumeWith resumes a paused event, choosing what the instants inside the
// pause do ("skip" or "fire") (POST /events/{id}/resume).
func (s *EventsService) ResumeWith(ctx context.Context, id, catchUp string) (*Event, error) {
	return s.postWith(ctx, id, "/resume", ResumeRequest{CatchUp: Ptr(ResumeRequestCatchUp(catchUp))})
}

func (s *EventsService) postWith(ctx context.Context, id, action string, body any) (*Event, error) {
	r := newRequest(http.MethodPost, "/events/"+pathID(id)+action, nil)
	r.body = body
	var ev Event
	if _, err := s.c.do(ctx, r, &ev); err != nil {
		return nil, err
	}
	return &ev, nil
}

// Exceptions lists an event's exceptions (GET /events/{id}/exceptions).
func (s *EventsService) Exceptions(ctx context.Context, id string) ([]Exception, error) {
	var out struct {
		Data []Exception `json:"data"`
	}
	if _, err := s.c.do(ctx, newRequest(http.MethodGet, "/events/"+pathID(id)+"/exceptions", nil), &out); err != nil {
		return nil, err
	}
	return out.Data, nil
}

// AddException skips or moves one planned instant of an event, materialized
// or not (POST /events/{id}/exceptions).
func (s *EventsService) AddException(ctx context.Context, id string, ex Exception) (*Exception, error) {
	r := newRequest(http.MethodPost, "/events/"+pathID(id)+"/exceptions", nil)
	r.body = ex
	var out Exception
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteException removes the exception at an instant
// (DELETE /events/{id}/exceptions/{at}).
func (s *EventsService) DeleteException(ctx context.Context, id string, at time.Time) error {
	path := "/events/" + pathID(id) + "/exceptions/" + pathID(at.UTC().Format(time.RFC3339Nano))
	_, err := s.c.do(ctx, newRequest(http.MethodDelete, path, nil), nil)
	return err
}

// Skip skips one occurrence still ahead (POST /occurrences/{id}/skip).
func (s *OccurrencesService) Skip(ctx context.Context, id, reason string) (*Occurrence, error) {
	var body any
	if reason != "" {
		body = map[string]string{"reason": reason}
	}
	return s.control(ctx, id, "/skip", body)
}

// Unskip undoes a skip while the instant is still ahead
// (POST /occurrences/{id}/unskip).
func (s *OccurrencesService) Unskip(ctx context.Context, id string) (*Occurrence, error) {
	return s.control(ctx, id, "/unskip", nil)
}

// Move moves one occurrence still ahead to another future moment, keeping
// its id (POST /occurrences/{id}/move).
func (s *OccurrencesService) Move(ctx context.Context, id string, to time.Time, reason string) (*Occurrence, error) {
	body := map[string]any{"to": to}
	if reason != "" {
		body["reason"] = reason
	}
	return s.control(ctx, id, "/move", body)
}

func (s *OccurrencesService) control(ctx context.Context, id, action string, body any) (*Occurrence, error) {
	r := newRequest(http.MethodPost, "/occurrences/"+pathID(id)+action, nil)
	r.body = body
	var occ Occurrence
	if _, err := s.c.do(ctx, r, &occ); err != nil {
		return nil, err
	}
	return &occ, nil
}

// NextFiring is when ev fires next. For an event that is not paused it is
// NextRunAt. A paused event has no NextRunAt; when its pause has an end, the
// next firing is known: the pause's end if it fires the instants it held
// (pause_catch_up "fire") and one fell inside the pause, else the first
// instant after the pause that is not skipped (GET /events/{id}/preview).
// Nil means none is known: paused until resumed by hand, or the series ends.
func (s *EventsService) NextFiring(ctx context.Context, ev *Event) (*time.Time, error) {
	if ev.Status != EventStatusPaused || ev.PausedUntil == nil {
		return ev.NextRunAt, nil
	}
	until := *ev.PausedUntil
	if ev.PauseCatchUp != nil && *ev.PauseCatchUp == EventPauseCatchUpFire {
		held, err := s.firstFiring(ctx, ev.ID, nil)
		if err != nil {
			return nil, err
		}
		if held != nil && held.Before(until) {
			return &until, nil
		}
	}
	// The preview's after is exclusive and instants have microsecond
	// precision: one microsecond earlier includes an instant at the end.
	from := until.Add(-time.Microsecond)
	return s.firstFiring(ctx, ev.ID, &from)
}

// firstFiring is the first instant of an event's preview after after (now
// when nil) that is not skipped; nil when none is among the next 100.
func (s *EventsService) firstFiring(ctx context.Context, id string, after *time.Time) (*time.Time, error) {
	p, err := s.Preview(ctx, id, PreviewEventParams{Count: Ptr(100), After: after})
	if err != nil {
		return nil, err
	}
	for _, in := range p.Instants {
		if in.Skipped == nil || !*in.Skipped {
			at := in.Utc
			return &at, nil
		}
	}
	return nil, nil
}
