package api

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/qhronos/qhronos/internal/events"
	"github.com/qhronos/qhronos/internal/input"
)

// pauseEvent pauses an event; the optional body {until, reason, catch_up}
// makes it resume by itself and says why.
func (s *Server) pauseEvent(c *gin.Context) error {
	body, err := readOptionalObject(c)
	if err != nil {
		return err
	}
	req, err := events.DecodePause(body)
	if err != nil {
		return err
	}
	ev, err := s.Events.Pause(c.Request.Context(), principal(c), c.Param("id"), req, ifMatch(c))
	if err != nil {
		return err
	}
	s.writeEvent(c, &ev)
	return nil
}

// resumeEvent resumes a paused event; the optional body {catch_up}
// overrides what the pause said about the instants inside it.
func (s *Server) resumeEvent(c *gin.Context) error {
	body, err := readOptionalObject(c)
	if err != nil {
		return err
	}
	req, err := events.DecodeResume(body)
	if err != nil {
		return err
	}
	ev, err := s.Events.Resume(c.Request.Context(), principal(c), c.Param("id"), req, ifMatch(c))
	if err != nil {
		return err
	}
	s.writeEvent(c, &ev)
	return nil
}

// triggerEvent fires one occurrence now: marked manual, not counted toward
// COUNT, allowed while paused, honouring Idempotency-Key.
func (s *Server) triggerEvent(c *gin.Context) error {
	once, err := s.once(c, nil)
	if err != nil {
		return err
	}
	ans, err := s.Events.Trigger(c.Request.Context(), principal(c), c.Param("id"), once)
	if err != nil {
		return err
	}
	writeAnswer(c, ans)
	return nil
}

// rotateSecret issues a new signing secret, returned once; the secret in
// force until now — the event's own or the default — keeps signing beside it
// until the grace period ends.
func (s *Server) rotateSecret(c *gin.Context) error {
	grace, err := readGrace(c)
	if err != nil {
		return err
	}
	secret, ev, err := s.Events.RotateSecret(c.Request.Context(), principal(c), c.Param("id"), grace)
	if err != nil {
		return err
	}
	c.Header("ETag", etag(&ev))
	c.JSON(http.StatusOK, gin.H{"event_id": ev.ID, "hmac_secret": secret,
		"previous_secret_expires_at": ev.PreviousSecretExpires})
	return nil
}

// readGrace reads a rotation's optional body {"grace": "24h"}: how long
// the previous secret keeps signing (default 24h, at most 30 days).
func readGrace(c *gin.Context) (time.Duration, error) {
	grace := 24 * time.Hour
	if c.Request.ContentLength == 0 {
		return grace, nil
	}
	members, _, err := readObject(c)
	if err != nil {
		return 0, err
	}
	if err := input.RejectUnknown(members, input.Set("grace"), nil); err != nil {
		return 0, err
	}
	var text string
	if sent, err := input.DecodeField(members, "grace", &text); err != nil {
		return 0, err
	} else if sent {
		return input.ParseDuration("grace", text, 0, 30*24*time.Hour)
	}
	return grace, nil
}

// backfillEvent fires the event's instants of a past range
// ({from, to, respect_exceptions}).
func (s *Server) backfillEvent(c *gin.Context) error {
	members, _, err := readObject(c)
	if err != nil {
		return err
	}
	if err := input.RejectUnknown(members, input.Set("from", "to", "respect_exceptions"), nil); err != nil {
		return err
	}
	b := events.Backfill{RespectExceptions: true}
	for _, f := range []struct {
		name string
		into *events.When
	}{{"from", &b.From}, {"to", &b.To}} {
		var text string
		if sent, err := input.DecodeField(members, f.name, &text); err != nil {
			return err
		} else if !sent || text == "" {
			return input.BadRequest(f.name, "is required")
		}
		*f.into = events.When{Field: f.name, Text: text}
	}
	if raw, ok := members["respect_exceptions"]; ok && !input.IsNull(raw) {
		if _, err := input.DecodeField(members, "respect_exceptions", &b.RespectExceptions); err != nil {
			return err
		}
	}
	res, err := s.Events.Backfill(c.Request.Context(), principal(c), c.Param("id"), b)
	if err != nil {
		return err
	}
	c.JSON(http.StatusAccepted, res)
	return nil
}
