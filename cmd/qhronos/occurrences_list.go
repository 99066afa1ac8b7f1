package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/qhronos/qhronos/client"
	"github.com/qhronos/qhronos/internal/recurrence"
)

func newOccurrencesListCmd(a *app) *cobra.Command {
	var eventID, status, from, to, order, endpoint, search string
	var tags []string
	var limit, statusCode int
	var all, archived bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List occurrences: history newest first, then upcoming nearest first",
		Long: `List occurrences. Without --order, --from or --to the server lists the history
(scheduled at or before now) newest first, then the upcoming occurrences,
nearest first; --all pages through both. --order=scheduled_at lists oldest
first and --order=-scheduled_at newest first; --from/--to list newest first.`,
		Example: `  qhronos occurrences list --event 3f2b…
  qhronos occurrences list --event 3f2b… --order=scheduled_at
  qhronos occurrences list --status failed,retrying --from 2030-01-01T00:00:00Z
  qhronos occurrences list --status failed --status-code 503
  qhronos occurrences list --status pending,retrying,awaiting_ack --to now --search nightly
  qhronos occurrences list --tag billing --all --output json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if limit < 1 {
				return usagef("--limit: must be at least 1")
			}
			p := client.ListOccurrencesParams{Tags: tags, Limit: &limit}
			if order != "" {
				o := client.OccurrenceOrder(order)
				if !o.Valid() {
					return usagef("--order: must be scheduled_at or -scheduled_at")
				}
				p.Order = &o
			}
			if eventID != "" {
				p.EventID = &eventID
			}
			if status != "" {
				p.Status = &status
			}
			if statusCode != 0 {
				p.StatusCode = &statusCode
			}
			if endpoint != "" {
				p.EndpointID = &endpoint
			}
			if search != "" {
				p.Q = &search
			}
			if archived {
				p.Archived = &archived
			}
			var err error
			if p.From, err = timeFlag("from", from); err != nil {
				return err
			}
			if p.To, err = timeFlag("to", to); err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			occs := []client.Occurrence{}
			if all {
				for o, err := range c.Occurrences.All(cmd.Context(), p) {
					if err != nil {
						return err
					}
					occs = append(occs, o)
				}
			} else {
				page, err := c.Occurrences.List(cmd.Context(), p)
				if err != nil {
					return err
				}
				occs = append(occs, page.Data...)
			}
			t := &table{header: []string{"ID", "EVENT", "SCHEDULED", "STATUS", "ATTEMPTS", "CODE", "ERROR"}, zone: a.localZone()}
			for i := range occs {
				o := &occs[i]
				t.add(o.ID, o.EventID, t.zone.when(&o.ScheduledAt), string(o.Status), fmt.Sprint(o.AttemptCount),
					num(o.StatusCode), str(o.ErrorMessage))
			}
			return a.render(occs, t)
		},
	}
	f := cmd.Flags()
	f.StringVar(&eventID, "event", "", "occurrences of this event")
	f.StringSliceVar(&tags, "tag", nil, "occurrences of events with any of these tags")
	f.StringVar(&status, "status", "", "pending, retrying, completed, failed, … (comma-separate several)")
	f.StringVar(&endpoint, "endpoint", "", "occurrences of events whose action names this endpoint id")
	f.StringVar(&search, "search", "", "occurrences of events whose name contains this text, or whose key is it")
	f.IntVar(&statusCode, "status-code", 0, "occurrences whose last attempt answered this HTTP status")
	f.StringVar(&from, "from", "", "scheduled at or after (RFC 3339, or \"in 2 hours\", \"tomorrow at 9am\")")
	f.StringVar(&to, "to", "", "scheduled before (RFC 3339, or \"in 2 hours\", \"tomorrow at 9am\")")
	f.StringVar(&order, "order", "", "scheduled_at (oldest first) or -scheduled_at (newest first); default: history, then upcoming")
	f.IntVar(&limit, "limit", 50, "page size (the server caps it at 500)")
	f.BoolVar(&all, "all", false, "follow the cursor through every page")
	f.BoolVar(&archived, "archived", false, "list the archive instead of live rows")
	return cmd
}

// timeFlag parses an optional instant flag.
func timeFlag(name, v string) (*time.Time, error) {
	if v == "" {
		return nil, nil
	}
	// The server's own parser, so every time flag takes what start_time
	// takes; natural forms ("tomorrow at 9am") are read in the local zone.
	t, err := recurrence.ParseInstant(name, v, time.Local, time.Now())
	if err != nil {
		var fe *recurrence.FieldError
		if errors.As(err, &fe) {
			return nil, usagef("--%s: %s", name, fe.Reason)
		}
		return nil, usagef("--%s: %v", name, err)
	}
	return &t, nil
}
