package main

import "github.com/spf13/cobra"

func newEventsGetCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "get EVENT_ID",
		Short:   "Show one event",
		Example: `  qhronos events get 3f2b6c1e-…  --output json`,
		Args:    exactArgs("EVENT_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			ev, err := c.Events.Get(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return a.render(ev, eventTable(ev))
		},
	}
}
