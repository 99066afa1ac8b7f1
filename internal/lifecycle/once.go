package lifecycle

import (
	"context"
	"errors"
	"net/http"

	"github.com/qhronos/qhronos/internal/events"
	"github.com/qhronos/qhronos/internal/input"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
)

// once runs write under o.
func (s *Service) once(ctx context.Context, o events.Once, write func(tx *repository.Store) (any, error)) (events.Answer, error) {
	now := s.now()
	if o.Key == "" {
		// write is atomic on its own (a create is one statement with its
		// history entry; a trigger opens its transaction).
		v, err := write(s.store)
		if err != nil {
			return events.Answer{}, err
		}
		st, body, err := o.Render(v)
		return events.Answer{Status: st, Body: body}, err
	}
	if rec, err := s.store.GetIdempotency(ctx, o.Principal, o.Key, now); err == nil {
		return replayed(rec, o.RequestHash)
	} else if !errors.Is(err, model.ErrNotFound) {
		return events.Answer{}, err
	}
	var ans events.Answer
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
			ExpiresAt: now.Add(events.IdempotencyTTL)})
	})
	if errors.Is(err, model.ErrConflict) {
		// A concurrent request with the same key committed first.
		rec, gerr := s.store.GetIdempotency(ctx, o.Principal, o.Key, now)
		if gerr != nil {
			return events.Answer{}, gerr
		}
		return replayed(rec, o.RequestHash)
	}
	return ans, err
}

func replayed(rec model.IdempotencyRecord, hash string) (events.Answer, error) {
	if rec.RequestHash != hash {
		return events.Answer{}, &input.Error{Status: http.StatusConflict, Field: "Idempotency-Key",
			Message: "Idempotency-Key: already used with a different request"}
	}
	return events.Answer{Status: rec.StatusCode, Body: rec.Body, Replayed: true}, nil
}
