package api

import (
	"encoding/base64"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/qhronos/qhronos/internal/input"
	"github.com/qhronos/qhronos/internal/repository"
)

// concurrencyKeyJSON is a concurrency key as the API shows it.
type concurrencyKeyJSON struct {
	Key      string     `json:"key"`
	Limit    int        `json:"limit"`
	InFlight int        `json:"in_flight"`
	Waiting  int        `json:"waiting"`
	Paused   bool       `json:"paused"`
	PausedAt *time.Time `json:"paused_at"`
	PausedBy *string    `json:"paused_by"`
}

func toConcurrencyKeyJSON(k *repository.ConcurrencyKey) concurrencyKeyJSON {
	out := concurrencyKeyJSON{Key: k.Key, Limit: k.Limit, InFlight: k.InFlight, Waiting: k.Waiting, Paused: k.Paused,
		PausedAt: k.PausedAt, PausedBy: k.PausedBy}
	if out.PausedAt != nil {
		at := out.PausedAt.UTC()
		out.PausedAt = &at
	}
	return out
}

// keyCursor is the cursor of a list in key order (concurrency keys, topic
// names): the last key shown, base64url.
func keyCursor(key string) string { return base64.RawURLEncoding.EncodeToString([]byte(key)) }

// afterKey decodes keyCursor's cursor; "" starts at the first key.
func afterKey(cursor string) (string, error) {
	if cursor == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || len(b) == 0 {
		return "", input.BadRequest("cursor", "is not a cursor this server issued")
	}
	return string(b), nil
}

// listConcurrencyKeys answers GET /concurrency-keys: the keys the token can
// see, in key order, in pages of limit with a next_cursor while more follow.
func (s *Server) listConcurrencyKeys(c *gin.Context) error {
	q, err := parseListQuery(c, s.Now())
	if err != nil {
		return err
	}
	after, err := afterKey(q.cursor)
	if err != nil {
		return err
	}
	keys, err := s.Events.ListConcurrencyKeys(c.Request.Context(), principal(c), after, q.limit+1)
	if err != nil {
		return err
	}
	keys, pagination := nextPage(c, keys, q.limit, func(last *repository.ConcurrencyKey) string { return keyCursor(last.Key) })
	data := make([]concurrencyKeyJSON, 0, len(keys))
	for i := range keys {
		data = append(data, toConcurrencyKeyJSON(&keys[i]))
	}
	c.JSON(http.StatusOK, gin.H{"data": data, "pagination": pagination})
	return nil
}

func (s *Server) getConcurrencyKey(c *gin.Context) error {
	k, err := s.Events.GetConcurrencyKey(c.Request.Context(), principal(c), c.Param("key"))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, toConcurrencyKeyJSON(&k))
	return nil
}

func (s *Server) pauseConcurrencyKey(c *gin.Context) error  { return s.setKeyPaused(c, true) }
func (s *Server) resumeConcurrencyKey(c *gin.Context) error { return s.setKeyPaused(c, false) }

// setKeyPaused answers POST /concurrency-keys/{key}/pause and /resume.
func (s *Server) setKeyPaused(c *gin.Context, paused bool) error {
	k, err := s.Events.PauseConcurrencyKey(c.Request.Context(), principal(c), c.Param("key"), paused)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, toConcurrencyKeyJSON(&k))
	return nil
}
