package main

import (
	"github.com/spf13/cobra"

	"github.com/qhronos/qhronos/client"
)

func newTokensListCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "list",
		Short:   "List tokens (never the JWTs themselves)",
		Example: `  qhronos tokens list --output json`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			toks, err := c.Tokens.List(cmd.Context())
			if err != nil {
				return err
			}
			if toks == nil {
				toks = []client.Token{}
			}
			t := &table{header: []string{"ID", "SUB", "ACCESS", "SCOPE", "EXPIRES", "REVOKED"}, zone: a.localZone()}
			for i := range toks {
				t.add(tokenRow(t.zone, &toks[i])...)
			}
			return a.render(toks, t)
		},
	}
}
