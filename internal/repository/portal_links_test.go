package repository_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
)

func portalLink(hash string, expires time.Time) model.PortalLink {
	return model.PortalLink{ID: uuid.NewString(), CodeHash: hash, Tags: []string{"customer-42"},
		ReturnURL: "https://app.example.com/back", ExpiresAt: expires, CreatedBy: "master", CreatedAt: t0}
}

// portalToken is the token row a redeem stores for l.
func portalToken(l model.PortalLink) (model.Token, error) {
	return model.Token{ID: uuid.NewString(), Subject: "portal:customer-42", Access: model.AccessPortal,
		Scope: l.Tags, ExpiresAt: l.ExpiresAt, CreatedBy: l.CreatedBy, CreatedAt: t0}, nil
}

// A portal link is used once: of redeems at once exactly one finds it and
// stores its token; a redeem that fails to issue leaves it unused; an
// expired one is not found; making a link drops the expired ones.
func TestPortalLinkRedeemsOnce(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		ctx := context.Background()
		l := portalLink("hash-1", t0.Add(time.Hour))
		require.NoError(t, s.CreatePortalLink(ctx, l, t0))

		_, err := s.RedeemPortalLink(ctx, "hash-1", t0, func(model.PortalLink) (model.Token, error) {
			return model.Token{}, errors.New("mint failed")
		})
		require.ErrorContains(t, err, "mint failed")

		var wg sync.WaitGroup
		var mu sync.Mutex
		var won []model.PortalLink
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got, err := s.RedeemPortalLink(ctx, "hash-1", t0.Add(time.Minute), portalToken)
				if errors.Is(err, model.ErrNotFound) {
					return
				}
				if !assert.NoError(t, err) {
					return
				}
				mu.Lock()
				won = append(won, got)
				mu.Unlock()
			}()
		}
		wg.Wait()
		require.Len(t, won, 1, "the link signs in once, after the failed issue left it unused")
		require.Equal(t, []string{"customer-42"}, won[0].Tags)
		require.Equal(t, "https://app.example.com/back", won[0].ReturnURL)
		require.Equal(t, t0.Add(time.Hour), won[0].ExpiresAt)
		tokens, err := s.ListTokens(ctx, "master", 10)
		require.NoError(t, err)
		require.Len(t, tokens, 1, "one session's token")
		require.Equal(t, model.AccessPortal, tokens[0].Access)

		require.NoError(t, s.CreatePortalLink(ctx, portalLink("hash-2", t0.Add(time.Hour)), t0))
		_, err = s.RedeemPortalLink(ctx, "hash-2", t0.Add(time.Hour), portalToken)
		require.ErrorIs(t, err, model.ErrNotFound, "expired at its expires_at")
		_, err = s.RedeemPortalLink(ctx, "unknown", t0, portalToken)
		require.ErrorIs(t, err, model.ErrNotFound)

		// hash-1 and hash-2 expired before this link is made: they go.
		require.NoError(t, s.CreatePortalLink(ctx, portalLink("hash-3", t0.Add(3*time.Hour)), t0.Add(2*time.Hour)))
		require.NoError(t, s.CreatePortalLink(ctx, portalLink("hash-2", t0.Add(3*time.Hour)), t0.Add(2*time.Hour)),
			"an expired link's row is gone, its hash free")
		_, err = s.RedeemPortalLink(ctx, "hash-2", t0.Add(2*time.Hour), portalToken)
		require.NoError(t, err)
	})
}
