package main

import "github.com/spf13/cobra"

func newEventsCmd(a *app) *cobra.Command {
	cmd := group("events", "Create, inspect and control events",
		newEventsCreateCmd(a), newEventsUpsertCmd(a), newEventsListCmd(a), newEventsGetCmd(a), newEventsUpdateCmd(a),
		newEventsDeleteCmd(a), newEventsPauseCmd(a), newEventsResumeCmd(a), newEventsTriggerCmd(a),
		newEventsBackfillCmd(a), newEventsPreviewCmd(a), newEventsRotateSecretCmd(a), newEventsExceptionsCmd(a),
		newEventsHistoryCmd(a), newEventsImportCmd(a))
	cmd.Aliases = []string{"event"}
	cmd.Example = `  qhronos events create --name ping --start "in 1 minute" --webhook http://127.0.0.1:3000/hooks
  qhronos events list --tag billing
  qhronos events pause 3f2b…
  qhronos events import events.jsonl`
	return cmd
}
