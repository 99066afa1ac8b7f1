package main

import (
	"github.com/spf13/cobra"

	"github.com/qhronos/qhronos/client"
)

func newTokensCmd(a *app) *cobra.Command {
	cmd := group("tokens", "Mint, list and revoke API tokens (admin)",
		newTokensCreateCmd(a), newTokensListCmd(a), newTokensRevokeCmd(a))
	cmd.Aliases = []string{"token"}
	cmd.Example = `  qhronos tokens create --sub ci --access write --scope billing --expires 720h
  qhronos tokens list
  qhronos tokens revoke 6a0f…`
	return cmd
}

func tokenRow(z zone, t *client.Token) []string {
	return []string{t.ID, t.Sub, t.Access, list(t.Scope), z.when(&t.ExpiresAt), z.when(t.RevokedAt)}
}
