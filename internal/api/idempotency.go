package api

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"unicode"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/qhronos/qhronos/internal/input"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
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

// idempotent runs a write in one transaction. With an Idempotency-Key the
// first answer is stored in that same transaction, per principal, so a
// retried request — even a concurrent one — gets the first answer replayed
// (Idempotent-Replayed: true) instead of a second write; the same key with a
// different request is 409. after runs once the write has committed.
func (s *Server) idempotent(c *gin.Context, body []byte, run func(tx *repository.Store) (int, any, error), after func()) error {
	ctx := c.Request.Context()
	key := c.GetHeader("Idempotency-Key")
	if len(key) > maxIdempotencyKey {
		return input.BadRequestf("Idempotency-Key", "must be at most %d characters", maxIdempotencyKey)
	}
	if !validIdempotencyKey(key) {
		return input.BadRequest("Idempotency-Key", "must be printable UTF-8 text")
	}
	principalKey := principal(c).Key()
	sum := sha256.Sum256(append([]byte(c.Request.Method+" "+c.Request.URL.Path+"\n"), body...))
	hash := hex.EncodeToString(sum[:])
	now := s.Now()
	if key != "" {
		rec, err := s.Store.GetIdempotency(ctx, principalKey, key, now)
		if err == nil {
			return replay(c, rec, hash)
		}
		if !errors.Is(err, model.ErrNotFound) {
			return err
		}
	}
	var status int
	var out []byte
	if key == "" {
		// Without a key each write is atomic on its own (a create is one
		// statement on PostgreSQL); no transaction round trips are needed.
		st, v, err := run(s.Store)
		if err != nil {
			return err
		}
		if out, err = json.Marshal(v); err != nil {
			return err
		}
		if after != nil {
			after()
		}
		setLocation(c, st, out)
		c.Data(st, "application/json; charset=utf-8", out)
		return nil
	}
	err := s.Store.WithTx(ctx, func(tx *repository.Store) error {
		st, v, err := run(tx)
		if err != nil {
			return err
		}
		if out, err = json.Marshal(v); err != nil {
			return err
		}
		status = st
		return tx.PutIdempotency(ctx, model.IdempotencyRecord{Principal: principalKey, Key: key,
			RequestHash: hash, StatusCode: st, Body: out, CreatedAt: now, ExpiresAt: now.Add(s.opts.IdempotencyTTL)})
	})
	if errors.Is(err, model.ErrConflict) {
		// A concurrent request with the same key committed first.
		rec, gerr := s.Store.GetIdempotency(ctx, principalKey, key, now)
		if gerr != nil {
			return gerr
		}
		return replay(c, rec, hash)
	}
	if err != nil {
		return err
	}
	if after != nil {
		after()
	}
	setLocation(c, status, out)
	c.Data(status, "application/json; charset=utf-8", out)
	return nil
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

func replay(c *gin.Context, rec model.IdempotencyRecord, hash string) error {
	if rec.RequestHash != hash {
		return &input.Error{Status: http.StatusConflict, Field: "Idempotency-Key",
			Message: "Idempotency-Key: already used with a different request"}
	}
	c.Header("Idempotent-Replayed", "true")
	setLocation(c, rec.StatusCode, rec.Body)
	c.Data(rec.StatusCode, "application/json; charset=utf-8", rec.Body)
	return nil
}
