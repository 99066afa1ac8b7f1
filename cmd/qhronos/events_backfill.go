package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/qhronos/qhronos/client"
)

func newEventsBackfillCmd(a *app) *cobra.Command {
	var from, to string
	var ignoreExceptions bool
	cmd := &cobra.Command{
		Use:   "backfill EVENT_ID",
		Short: "Fire the instants of a past range that have no occurrence yet",
		Long: `backfill creates an occurrence, due now, for every instant of a recurring event's pattern
from --from to --to (both included) that has none yet; instants that already have one are
left as they are, so running it again creates nothing more. The range may start before the
event's start time and must not reach into the future; it may hold at most 10,000 instants.
Exceptions and calendars apply (their instants are recorded skipped) unless
--ignore-exceptions. A one-time or paused event is refused.`,
		Example: `  qhronos events backfill 3f2b… --from 2025-01-01T00:00:00Z --to 2025-01-31T23:59:59Z
  qhronos events backfill 3f2b… --from "7 days ago" --to now --ignore-exceptions`,
		Args: exactArgs("EVENT_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if from == "" || to == "" {
				return usagef("backfill: --from and --to are required")
			}
			first, err := timeFlag("from", from)
			if err != nil {
				return err
			}
			last, err := timeFlag("to", to)
			if err != nil {
				return err
			}
			in := client.BackfillRequest{From: *first, To: *last}
			if ignoreExceptions {
				in.RespectExceptions = client.Ptr(false)
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			res, err := c.Events.Backfill(cmd.Context(), args[0], in)
			if err != nil {
				return err
			}
			return a.renderBackfill(cmd.Context(), c, res)
		},
	}
	f := cmd.Flags()
	f.StringVar(&from, "from", "", "first instant of the range (RFC 3339, or \"7 days ago\", \"2030-01-01\")")
	f.StringVar(&to, "to", "", "last instant of the range, not in the future (RFC 3339, or \"now\", \"today at 6am\")")
	f.BoolVar(&ignoreExceptions, "ignore-exceptions", false, "fire every instant of the rule, also those its exceptions and calendars skip")
	return cmd
}

// renderBackfill shows the counts, and the range in the event's zone as
// the event's other tables do.
func (a *app) renderBackfill(ctx context.Context, c *client.Client, res *client.BackfillResult) error {
	if a.output == "json" {
		return writeJSON(a.stdout, res)
	}
	z := a.localZone()
	if ev, err := c.Events.Get(ctx, res.EventID); err == nil {
		z = a.eventZone(ev.Timezone)
	} else if !errors.Is(err, client.ErrNotFound) {
		return err
	}
	created := fmt.Sprint(res.Created)
	if res.Created > 0 {
		created += " (due now)"
	}
	t := fields("event", res.EventID, "from", z.when(&res.From), "to", z.when(&res.To),
		"instants", fmt.Sprint(res.Instants), "created", created,
		"skipped", fmt.Sprint(res.Skipped), "existing", fmt.Sprint(res.Existing))
	t.zone = z
	return a.render(res, t)
}
