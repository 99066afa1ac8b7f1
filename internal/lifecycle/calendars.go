package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/qhronos/qhronos/internal/auth"
	"github.com/qhronos/qhronos/internal/calendar"
	"github.com/qhronos/qhronos/internal/input"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
)

// CalendarCheck checks the stored calendar before a change (the API's
// If-Match); nil means the change is unconditional.
type CalendarCheck = func(c *model.Calendar) error

var errCalendarConcurrent = &input.Error{Status: http.StatusConflict,
	Message: "the calendar was changed concurrently; retry"}

// CreateCalendar validates a calendar body and stores it. Calendars are
// scoped by their tags exactly like events.
func (s *Service) CreateCalendar(ctx context.Context, p auth.Principal, body map[string]json.RawMessage) (model.Calendar, error) {
	c, err := s.decodeCalendar(body)
	if err != nil {
		return model.Calendar{}, err
	}
	if err := mayTag(p, c.Tags); err != nil {
		return model.Calendar{}, err
	}
	now := s.now().UTC().Truncate(time.Microsecond) // as stored
	c.ID, c.Version, c.CreatedBy, c.CreatedAt, c.UpdatedAt = model.NewID(), 1, p.Subject, now, now
	if err := s.store.CreateCalendar(ctx, &c); err != nil {
		return model.Calendar{}, err
	}
	return c, nil
}

func (s *Service) decodeCalendar(body map[string]json.RawMessage) (model.Calendar, error) {
	in, err := calendar.Decode(body)
	if err != nil {
		return model.Calendar{}, err
	}
	return calendar.Validate(in, s.opts.Recurrence)
}

// GetCalendar returns a calendar the principal may read; anything else is
// not found.
func (s *Service) GetCalendar(ctx context.Context, p auth.Principal, id string) (model.Calendar, error) {
	c, err := s.store.GetCalendar(ctx, id)
	if err != nil {
		return model.Calendar{}, err
	}
	if !p.CanRead(c.Tags) {
		return model.Calendar{}, errNotFound
	}
	return c, nil
}

// ListCalendars lists the calendars the principal may read, newest first.
func (s *Service) ListCalendars(ctx context.Context, p auth.Principal, f model.CalendarFilter) ([]model.Calendar, error) {
	f.Scope, f.Unrestricted = p.ScopeFilter()
	return s.store.ListCalendars(ctx, f)
}

// modifiableCalendar loads a calendar the principal may change: invisible
// is 404, visible but not fully inside the scope is 403; then check runs.
func (s *Service) modifiableCalendar(ctx context.Context, p auth.Principal, id string, check CalendarCheck) (model.Calendar, error) {
	c, err := s.GetCalendar(ctx, p, id)
	if err != nil {
		return c, err
	}
	return changeable(p, c, c.Tags, check)
}

// UpdateCalendar replaces the calendar with body (a PUT: absent members are
// empty). When its days change, the events that use it are re-planned in
// the background: the request is recorded in the same transaction.
func (s *Service) UpdateCalendar(ctx context.Context, p auth.Principal, id string, body map[string]json.RawMessage,
	check CalendarCheck) (model.Calendar, error) {
	old, err := s.modifiableCalendar(ctx, p, id, check)
	if err != nil {
		return old, err
	}
	c, err := s.decodeCalendar(body)
	if err != nil {
		return model.Calendar{}, err
	}
	if err := mayTag(p, c.Tags); err != nil {
		return model.Calendar{}, err
	}
	now := s.now().UTC().Truncate(time.Microsecond) // as stored
	c.ID, c.CreatedBy, c.CreatedAt, c.UpdatedAt = old.ID, old.CreatedBy, old.CreatedAt, now
	c.ReplanRequestedAt = old.ReplanRequestedAt
	replan := !sameDays(&old, &c)
	err = s.store.WithTx(ctx, func(tx *repository.Store) error {
		if err := tx.UpdateCalendar(ctx, &c, old.Version); err != nil {
			return err
		}
		if !replan {
			return nil
		}
		c.ReplanRequestedAt = &now
		return tx.RequestReplan(ctx, c.ID, now)
	})
	if errors.Is(err, model.ErrStaleVersion) && check == nil {
		return model.Calendar{}, errCalendarConcurrent
	}
	if err != nil {
		return model.Calendar{}, err
	}
	return c, nil
}

// sameDays reports whether two versions of a calendar block the same days.
func sameDays(a, b *model.Calendar) bool {
	return a.Timezone == b.Timezone && slices.Equal(a.Dates, b.Dates) && slices.Equal(a.Ranges, b.Ranges) &&
		slices.Equal(a.RRules, b.RRules)
}

// DeleteCalendar removes a calendar no live event uses; otherwise 409
// saying how many do. With a precondition the delete is fenced by the
// version it checked.
func (s *Service) DeleteCalendar(ctx context.Context, p auth.Principal, id string, check CalendarCheck) error {
	c, err := s.modifiableCalendar(ctx, p, id, check)
	if err != nil {
		return err
	}
	var version int64
	if check != nil {
		version = c.Version
	}
	err = s.store.DeleteCalendar(ctx, c.ID, version)
	var inUse *repository.InUseError
	if errors.As(err, &inUse) {
		msg := "calendar is in use by an event; remove it from the event first"
		switch {
		case inUse.Events == 1:
			msg = "calendar is used by 1 event; remove it from that event first"
		case inUse.Events > 1:
			msg = fmt.Sprintf("calendar is used by %d events; remove it from them first", inUse.Events)
		}
		return &input.Error{Status: http.StatusConflict, Message: msg}
	}
	return err
}
