package events

import (
	"context"
	"errors"
	"net/http"

	"github.com/qhronos/qhronos/internal/input"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
)

// Once makes a write answer once per Idempotency-Key: the first answer is
// stored per principal in the write's own transaction, so a retried request
// — even a concurrent one — gets it replayed instead of a second write; the
// same key with a different request is 409. A zero Once (no key) writes
// without a transaction of its own (a create is one statement on
// PostgreSQL).
type Once struct {
	Key         string
	Principal   string
	RequestHash string
	// Render turns the write's result into the answer stored and sent.
	Render func(result any) (status int, body []byte, err error)
}

// Answer is a write's answer, fresh or replayed.
type Answer struct {
	Status   int
	Body     []byte
	Replayed bool
}

// once runs write under o.
func (s *Service) once(ctx context.Context, o Once, write func(tx *repository.Store) (any, error)) (Answer, error) {
	now := s.now()
	if o.Key == "" {
		v, err := write(s.store)
		if err != nil {
			return Answer{}, err
		}
		st, body, err := o.Render(v)
		return Answer{Status: st, Body: body}, err
	}
	if rec, err := s.store.GetIdempotency(ctx, o.Principal, o.Key, now); err == nil {
		return replayed(rec, o.RequestHash)
	} else if !errors.Is(err, model.ErrNotFound) {
		return Answer{}, err
	}
	var ans Answer
	err := s.store.WithTx(ctx, func(tx *repository.Store) error {
		v, err := write(tx)
		if err != nil {
			return err
		}
		if ans.Status, ans.Body, err = o.Render(v); err != nil {
			return err
		}
		return tx.PutIdempotency(ctx, model.IdempotencyRecord{Principal: o.Principal, Key: o.Key,
			RequestHash: o.RequestHash, StatusCode: ans.Status, Body: ans.Body, CreatedAt: now,
			ExpiresAt: now.Add(IdempotencyTTL)})
	})
	if errors.Is(err, model.ErrConflict) {
		// A concurrent request with the same key committed first.
		rec, gerr := s.store.GetIdempotency(ctx, o.Principal, o.Key, now)
		if gerr != nil {
			return Answer{}, gerr
		}
		return replayed(rec, o.RequestHash)
	}
	return ans, err
}

func replayed(rec model.IdempotencyRecord, hash string) (Answer, error) {
	if rec.RequestHash != hash {
		return Answer{}, &input.Error{Status: http.StatusConflict, Field: "Idempotency-Key",
			Message: "Idempotency-Key: already used with a different request"}
	}
	return Answer{Status: rec.StatusCode, Body: rec.Body, Replayed: true}, nil
}
