package main

import "github.com/spf13/cobra"

func newEventsGetCmd(a *app) *cobra.Command {
	var includeDeleted bool
	cmd := &cobra.Command{
		Use:   "get EVENT_ID",
		Short: "Show one event",
		Example: `  qhronos events get 3f2b6c1e-…  --output json
  qhronos events get 3f2b6c1e-…  --include-deleted`,
		Args: exactArgs("EVENT_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			get := c.Events.Get
			if includeDeleted {
				get = c.Events.GetIncludingDeleted
			}
			ev, err := get(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return a.renderEvent(cmd.Context(), c, ev)
		},
	}
	cmd.Flags().BoolVar(&includeDeleted, "include-deleted", false, "also show a deleted event (status deleted)")
	return cmd
}
