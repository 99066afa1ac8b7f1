package main

import (
	"encoding/json"

	"github.com/spf13/cobra"

	"github.com/qhronos/qhronos/client"
)

func newSchedulePreviewCmd(a *app) *cobra.Command {
	var start, timezone, rrule, cron, schedule, after string
	var count int
	cmd := &cobra.Command{
		Use:   "preview",
		Short: "Show the next instants of a rule without creating an event",
		Example: `  qhronos schedule preview --rrule "FREQ=DAILY;BYHOUR=9;BYMINUTE=0" --timezone America/New_York
  qhronos schedule preview --cron "0 9 * * MON-FRI" --count 3
  qhronos schedule preview --schedule '{"frequency":"monthly","by_month_day":[-1]}' --start 2030-01-31T10:00:00Z`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			set := cmd.Flags().Changed
			n := 0
			for _, f := range []string{"rrule", "cron", "schedule"} {
				if set(f) {
					n++
				}
			}
			if n != 1 {
				return usagef("--rrule, --cron or --schedule: give exactly one")
			}
			if count < 1 || count > 1000 {
				return usagef("--count: must be between 1 and 1000")
			}
			in := client.PreviewRequest{Count: &count}
			if set("rrule") {
				in.Rrule = &rrule
			}
			if set("cron") {
				in.Cron = &cron
			}
			if set("schedule") {
				var s client.Schedule
				if err := json.Unmarshal([]byte(schedule), &s); err != nil {
					return usagef("--schedule: not a schedule object: %v", err)
				}
				in.Schedule = &s
			}
			if start != "" {
				in.StartTime = &start
			}
			if timezone != "" {
				in.Timezone = &timezone
			}
			var err error
			if in.After, err = timeFlag("after", after); err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			pv, err := c.Schedules.Preview(cmd.Context(), in)
			if err != nil {
				return err
			}
			return a.render(pv, previewTable(pv))
		},
	}
	f := cmd.Flags()
	f.StringVar(&start, "start", "", "start_time (RFC 3339 or natural language; default now)")
	f.StringVar(&timezone, "timezone", "", "IANA time zone (default UTC)")
	f.StringVar(&rrule, "rrule", "", "RFC 5545 RRULE")
	f.StringVar(&cron, "cron", "", "cron expression or @every")
	f.StringVar(&schedule, "schedule", "", "schedule object as JSON")
	f.StringVar(&after, "after", "", "from this instant (RFC 3339, or \"in 2 hours\", \"tomorrow at 9am\")")
	f.IntVar(&count, "count", 10, "how many instants (1-1000)")
	return cmd
}
