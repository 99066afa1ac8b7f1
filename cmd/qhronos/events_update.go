package main

import (
	"reflect"

	"github.com/spf13/cobra"
)

func newEventsUpdateCmd(a *app) *cobra.Command {
	var f eventFlags
	var ifMatch string
	cmd := &cobra.Command{
		Use:   "update EVENT_ID",
		Short: "Change the fields given; the others keep their values",
		Example: `  qhronos events update 3f2b… --description "moved to 10am" --rrule "FREQ=DAILY;BYHOUR=10"
  qhronos events update 3f2b… --start "in 2 hours"
  qhronos events update 3f2b… --tag billing --if-match '"4"'`,
		Args: exactArgs("EVENT_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := f.input(cmd, a.stdin)
			if err != nil {
				return err
			}
			if reflect.ValueOf(in).IsZero() && !f.noConcurrency {
				return usagef("events update: give at least one field to change")
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			ev, err := f.update(cmd.Context(), c, args[0], in, callOptions(ifMatch, "")...)
			if err != nil {
				return err
			}
			return a.renderEvent(cmd.Context(), c, ev)
		},
	}
	f.register(cmd.Flags())
	cmd.Flags().StringVar(&ifMatch, "if-match", "", "only if the event's ETag is still this (412 otherwise)")
	return cmd
}
