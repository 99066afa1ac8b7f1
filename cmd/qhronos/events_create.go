package main

import (
	"github.com/spf13/cobra"

	"github.com/qhronos/qhronos/client"
)

func newEventsCreateCmd(a *app) *cobra.Command {
	var f eventFlags
	var idempotencyKey string
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create an event",
		Example: `  qhronos events create --name ping --start "in 1 minute" --webhook http://127.0.0.1:3000/hooks
  qhronos events create --name standup --start "tomorrow at 9am" --timezone Europe/Prague \
      --rrule "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR" --client dev --tag team
  qhronos events create --name digest --start "tomorrow at 8am" --rrule FREQ=DAILY \
      --topic digest.daily --metadata '{"region":"eu"}'
  qhronos events create -f event.json --idempotency-key deploy-42`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := f.input(cmd, a.stdin)
			if err != nil {
				return err
			}
			if in.Name == nil || *in.Name == "" {
				return usagef("--name: required")
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			opts := append(callOptions("", idempotencyKey), client.Via("cli"))
			ev, err := c.Events.Create(cmd.Context(), in, opts...)
			if err != nil {
				return err
			}
			return a.renderEvent(cmd.Context(), c, ev)
		},
	}
	f.register(cmd.Flags())
	cmd.Flags().StringVar(&idempotencyKey, "idempotency-key", "", "repeat-safe key: the same key and body create once")
	return cmd
}
