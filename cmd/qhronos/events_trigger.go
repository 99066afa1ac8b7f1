package main

import "github.com/spf13/cobra"

func newEventsTriggerCmd(a *app) *cobra.Command {
	var idempotencyKey string
	cmd := &cobra.Command{
		Use:   "trigger EVENT_ID",
		Short: "Fire one manual occurrence now (also while paused)",
		Example: `  qhronos events trigger 3f2b…
  qhronos events trigger 3f2b… --idempotency-key retry-7`,
		Args: exactArgs("EVENT_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			occ, err := c.Events.Trigger(cmd.Context(), args[0], callOptions("", idempotencyKey)...)
			if err != nil {
				return err
			}
			return a.renderOccurrence(cmd.Context(), c, occ)
		},
	}
	cmd.Flags().StringVar(&idempotencyKey, "idempotency-key", "", "repeat-safe key: the same key fires once")
	return cmd
}
