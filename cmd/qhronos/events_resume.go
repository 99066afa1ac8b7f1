package main

import "github.com/spf13/cobra"

func newEventsResumeCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "resume EVENT_ID",
		Short:   "Resume a paused event from now; instants inside the pause never fire",
		Example: `  qhronos events resume 3f2b…`,
		Args:    exactArgs("EVENT_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			ev, err := c.Events.Resume(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return a.renderEvent(cmd.Context(), c, ev)
		},
	}
}
