package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/qhronos/qhronos/client"
)

func newEventsPreviewCmd(a *app) *cobra.Command {
	var count int
	var after string
	cmd := &cobra.Command{
		Use:   "preview EVENT_ID",
		Short: "Show an event's next instants, in UTC and in its time zone",
		Example: `  qhronos events preview 3f2b… --count 5
  qhronos events preview 3f2b… --after 2030-03-30T00:00:00Z`,
		Args: exactArgs("EVENT_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			p := client.PreviewEventParams{Count: &count}
			var err error
			if p.After, err = timeFlag("after", after); err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			pv, err := c.Events.Preview(cmd.Context(), args[0], p)
			if err != nil {
				return err
			}
			return a.render(pv, previewTable(pv))
		},
	}
	cmd.Flags().IntVar(&count, "count", 10, "how many instants (1-1000)")
	cmd.Flags().StringVar(&after, "after", "", "from this instant (RFC 3339 or \"in 2 hours\"; default now)")
	return cmd
}

func previewTable(pv *client.Preview) *table {
	t := &table{header: []string{"UTC", "LOCAL (" + pv.Timezone + ")"}}
	for _, in := range pv.Instants {
		t.add(in.Utc.UTC().Format(time.RFC3339), in.Local)
	}
	return t
}
