package main

import "github.com/spf13/cobra"

func newEventsDeleteCmd(a *app) *cobra.Command {
	var ifMatch, key string
	cmd := &cobra.Command{
		Use:   "delete EVENT_ID | --key KEY",
		Short: "Delete an event: future occurrences are cancelled, history is kept",
		Example: `  qhronos events delete 3f2b…
  qhronos events delete 3f2b… --if-match '"4"'
  qhronos events delete --key cart:user-42`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if key != "" {
				if len(args) > 0 || ifMatch != "" {
					return usagef("--key: takes no EVENT_ID and no --if-match")
				}
				c, err := a.client()
				if err != nil {
					return err
				}
				if err := c.Events.DeleteByKey(cmd.Context(), key); err != nil {
					return err
				}
				return a.render(map[string]any{"key": key, "deleted": true}, &table{rows: [][]string{{"deleted " + key}}})
			}
			if err := exactArgs("EVENT_ID")(cmd, args); err != nil {
				return err
			}
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
	cmd.Flags().StringVar(&key, "key", "", "delete the event with this key (in your token's key scope)")
	cmd.Flags().StringVar(&ifMatch, "if-match", "", "only if the event's ETag is still this (412 otherwise)")
	return cmd
}
