package main

import "github.com/spf13/cobra"

func newEventsDeleteCmd(a *app) *cobra.Command {
	var ifMatch string
	cmd := &cobra.Command{
		Use:   "delete EVENT_ID",
		Short: "Delete an event: future occurrences are cancelled, history is kept",
		Example: `  qhronos events delete 3f2b…
  qhronos events delete 3f2b… --if-match '"4"'`,
		Args: exactArgs("EVENT_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			if err := c.Events.Delete(cmd.Context(), args[0], callOptions(ifMatch, "")...); err != nil {
				return err
			}
			return a.render(map[string]any{"id": args[0], "deleted": true}, &table{rows: [][]string{{"deleted " + args[0]}}})
		},
	}
	cmd.Flags().StringVar(&ifMatch, "if-match", "", "only if the event's ETag is still this (412 otherwise)")
	return cmd
}
