package api

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"unicode"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/qhronos/qhronos/internal/events"
	"github.com/qhronos/qhronos/internal/input"
	"github.com/qhronos/qhronos/internal/model"
)

const maxIdempotencyKey = 255

// validIdempotencyKey accepts printable UTF-8: the key is stored as text,
// which PostgreSQL refuses for invalid UTF-8 or NUL.
func validIdempotencyKey(key string) bool {
	if !utf8.ValidString(key) {
		return false
	}
	for _, r := range key {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// once reads the request's Idempotency-Key for the events service: the
// key, the principal it belongs to, the request's hash (method, path and
// body), and how the write's result is rendered — the answer stored with
// the key and replayed byte for byte.
func (s *Server) once(c *gin.Context, body []byte) (events.Once, error) {
	key := c.GetHeader("Idempotency-Key")
	if len(key) > maxIdempotencyKey {
		return events.Once{}, input.BadRequestf("Idempotency-Key", "must be at most %d characters", maxIdempotencyKey)
	}
	if !validIdempotencyKey(key) {
		return events.Once{}, input.BadRequest("Idempotency-Key", "must be printable UTF-8 text")
	}
	sum := sha256.Sum256(append([]byte(c.Request.Method+" "+c.Request.URL.Path+"\n"), body...))
	return events.Once{Key: key, Principal: principal(c).Key(), RequestHash: hex.EncodeToString(sum[:]),
		Render: s.renderCreated}, nil
}

// renderCreated renders what a create answers: the new event or occurrence.
func (s *Server) renderCreated(result any) (int, []byte, error) {
	var v any
	switch r := result.(type) {
	case *model.Event:
		v = toEventJSON(s.redact, r)
	case *model.Occurrence:
		v = toOccurrenceJSON(r)
	default:
		return 0, nil, fmt.Errorf("render %T", result)
	}
	body, err := json.Marshal(v)
	return http.StatusCreated, body, err
}

// writeAnswer sends a write's answer, fresh or replayed
// (Idempotent-Replayed: true), with the same headers either way.
func writeAnswer(c *gin.Context, ans events.Answer) {
	if ans.Replayed {
		c.Header("Idempotent-Replayed", "true")
	}
	setLocation(c, ans.Status, ans.Body)
	c.Data(ans.Status, "application/json; charset=utf-8", ans.Body)
}

// setLocation gives a 201 its Location (and an event its ETag), read from
// the answer's body so that a replayed answer carries the same headers as
// the first. An occurrence (it has an event_id) lives under /occurrences.
func setLocation(c *gin.Context, status int, body []byte) {
	if status != http.StatusCreated {
		return
	}
	var v struct {
		ID      string `json:"id"`
		EventID string `json:"event_id"`
		Version int64  `json:"version"`
	}
	if json.Unmarshal(body, &v) != nil || v.ID == "" {
		return
	}
	if v.EventID != "" {
		c.Header("Location", "/occurrences/"+v.ID)
		return
	}
	c.Header("Location", "/events/"+v.ID)
	c.Header("ETag", etag(&model.Event{ID: v.ID, Version: v.Version}))
}
