package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/qhronos/qhronos/internal/events"
	"github.com/qhronos/qhronos/internal/input"
	"github.com/qhronos/qhronos/internal/model"
)

// controlBody is the body of skip, move and exception requests.
type controlBody struct {
	At     *string `json:"at"`
	Action string  `json:"action"`
	To     *string `json:"to"`
	Reason string  `json:"reason"`
}

// readControl decodes an optional control body strictly.
func readControl(c *gin.Context) (controlBody, error) {
	var b controlBody
	body, err := readOptionalObject(c)
	if err != nil || body == nil {
		return b, err
	}
	return b, input.DecodeStrict(body, "body", &b)
}

// skipOccurrence skips one occurrence still ahead ({reason} optional).
func (s *Server) skipOccurrence(c *gin.Context) error {
	b, err := readControl(c)
	if err != nil {
		return err
	}
	occ, err := s.Events.SkipOccurrence(c.Request.Context(), principal(c), c.Param("id"), b.Reason)
	return writeOccurrence(c, occ, err)
}

// unskipOccurrence makes an occurrence skipped by hand due again.
func (s *Server) unskipOccurrence(c *gin.Context) error {
	occ, err := s.Events.UnskipOccurrence(c.Request.Context(), principal(c), c.Param("id"))
	return writeOccurrence(c, occ, err)
}

// moveOccurrence moves one occurrence still ahead ({to, reason}).
func (s *Server) moveOccurrence(c *gin.Context) error {
	b, err := readControl(c)
	if err != nil {
		return err
	}
	if b.To == nil {
		return input.BadRequest("to", "is required")
	}
	occ, err := s.Events.MoveOccurrence(c.Request.Context(), principal(c), c.Param("id"),
		events.When{Field: "to", Text: *b.To}, b.Reason)
	return writeOccurrence(c, occ, err)
}

func writeOccurrence(c *gin.Context, occ model.Occurrence, err error) error {
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, toOccurrenceJSON(&occ))
	return nil
}

// listExceptions lists an event's exceptions.
func (s *Server) listExceptions(c *gin.Context) error {
	exs, err := s.Events.Exceptions(c.Request.Context(), principal(c), c.Param("id"))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, gin.H{"data": exs})
	return nil
}

// addException skips or moves one planned instant ({at, action, to, reason}).
func (s *Server) addException(c *gin.Context) error {
	b, err := readControl(c)
	if err != nil {
		return err
	}
	if b.At == nil {
		return input.BadRequest("at", "is required")
	}
	in := events.ExceptionInput{At: events.When{Field: "at", Text: *b.At}, Action: b.Action, Reason: b.Reason}
	if b.To != nil {
		in.To = &events.When{Field: "to", Text: *b.To}
	}
	ex, err := s.Events.AddException(c.Request.Context(), principal(c), c.Param("id"), in)
	if err != nil {
		return err
	}
	c.JSON(http.StatusCreated, ex)
	return nil
}

// deleteException removes the exception at the instant in the path.
func (s *Server) deleteException(c *gin.Context) error {
	at := events.When{Field: "at", Text: c.Param("at")}
	if err := s.Events.DeleteException(c.Request.Context(), principal(c), c.Param("id"), at); err != nil {
		return err
	}
	c.Status(http.StatusNoContent)
	return nil
}
