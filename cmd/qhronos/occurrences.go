package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/qhronos/qhronos/client"
)

func newOccurrencesCmd(a *app) *cobra.Command {
	cmd := group("occurrences", "Inspect occurrences, their attempts, and replay them",
		newOccurrencesListCmd(a), newOccurrencesGetCmd(a), newOccurrencesAttemptsCmd(a), newOccurrencesReplayCmd(a),
		newOccurrencesSkipCmd(a), newOccurrencesUnskipCmd(a), newOccurrencesMoveCmd(a))
	cmd.Aliases = []string{"occurrence", "occ"}
	cmd.Example = `  qhronos occurrences list --event 3f2b… --status failed
  qhronos occurrences attempts 9c1d…
  qhronos occurrences replay --status failed --tag billing`
	return cmd
}

func occurrenceTable(o *client.Occurrence) *table {
	return fields("id", o.ID, "event", o.EventID, "scheduled", when(&o.ScheduledAt), "status", string(o.Status),
		"attempts", fmt.Sprint(o.AttemptCount), "manual", flag(o.Manual), "status code", num(o.StatusCode),
		"error", str(o.ErrorMessage), "next attempt", when(o.NextAttemptAt), "started", when(o.StartedAt),
		"completed", when(o.CompletedAt), "reason", reasonText(o.Reason), "planned at", when(o.OriginalScheduledAt))
}

func reasonText(r *client.OccurrenceReason) string {
	if r == nil {
		return "-"
	}
	return string(*r)
}
