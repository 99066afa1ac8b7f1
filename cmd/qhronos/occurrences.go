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

// occurrenceTable is one occurrence, in the local zone (an occurrence does
// not carry its event's zone).
func (a *app) occurrenceTable(o *client.Occurrence) *table {
	z := a.localZone()
	t := fields("id", o.ID, "event", o.EventID, "scheduled", z.when(&o.ScheduledAt), "status", string(o.Status),
		"attempts", fmt.Sprint(o.AttemptCount), "manual", flag(o.Manual), "status code", num(o.StatusCode),
		"error", str(o.ErrorMessage), "next attempt", z.when(o.NextAttemptAt), "started", z.when(o.StartedAt),
		"completed", z.when(o.CompletedAt), "reason", reasonText(o.Reason), "planned at", z.when(o.OriginalScheduledAt))
	t.zone = z
	return t
}

func reasonText(r *client.OccurrenceReason) string {
	if r == nil {
		return "-"
	}
	return string(*r)
}
