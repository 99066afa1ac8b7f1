package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/qhronos/qhronos/client"
)

func newSubscriptionsDeliveriesCmd(a *app) *cobra.Command {
	var limit int
	var all bool
	cmd := &cobra.Command{
		Use:   "deliveries SUBSCRIPTION_ID",
		Short: "List the attempts made to deliver a subscription's firings, newest first",
		Long: `List the attempts made to deliver the firings of a subscription's topic to its endpoint, newest
first, across occurrences: which occurrence, its attempt number, when it started, its outcome and the
HTTP status it got. --all follows the cursor through every page. "qhronos occurrences deliveries"
shows one occurrence's deliveries across subscriptions.`,
		Example: `  qhronos subscriptions deliveries 0b7e…
  qhronos subscriptions deliveries 0b7e… --all -o json | jq -r '.[] | select(.outcome == "failed") | .occurrence_id'`,
		Args: exactArgs("SUBSCRIPTION_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if limit < 1 {
				return usagef("--limit: must be at least 1")
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			atts := []client.Attempt{}
			p := client.ListSubscriptionDeliveriesParams{Limit: &limit}
			for {
				page, err := c.Subscriptions.Deliveries(cmd.Context(), args[0], p)
				if err != nil {
					return err
				}
				atts = append(atts, page.Items...)
				if !all || page.NextCursor == "" || p.Cursor != nil && *p.Cursor == page.NextCursor {
					break
				}
				p.Cursor = &page.NextCursor
			}
			t := &table{header: []string{"OCCURRENCE", "ATTEMPT", "STARTED", "OUTCOME", "CODE"}, zone: a.localZone()}
			for i := range atts {
				at := &atts[i]
				t.add(at.OccurrenceID, fmt.Sprint(at.Attempt), t.zone.when(&at.StartedAt), at.Outcome, num(at.StatusCode))
			}
			return a.render(atts, t)
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 50, "page size (the server caps it at 500)")
	cmd.Flags().BoolVar(&all, "all", false, "follow the cursor through every page")
	return cmd
}
