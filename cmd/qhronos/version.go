package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/qhronos/qhronos/internal/buildinfo"
)

func newVersionCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print this client's version, commit and build date (qhronos status shows the server's)",
		Example: `  qhronos version
  qhronos version --output json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			info := buildinfo.Get()
			if a.output == "json" {
				return writeJSON(a.stdout, info)
			}
			_, err := fmt.Fprintln(a.stdout, "qhronos", info)
			return err
		},
	}
}
