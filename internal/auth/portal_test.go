package auth

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
)

// A portal session's principal may do nothing by itself: every check of
// the package refuses it, so a route or service unaware of the portal
// refuses it too. Within the portal it acts as a write token of its tags,
// never more.
func TestPortalPrincipal(t *testing.T) {
	t.Parallel()
	p := Principal{Subject: "portal:customer-42", Access: model.AccessPortal, Scope: []string{"customer-42"},
		TokenID: "t-portal"}
	require.True(t, p.Portal())
	for _, a := range []model.Access{model.AccessRead, model.AccessWrite, model.AccessAdmin} {
		require.False(t, p.Allows(a), "alone it allows %s", a)
	}
	require.False(t, p.CanRead([]string{"customer-42"}))
	require.False(t, p.CanModify([]string{"customer-42"}))
	require.ErrorIs(t, p.CanCreate([]string{"customer-42"}), ErrForbidden)
	require.ErrorIs(t, p.CanMint(model.AccessRead, []string{"customer-42"}), ErrForbidden)
	scope, unrestricted := p.ScopeFilter()
	require.Empty(t, scope)
	require.False(t, unrestricted)

	in := p.WithinPortal()
	require.False(t, in.Portal())
	require.True(t, in.Allows(model.AccessWrite))
	require.False(t, in.Allows(model.AccessAdmin))
	require.True(t, in.CanRead([]string{"customer-42", "x"}))
	require.False(t, in.CanRead([]string{"customer-43"}))
	require.NoError(t, in.CanCreate([]string{"customer-42"}))
	require.ErrorIs(t, in.CanCreate([]string{"customer-42", "customer-43"}), ErrOutsideScope)
	in.Scope[0] = "changed"
	require.Equal(t, "customer-42", p.Scope[0], "the portal's scope is not shared")

	for _, q := range []Principal{master, admin, writerAB, readerA} {
		require.False(t, q.Portal())
		require.Equal(t, q, q.WithinPortal(), "only a portal session's principal changes")
	}
}

// No request can ask for the portal's level (POST /tokens reads it with
// ParseAccess), but a token row of that level, minted for a redeemed
// link, authenticates as a portal session's principal.
func TestPortalTokenAuthenticates(t *testing.T) {
	t.Parallel()
	_, err := ParseAccess("portal")
	require.ErrorIs(t, err, ErrInvalidAccess)
	r := row("tok-portal")
	r.Access, r.Subject, r.Scope = model.AccessPortal, "portal:customer-42", []string{"customer-42"}
	a, _, _ := newTestAuth(t, Config{}, r)
	bearer, err := a.Mint(r)
	require.NoError(t, err)
	p, err := a.Authenticate(context.Background(), bearer)
	require.NoError(t, err)
	require.True(t, p.Portal())
	require.Equal(t, []string{"customer-42"}, p.Scope)
}
