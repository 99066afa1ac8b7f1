package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/qhronos/qhronos/client"
)

func newEventsExceptionsCmd(a *app) *cobra.Command {
	cmd := group("exceptions", "Skip or move instants of an event that are not materialized yet",
		newExceptionsListCmd(a), newExceptionsAddCmd(a), newExceptionsDeleteCmd(a))
	cmd.Example = `  qhronos events exceptions add 3f2b… --at 2030-12-25T09:00:00Z --skip --reason Christmas
  qhronos events exceptions add 3f2b… --at 2030-12-24T09:00:00Z --move-to 2030-12-23T09:00:00Z
  qhronos events exceptions list 3f2b…
  qhronos events exceptions delete 3f2b… 2030-12-25T09:00:00Z`
	return cmd
}

func newExceptionsListCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "list EVENT_ID",
		Short:   "List an event's exceptions",
		Example: `  qhronos events exceptions list 3f2b…`,
		Args:    exactArgs("EVENT_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			exs, err := c.Events.Exceptions(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			ev, err := c.Events.Get(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			t := &table{header: []string{"AT", "ACTION", "TO", "REASON", "BY"}, zone: a.eventZone(ev.Timezone)}
			for _, ex := range exs {
				t.rows = append(t.rows, []string{t.zone.when(&ex.At), string(ex.Action), t.zone.when(ex.To), str(ex.Reason),
					str(ex.CreatedBy)})
			}
			return a.render(exs, t)
		},
	}
}

func newExceptionsAddCmd(a *app) *cobra.Command {
	var at, moveTo, reason string
	var skip bool
	cmd := &cobra.Command{
		Use:   "add EVENT_ID --at TIME (--skip | --move-to TIME)",
		Short: "Skip or move one planned instant of an event",
		Example: `  qhronos events exceptions add 3f2b… --at 2030-12-25T09:00:00Z --skip --reason Christmas
  qhronos events exceptions add 3f2b… --at 2030-12-24T09:00:00Z --move-to 2030-12-23T09:00:00Z`,
		Args: exactArgs("EVENT_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			when, err := timeFlag("at", at)
			if err != nil {
				return err
			}
			to, err := timeFlag("move-to", moveTo)
			if err != nil {
				return err
			}
			if when == nil || skip == (to != nil) {
				return usagef("add: give --at and exactly one of --skip and --move-to")
			}
			ex := client.Exception{At: *when, Action: client.ExceptionActionSkip, To: to}
			if to != nil {
				ex.Action = client.ExceptionActionMove
			}
			if reason != "" {
				ex.Reason = &reason
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			got, err := c.Events.AddException(cmd.Context(), args[0], ex)
			if err != nil {
				return err
			}
			return a.render(got, &table{rows: [][]string{{fmt.Sprintf("%s %s", got.Action, got.At.Format(time.RFC3339))}}})
		},
	}
	f := cmd.Flags()
	f.StringVar(&at, "at", "", "the planned instant (RFC 3339), as listed or previewed")
	f.BoolVar(&skip, "skip", false, "skip the instant")
	f.StringVar(&moveTo, "move-to", "", "move the instant to this moment (RFC 3339, or \"in 2 hours\", \"tomorrow at 9am\")")
	f.StringVar(&reason, "reason", "", "why")
	return cmd
}

func newExceptionsDeleteCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "delete EVENT_ID AT",
		Short:   "Remove the exception at an instant: it fires as planned again",
		Example: `  qhronos events exceptions delete 3f2b… 2030-12-25T09:00:00Z`,
		Args:    exactArgs("EVENT_ID", "AT"),
		RunE: func(cmd *cobra.Command, args []string) error {
			at, err := timeFlag("at", args[1])
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			if err := c.Events.DeleteException(cmd.Context(), args[0], *at); err != nil {
				return err
			}
			return a.render(map[string]string{"deleted": at.Format(time.RFC3339Nano)}, &table{rows: [][]string{{"deleted"}}})
		},
	}
}
