package main

import "github.com/spf13/cobra"

func newTokensRevokeCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "revoke TOKEN_ID",
		Short:   "Revoke a token on every instance; its WebSocket sessions end",
		Example: `  qhronos tokens revoke 6a0f…`,
		Args:    exactArgs("TOKEN_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			if err := c.Tokens.Revoke(cmd.Context(), args[0]); err != nil {
				return err
			}
			return a.render(map[string]any{"id": args[0], "revoked": true}, &table{rows: [][]string{{"revoked " + args[0]}}})
		},
	}
}
