package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/qhronos/qhronos/client"
)

func newOccurrencesReplayCmd(a *app) *cobra.Command {
	var eventID, status, since, until, subscription string
	var tags []string
	var limit, statusCode int
	cmd := &cobra.Command{
		Use:     "replay [OCCURRENCE_ID]",
		Aliases: []string{"retry"},
		Short:   "Deliver an occurrence again, or every terminal occurrence matching filters",
		Long: `With an id, replay delivers that occurrence again whatever its outcome (a completed one is
re-sent): a new manual attempt with the same delivery id (webhook-id) as before, so a receiver
that drops ids it has already processed drops the replay too. The answer is the occurrence as it now is: pending, without the old error (earlier
errors stay in its attempts). With filters instead, every terminal occurrence that matches
(up to --limit) is re-queued.

An occurrence of an event that targets a topic re-sends its failed deliveries only; with
--subscription it re-sends that one subscription's delivery, failed or delivered, and no other
("qhronos occurrences deliveries ID" lists them). The subscription's owner may ask for that too.`,
		Example: `  qhronos occurrences replay 9c1d…
  qhronos occurrences replay 9c1d… --subscription 0b7e…
  qhronos occurrences replay --status failed --event 3f2b…
  qhronos occurrences replay --status failed --status-code 503 --tag billing
  qhronos occurrences replay --status failed --tag billing --since 2030-01-01T00:00:00Z --limit 500`,
		Args: func(cmd *cobra.Command, args []string) error {
			filters := cmd.Flags().Changed("event") || cmd.Flags().Changed("status") || cmd.Flags().Changed("tag") ||
				cmd.Flags().Changed("since") || cmd.Flags().Changed("until") || cmd.Flags().Changed("limit") ||
				cmd.Flags().Changed("status-code")
			switch {
			case len(args) > 1:
				return usagef("replay takes at most one OCCURRENCE_ID")
			case len(args) == 1 && filters:
				return usagef("replay: give an OCCURRENCE_ID or filters, not both")
			case len(args) == 0 && cmd.Flags().Changed("subscription"):
				return usagef("--subscription: only with an OCCURRENCE_ID")
			case len(args) == 0 && !filters:
				return usagef("replay: give an OCCURRENCE_ID, or filters (--status, --event, --tag, --since, --until) for a bulk replay")
			case cmd.Flags().Changed("subscription") && subscription == "":
				return usagef("--subscription: give a subscription id")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			if len(args) == 1 {
				replay := c.Occurrences.Replay
				if cmd.Flags().Changed("subscription") {
					replay = func(ctx context.Context, id string) (*client.Occurrence, error) {
						return c.Occurrences.ReplayDelivery(ctx, id, subscription)
					}
				}
				o, err := replay(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				return a.renderOccurrence(cmd.Context(), c, o)
			}
			f := client.RetryFilter{Tags: tags}
			if eventID != "" {
				f.EventID = &eventID
			}
			if status != "" {
				f.Status = &status
			}
			if statusCode != 0 {
				f.StatusCode = &statusCode
			}
			if cmd.Flags().Changed("limit") {
				if limit < 1 || limit > 10000 {
					return usagef("--limit: must be between 1 and 10000")
				}
				f.Limit = &limit
			}
			if f.Since, err = timeFlag("since", since); err != nil {
				return err
			}
			if f.Until, err = timeFlag("until", until); err != nil {
				return err
			}
			res, err := c.Occurrences.ReplayMatching(cmd.Context(), f)
			if err != nil {
				return err
			}
			msg := fmt.Sprintf("re-queued %d occurrences", res.Requeued)
			if res.LimitReached {
				msg += " (limit reached: more match; run again)"
			}
			return a.render(res, &table{rows: [][]string{{msg}}})
		},
	}
	f := cmd.Flags()
	f.StringVar(&subscription, "subscription", "", "with an id of a fan-out occurrence: re-send this subscription's delivery only")
	f.StringVar(&eventID, "event", "", "bulk: occurrences of this event")
	f.StringVar(&status, "status", "", "bulk: failed, completed, missed, … (comma-separate several)")
	f.StringSliceVar(&tags, "tag", nil, "bulk: occurrences of events with any of these tags")
	f.StringVar(&since, "since", "", "bulk: scheduled at or after (RFC 3339, or \"in 2 hours\", \"tomorrow at 9am\")")
	f.StringVar(&until, "until", "", "bulk: scheduled before (RFC 3339, or \"in 2 hours\", \"tomorrow at 9am\")")
	f.IntVar(&limit, "limit", 0, "bulk: at most this many (1-10000; server default otherwise)")
	f.IntVar(&statusCode, "status-code", 0, "bulk: occurrences whose last attempt answered this HTTP status")
	return cmd
}
