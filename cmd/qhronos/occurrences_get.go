package main

import "github.com/spf13/cobra"

func newOccurrencesGetCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "get OCCURRENCE_ID",
		Short:   "Show one occurrence",
		Example: `  qhronos occurrences get 9c1d… --output json`,
		Args:    exactArgs("OCCURRENCE_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			o, err := c.Occurrences.Get(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return a.renderOccurrence(cmd.Context(), c, o)
		},
	}
}
