package main

import (
	"sort"
	"time"

	"github.com/spf13/cobra"

	"github.com/qhronos/qhronos/client"
)

func newEventsHistoryCmd(a *app) *cobra.Command {
	var includeDeleted bool
	cmd := &cobra.Command{
		Use:   "history EVENT_ID",
		Short: "Show who changed an event, how and when, oldest first",
		Example: `  qhronos events history 3f2b…
  qhronos events history 3f2b… --include-deleted --output json`,
		Args: exactArgs("EVENT_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			p := client.EventHistoryParams{Limit: client.Ptr(500)}
			if includeDeleted {
				p.IncludeDeleted = client.Ptr(true)
			}
			entries := []client.HistoryEntry{}
			for e, err := range c.Events.AllHistory(cmd.Context(), args[0], p) {
				if err != nil {
					return err
				}
				entries = append(entries, e)
			}
			t := &table{header: []string{"AT", "ACTION", "SUBJECT", "CHANNEL", "REASON", "CHANGED"}}
			for _, e := range entries {
				changed := make([]string, 0, len(e.Changes))
				for name := range e.Changes {
					changed = append(changed, name)
				}
				sort.Strings(changed)
				t.add(e.At.UTC().Format(time.RFC3339), e.Action, e.Subject, e.Channel, str(&e.Reason),
					list(changed))
			}
			return a.render(entries, t)
		},
	}
	cmd.Flags().BoolVar(&includeDeleted, "include-deleted", false, "also show the history of a deleted or archived event")
	return cmd
}
