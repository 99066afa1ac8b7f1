package api

import (
	"net/http"
	"regexp"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/qhronos/qhronos/internal/events"
	"github.com/qhronos/qhronos/internal/fanout"
	"github.com/qhronos/qhronos/internal/input"
	"github.com/qhronos/qhronos/internal/model"
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
	in, err := events.DecodeInput(members)
	if err != nil {
		return err
	}
	once, err := s.once(c, body)
	if err != nil {
		return err
	}
	ans, err := s.Events.Create(c.Request.Context(), principal(c), createdVia(c), in, once)
	if err != nil {
		return err
	}
	writeAnswer(c, ans)
	return nil
}

func (s *Server) listEvents(c *gin.Context) error {
	q, err := parseListQuery(c, s.Now())
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
	if v := c.Query("endpoint_id"); v != "" {
		if f.EndpointID, err = input.UUID("endpoint_id", v); err != nil {
			return err
		}
	}
	if v := c.Query("topic"); v != "" {
		if err := fanout.CheckTopicName("topic", v); err != nil {
			return err
		}
		f.Topic = v
	}
	if v := c.Query("key"); v != "" {
		if err := events.CheckKey(v); err != nil {
			return err
		}
		f.Key = v
	}
	if v := c.Query("calendar_id"); v != "" {
		if f.CalendarID, err = input.UUID("calendar_id", v); err != nil {
			return err
		}
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
		out = append(out, s.eventAnswer(c, &events[i]))
	}
	if len(events) == q.limit {
		last := events[len(events)-1]
		setNextLink(c, encodeCursor(last.CreatedAt, last.ID))
	}
	c.JSON(http.StatusOK, out)
	return nil
}

// ifMatch is the request's If-Match as the events service checks it.
func ifMatch(c *gin.Context) events.Precondition { return ifMatchVersion(c, "event", etag) }

// getEvent answers 404 for a soft-deleted event unless include_deleted=true,
// which shows it with status "deleted".
func (s *Server) getEvent(c *gin.Context) error {
	includeDeleted, err := boolParam(c, "include_deleted")
	if err != nil {
		return err
	}
	ev, err := s.Events.Get(c.Request.Context(), principal(c), c.Param("id"), includeDeleted)
	if err != nil {
		return err
	}
	c.Header("ETag", etag(&ev))
	if inm := c.GetHeader("If-None-Match"); inm != "" && strings.Contains(inm, etag(&ev)) {
		c.Status(http.StatusNotModified)
		return nil
	}
	c.JSON(http.StatusOK, s.eventAnswer(c, &ev))
	return nil
}

func (s *Server) updateEvent(c *gin.Context) error {
	members, _, err := readObject(c)
	if err != nil {
		return err
	}
	in, err := events.DecodeInput(members)
	if err != nil {
		return err
	}
	ev, err := s.Events.Update(c.Request.Context(), principal(c), c.Param("id"), in, ifMatch(c))
	if err != nil {
		return err
	}
	s.writeEvent(c, &ev)
	return nil
}

// upsertEvent is PUT /events/by-key/{key}: 201 with the event it created,
// 200 with the event it replaced. debounce and max_wait are members of this
// route's body only.
func (s *Server) upsertEvent(c *gin.Context) error {
	key := c.Param("key")
	if err := events.CheckKey(key); err != nil {
		return err
	}
	members, _, err := readObject(c)
	if err != nil {
		return err
	}
	d, err := events.DecodeDebounce(members)
	if err != nil {
		return err
	}
	in, err := events.DecodeInput(members)
	if err != nil {
		return err
	}
	ev, created, err := s.Events.Upsert(c.Request.Context(), principal(c), createdVia(c), key, in, d)
	if err != nil {
		return err
	}
	c.Header("ETag", etag(&ev))
	status := http.StatusOK
	if created {
		status = http.StatusCreated
		c.Header("Location", "/events/"+ev.ID)
	}
	c.JSON(status, toEventJSON(s.redact, &ev))
	return nil
}

// deleteEventByKey is DELETE /events/by-key/{key}.
func (s *Server) deleteEventByKey(c *gin.Context) error {
	if err := s.Events.DeleteByKey(c.Request.Context(), principal(c), c.Param("key")); err != nil {
		return err
	}
	c.Status(http.StatusNoContent)
	return nil
}

func (s *Server) deleteEvent(c *gin.Context) error {
	if err := s.Events.Delete(c.Request.Context(), principal(c), c.Param("id"), ifMatch(c)); err != nil {
		return err
	}
	c.Status(http.StatusNoContent)
	return nil
}

// writeEvent answers 200 with the event and its ETag.
func (s *Server) writeEvent(c *gin.Context, ev *model.Event) {
	c.Header("ETag", etag(ev))
	c.JSON(http.StatusOK, s.eventAnswer(c, ev))
}

// eventAnswer is toEventJSON with next_run_at filled in for an event paused
// until a moment: its next firing after the pause (the stored next_run_at
// stays empty while paused). A rule that cannot be previewed leaves it
// empty, as it was: the answer is a read and does not fail for it.
func (s *Server) eventAnswer(c *gin.Context, ev *model.Event) eventJSON {
	out := toEventJSON(s.redact, ev)
	if out.NextRunAt == nil && ev.Status == model.EventPaused && ev.PausedUntil != nil {
		if next, err := s.Events.NextFiringAfterPause(c.Request.Context(), ev); err == nil {
			out.NextRunAt = next
		}
	}
	return out
}
