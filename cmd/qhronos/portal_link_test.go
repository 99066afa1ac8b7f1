package main

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/client"
	"github.com/qhronos/qhronos/internal/qhronostest"
)

// portal-link prints a one-time URL under the server's address that signs
// a customer in once, limited to the tags given; -o json answers the API's
// {url, expires_at}. Without --tag it is a usage error; a lifetime past a
// day is the server's 400 naming expires_in, a tag outside the token's
// scope its 403.
func TestPortalLinkCommand(t *testing.T) {
	t.Parallel()
	onBackends(t, func(t *testing.T, srv *qhronostest.Server) {
		e := serverEnv(t, srv)
		r := cli(t, e, "", "portal-link", "--tag", "customer-42", "--expires-in", "15m",
			"--return-url", "https://app.example.com/settings")
		require.Equal(t, 0, r.code, r.stderr)
		link := field(t, r.stdout, "URL")
		require.True(t, strings.HasPrefix(link, srv.URL+"/portal/login?code=qpl_"), r.stdout)
		require.Contains(t, r.stdout, "signs in once")

		var out client.PortalLink
		ok(t, e, &out, "portal-link", "--tag", "customer-42,eu")
		require.WithinDuration(t, time.Now().Add(time.Hour), out.ExpiresAt, time.Minute, "an hour by default")

		// The printed link signs in once.
		c, err := client.New(srv.URL)
		require.NoError(t, err)
		u, err := url.Parse(link)
		require.NoError(t, err)
		session, err := c.PortalLinks.Redeem(context.Background(), u.Query().Get("code"))
		require.NoError(t, err)
		require.Equal(t, []string{"customer-42"}, session.Tags)
		require.Equal(t, "https://app.example.com/settings", *session.ReturnURL)
		_, err = c.PortalLinks.Redeem(context.Background(), u.Query().Get("code"))
		require.True(t, errors.Is(err, client.ErrNotFound), "%v", err)

		r = cli(t, e, "", "portal-link")
		require.Equal(t, 2, r.code, r.stderr)
		require.Contains(t, r.stderr, "--tag")
		r = cli(t, e, "", "portal-link", "--tag", "customer-42", "--expires-in", "2d")
		require.Equal(t, 1, r.code, r.stdout)
		require.Contains(t, r.stderr, "expires_in: must be between")

		var tok client.Token
		ok(t, e, &tok, "tokens", "create", "--sub", "team", "--access", "write", "--scope", "customer-42")
		scoped := env{"QHRONOS_SERVER": srv.URL, "QHRONOS_TOKEN": *tok.Token,
			"QHRONOS_CREDENTIALS": e["QHRONOS_CREDENTIALS"]}
		r = cli(t, scoped, "", "portal-link", "--tag", "customer-43")
		require.Equal(t, 1, r.code, r.stdout)
		require.Contains(t, r.stderr, "outside token scope")
		r = cli(t, scoped, "", "portal-link", "--tag", "customer-42")
		require.Equal(t, 0, r.code, r.stderr)
	})
}
