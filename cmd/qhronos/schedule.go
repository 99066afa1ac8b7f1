package main

import "github.com/spf13/cobra"

func newScheduleCmd(a *app) *cobra.Command {
	cmd := group("schedule", "Work with rules that belong to no event", newSchedulePreviewCmd(a))
	cmd.Example = `  qhronos schedule preview --rrule "FREQ=MONTHLY;BYDAY=-1FR" --timezone Europe/Prague --count 6`
	return cmd
}
