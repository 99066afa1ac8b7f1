package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/qhronos/qhronos/client"
)

func newOccurrencesAttemptsCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "attempts OCCURRENCE_ID",
		Short:   "List the delivery attempts of an occurrence",
		Example: `  qhronos occurrences attempts 9c1d…`,
		Args:    exactArgs("OCCURRENCE_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			atts, err := c.Occurrences.Attempts(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if atts == nil {
				atts = []client.Attempt{}
			}
			t := &table{header: []string{"ATTEMPT", "STARTED", "DURATION", "CODE", "OUTCOME", "MANUAL", "ERROR"}}
			for _, at := range atts {
				dur := "-"
				if at.DurationMs != nil {
					dur = (time.Duration(*at.DurationMs) * time.Millisecond).String()
				}
				t.add(fmt.Sprint(at.Attempt), at.StartedAt.UTC().Format(time.RFC3339), dur, num(at.StatusCode),
					at.Outcome, flag(at.Manual), str(at.Error))
			}
			return a.render(atts, t)
		},
	}
}
