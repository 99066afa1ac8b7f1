package main

import (
	"time"

	"github.com/spf13/cobra"
)

func newEventsPauseCmd(a *app) *cobra.Command {
	var until, reason, catchUp string
	cmd := &cobra.Command{
		Use:   "pause EVENT_ID",
		Short: "Pause an event: its future occurrences are skipped until it resumes",
		Example: `  qhronos events pause 3f2b…
  qhronos events pause 3f2b… --until 2030-01-04T08:00:00Z --reason "office closed"`,
		Args: exactArgs("EVENT_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			at, err := timeFlag("until", until)
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			var end time.Time
			if at != nil {
				end = *at
			}
			ev, err := c.Events.PauseUntil(cmd.Context(), args[0], end, reason, catchUp)
			if err != nil {
				return err
			}
			return a.renderEvent(cmd.Context(), c, ev)
		},
	}
	f := cmd.Flags()
	f.StringVar(&until, "until", "", "resume by itself at this moment (RFC 3339, or \"in 2 hours\", \"tomorrow at 9am\")")
	f.StringVar(&reason, "reason", "", "why (shown on the event)")
	f.StringVar(&catchUp, "catch-up", "", `what the instants inside the pause do on resume: "skip" (default) or "fire"`)
	return cmd
}
