package lifecycle

import (
	"context"

	"github.com/qhronos/qhronos/internal/auth"
	"github.com/qhronos/qhronos/internal/repository"
)

// ListConcurrencyKeys lists the concurrency keys the principal can see
// (named by an event it may read), in key order after after.
func (s *Service) ListConcurrencyKeys(ctx context.Context, p auth.Principal, after string, limit int) ([]repository.ConcurrencyKey, error) {
	f := repository.ConcurrencyKeyFilter{After: after, Limit: limit}
	f.Scope, f.Unrestricted = p.ScopeFilter()
	return s.store.ListConcurrencyKeys(ctx, f)
}

// GetConcurrencyKey returns one key the principal can see; 404 otherwise.
func (s *Service) GetConcurrencyKey(ctx context.Context, p auth.Principal, key string) (repository.ConcurrencyKey, error) {
	f := repository.ConcurrencyKeyFilter{Key: key, Limit: 1}
	f.Scope, f.Unrestricted = p.ScopeFilter()
	keys, err := s.store.ListConcurrencyKeys(ctx, f)
	if err != nil {
		return repository.ConcurrencyKey{}, err
	}
	if len(keys) == 0 {
		return repository.ConcurrencyKey{}, errNotFound
	}
	return keys[0], nil
}

// PauseConcurrencyKey pauses or resumes a key. A key is shared by every
// event naming it, so a principal limited to tags may change it only when it
// may modify all of them (403 otherwise; 404 when it sees none). A resume
// announces the waiters it made due.
func (s *Service) PauseConcurrencyKey(ctx context.Context, p auth.Principal, key string, paused bool) (repository.ConcurrencyKey, error) {
	if _, err := s.GetConcurrencyKey(ctx, p, key); err != nil {
		return repository.ConcurrencyKey{}, err
	}
	if _, unrestricted := p.ScopeFilter(); !unrestricted {
		tags, err := s.store.ConcurrencyKeyTags(ctx, key)
		if err != nil {
			return repository.ConcurrencyKey{}, err
		}
		for _, t := range tags {
			if !p.CanModify(t) {
				return repository.ConcurrencyKey{}, errForbidden
			}
		}
	}
	now := s.now()
	released, err := s.store.PauseConcurrencyKey(ctx, key, paused, p.Subject, now)
	if err != nil {
		return repository.ConcurrencyKey{}, err
	}
	if released {
		s.wake(ctx, &now)
	}
	return s.GetConcurrencyKey(ctx, p, key)
}
