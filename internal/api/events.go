package api

import (
	"errors"
	"net/http"
	"regexp"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/qhronos/qhronos/internal/input"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
)

// maxNameQuery bounds the name search of GET /events?q=.
const maxNameQuery = 200

var validVia = regexp.MustCompile(`^[a-z0-9_-]{1,32}$`)

// createdVia names the client kind that created an event (X-Qhronos-Via:
// api, cli, …); unknown or malformed values fall back to "api".
func createdVia(c *gin.Context) string {
	v := strings.ToLower(c.GetHeader("X-Qhronos-Via"))
	if validVia.MatchString(v) {
		return v
	}
	return "api"
}

func (s *Server) createEvent(c *gin.Context) error {
	members, body, err := readObject(c)
	if err != nil {
		return err
	}
	in, err := parseEventInput(members)
	if err != nil {
		return err
	}
	p := principal(c)
	now := s.Now()
	ev := model.Event{
		ID: uuid.NewString(), Status: model.EventActive, CreatedBy: p.Subject, CreatedVia: createdVia(c),
		Version: 1, CreatedAt: now.UTC(), UpdatedAt: now.UTC(),
	}
	if in.Status != nil {
		switch model.EventStatus(*in.Status) {
		case model.EventActive, model.EventPaused:
			ev.Status = model.EventStatus(*in.Status)
		default:
			return input.BadRequest("status", `must be "active" or "paused" on create`)
		}
	}
	if _, err := s.applyInput(in, &ev, true, now); err != nil {
		return err
	}
	if err := p.CanCreate(ev.Tags); err != nil {
		return &input.Error{Status: http.StatusForbidden, Message: err.Error(), Field: "tags"}
	}
	return s.idempotent(c, body, func(tx *repository.Store) (int, any, error) {
		if err := s.Scheduler.CreateEvent(c.Request.Context(), tx, &ev, now); err != nil {
			return 0, nil, err
		}
		return http.StatusCreated, toEventJSON(&ev), nil
	}, func() { s.wake(c, &ev) })
}

// wake tells dispatchers (on every instance) that ev may have something due.
func (s *Server) wake(c *gin.Context, ev *model.Event) {
	if ev.NextRunAt != nil {
		s.Scheduler.Wake(c.Request.Context(), *ev.NextRunAt)
	}
}

func (s *Server) listEvents(c *gin.Context) error {
	q, err := parseListQuery(c)
	if err != nil {
		return err
	}
	f := model.EventFilter{AnyTags: q.anyTags, AllTags: q.allTags, CreatedFrom: q.from, CreatedTo: q.to,
		Limit: q.limit}
	f.Scope, f.Unrestricted = principal(c).ScopeFilter()
	if name := strings.TrimSpace(c.Query("q")); name != "" {
		if len(name) > maxNameQuery {
			return input.BadRequestf("q", "at most %d bytes", maxNameQuery)
		}
		f.NameContains = name
	}
	for _, st := range q.status {
		switch model.EventStatus(st) {
		case model.EventActive, model.EventPaused, model.EventInactive:
			f.Status = append(f.Status, model.EventStatus(st))
		default:
			return input.BadRequest("status", `must be "active", "paused" or "inactive"`)
		}
	}
	if q.cursor != "" {
		at, id, err := decodeCursor(q.cursor)
		if err != nil {
			return err
		}
		f.After = &model.EventCursor{CreatedAt: at, ID: id}
	}
	events, err := s.Store.ListEvents(c.Request.Context(), f)
	if err != nil {
		return err
	}
	out := make([]eventJSON, 0, len(events))
	for i := range events {
		out = append(out, toEventJSON(&events[i]))
	}
	if len(events) == q.limit {
		last := events[len(events)-1]
		setNextLink(c, encodeCursor(last.CreatedAt, last.ID))
	}
	c.JSON(http.StatusOK, out)
	return nil
}

// visibleEvent loads an event the principal may read; anything else is 404.
func (s *Server) visibleEvent(c *gin.Context) (model.Event, error) {
	ev, err := s.Store.GetEvent(c.Request.Context(), c.Param("id"))
	if err != nil {
		return model.Event{}, err
	}
	if !principal(c).CanRead(ev.Tags) {
		return model.Event{}, errNotFound
	}
	return ev, nil
}

// modifiableEvent loads an event the principal may change: invisible is 404,
// visible but not fully inside the scope is 403.
func (s *Server) modifiableEvent(c *gin.Context) (model.Event, error) {
	ev, err := s.visibleEvent(c)
	if err != nil {
		return ev, err
	}
	if !principal(c).CanModify(ev.Tags) {
		return model.Event{}, &input.Error{Status: http.StatusForbidden, Message: "tags: outside token scope", Field: "tags"}
	}
	return ev, nil
}

// checkIfMatch answers 412 when If-Match names another version.
func checkIfMatch(c *gin.Context, ev *model.Event) error {
	want := c.GetHeader("If-Match")
	if want == "" || want == "*" {
		return nil
	}
	for _, tag := range strings.Split(want, ",") {
		if strings.TrimPrefix(strings.TrimSpace(tag), "W/") == etag(ev) {
			return nil
		}
	}
	return &input.Error{Status: http.StatusPreconditionFailed, Message: "If-Match: the event has changed (current ETag " + etag(ev) + ")"}
}

// getEvent answers 404 for a soft-deleted event unless include_deleted=true,
// which shows it with status "deleted".
func (s *Server) getEvent(c *gin.Context) error {
	includeDeleted, err := boolParam(c, "include_deleted")
	if err != nil {
		return err
	}
	find := s.visibleEvent
	if includeDeleted {
		find = s.visibleEventAny
	}
	ev, err := find(c)
	if err != nil {
		return err
	}
	c.Header("ETag", etag(&ev))
	if inm := c.GetHeader("If-None-Match"); inm != "" && strings.Contains(inm, etag(&ev)) {
		c.Status(http.StatusNotModified)
		return nil
	}
	c.JSON(http.StatusOK, toEventJSON(&ev))
	return nil
}

func (s *Server) updateEvent(c *gin.Context) error {
	ev, err := s.modifiableEvent(c)
	if err != nil {
		return err
	}
	if err := checkIfMatch(c, &ev); err != nil {
		return err
	}
	members, _, err := readObject(c)
	if err != nil {
		return err
	}
	in, err := parseEventInput(members)
	if err != nil {
		return err
	}
	now := s.Now()
	before := ev
	if _, err := s.applyInput(in, &ev, false, now); err != nil {
		return err
	}
	p := principal(c)
	if in.Tags != nil {
		if err := p.CanCreate(ev.Tags); err != nil {
			return &input.Error{Status: http.StatusForbidden, Message: err.Error(), Field: "tags"}
		}
	}
	target := ev.Status
	if in.Status != nil {
		switch st := model.EventStatus(*in.Status); st {
		case model.EventActive, model.EventPaused, model.EventInactive:
			target = st
		default:
			return input.BadRequest("status", `must be "active", "paused" or "inactive"`)
		}
	}
	rescheduled := in.touchesSchedule() && !model.SameSchedule(&before, &ev)
	ev.UpdatedAt = now.UTC()
	err = s.Store.WithTx(c.Request.Context(), func(tx *repository.Store) error {
		return s.transition(c, tx, &ev, before.Version, target, rescheduled, now)
	})
	if errors.Is(err, model.ErrStaleVersion) && c.GetHeader("If-Match") == "" {
		return &input.Error{Status: http.StatusConflict, Message: "the event was changed concurrently; retry"}
	}
	if err != nil {
		return err
	}
	s.wake(c, &ev)
	c.Header("ETag", etag(&ev))
	c.JSON(http.StatusOK, toEventJSON(&ev))
	return nil
}

func (s *Server) deleteEvent(c *gin.Context) error {
	ev, err := s.modifiableEvent(c)
	if err != nil {
		return err
	}
	if err := checkIfMatch(c, &ev); err != nil {
		return err
	}
	var version int64
	if c.GetHeader("If-Match") != "" {
		version = ev.Version
	}
	if err := s.Store.DeleteEvent(c.Request.Context(), ev.ID, version, s.Now()); err != nil {
		return err
	}
	c.Status(http.StatusNoContent)
	return nil
}
