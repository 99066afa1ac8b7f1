package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/qhronos/qhronos/client"
)

// newStatsPunctualityCmd is `qhronos stats punctuality`: the punctuality
// report (GET /stats/punctuality) as a table, a row per group and a total.
func newStatsPunctualityCmd(a *app) *cobra.Command {
	var from, to, groupBy, tolerance string
	var tags []string
	cmd := &cobra.Command{
		Use:   "punctuality",
		Short: "Per event, endpoint or tag: instants due, on time, late, missed, skipped, failed, lateness, success",
		Example: `  qhronos stats punctuality
  qhronos stats punctuality --group-by tag --from "30 days ago" --tolerance 250ms
  qhronos stats punctuality --tag billing --output json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var p client.PunctualityParams
			for _, f := range []struct {
				name, value string
				into        **string
			}{{"from", from, &p.From}, {"to", to, &p.To}} {
				t, err := timeFlag(f.name, f.value)
				if err != nil {
					return err
				}
				if t != nil {
					s := t.UTC().Format(time.RFC3339Nano)
					*f.into = &s
				}
			}
			switch groupBy {
			case "event", "endpoint", "tag":
				g := client.GetStatsPunctualityParamsGroupBy(groupBy)
				p.GroupBy = &g
			default:
				return usagef(`--group-by: must be "event", "endpoint" or "tag"`)
			}
			if tolerance != "" {
				if _, err := time.ParseDuration(tolerance); err != nil {
					return usagef(`--tolerance: a duration like "1s" or "250ms"`)
				}
				p.Tolerance = &tolerance
			}
			p.Tag = tags
			c, err := a.client()
			if err != nil {
				return err
			}
			r, err := c.Punctuality(cmd.Context(), p)
			if err != nil {
				return err
			}
			z := a.localZone()
			t := &table{zone: z, header: []string{groupHeader(groupBy), "DUE", "ON TIME", "LATE", "MISSED", "SKIPPED",
				"FAILED", "PENDING", "LATE P50/P95/P99 MS", "SUCCESS"}}
			row := func(name string, c client.PunctualityCounts) {
				lateness := "-"
				if c.LatenessMs.Count > 0 {
					lateness = fmt.Sprintf("%d/%d/%d", c.LatenessMs.P50, c.LatenessMs.P95, c.LatenessMs.P99)
				}
				t.add(name, fmt.Sprint(c.Due), withRatio(c.OnTime, c.OnTimeRatio), fmt.Sprint(c.Late),
					fmt.Sprint(c.Missed), fmt.Sprint(c.Skipped), fmt.Sprint(c.Failed), fmt.Sprint(c.Pending), lateness,
					percent(c.SuccessRatio))
			}
			for _, g := range r.Groups {
				row(g.Name, g.Counts())
			}
			row("all", r.Total)
			if a.output != "json" {
				fmt.Fprintf(a.stdout, "instants scheduled %s to %s; on time: less than %d ms late\n",
					z.when(&r.From), z.when(&r.To), r.ToleranceMs)
			}
			return a.render(r, t)
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "window start (RFC 3339 or \"7 days ago\"; default 7 days before --to)")
	cmd.Flags().StringVar(&to, "to", "", "window end (RFC 3339 or words; default now)")
	cmd.Flags().StringVar(&groupBy, "group-by", "event", "event, endpoint or tag")
	cmd.Flags().StringVar(&tolerance, "tolerance", "", "how late still counts as on time (default 1s)")
	cmd.Flags().StringArrayVar(&tags, "tag", nil, "only events with this tag (repeatable)")
	return cmd
}

func groupHeader(groupBy string) string {
	switch groupBy {
	case "endpoint":
		return "ENDPOINT"
	case "tag":
		return "TAG"
	}
	return "EVENT"
}

// withRatio is a count and its share ("12 (92.3%)").
func withRatio(n int, r *float64) string {
	if r == nil {
		return fmt.Sprint(n)
	}
	return fmt.Sprintf("%d (%s)", n, percent(r))
}

func percent(r *float64) string {
	if r == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", *r*100)
}
