package main

import "github.com/spf13/cobra"

func newEventsPauseCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "pause EVENT_ID",
		Short:   "Pause an event: its future occurrences are cancelled until it resumes",
		Example: `  qhronos events pause 3f2b…`,
		Args:    exactArgs("EVENT_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			ev, err := c.Events.Pause(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return a.render(ev, eventTable(ev))
		},
	}
}
