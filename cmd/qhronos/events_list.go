package main

import (
	"github.com/spf13/cobra"

	"github.com/qhronos/qhronos/client"
)

func newEventsListCmd(a *app) *cobra.Command {
	var tags, tagsAll []string
	var status, name, endpoint, topic, calendar, key string
	var limit int
	var all bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List events, newest first",
		Example: `  qhronos events list
  qhronos events list --tag billing,ops --status active
  qhronos events list --name report
  qhronos events list --calendar 6f1c2a8e-…   # the events that honour a calendar
  qhronos events list --topic digest.daily    # the events that target a topic
  qhronos events list --key cart:user-42
  qhronos events list --all --output json | jq -r '.[].id'`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if limit < 1 {
				return usagef("--limit: must be at least 1")
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			p := client.ListEventsParams{Tags: tags, TagsAll: tagsAll, Limit: &limit}
			if status != "" {
				p.Status = &status
			}
			if name != "" {
				p.Q = &name
			}
			if endpoint != "" {
				p.EndpointID = &endpoint
			}
			if topic != "" {
				p.Topic = &topic
			}
			if calendar != "" {
				p.CalendarID = &calendar
			}
			if key != "" {
				p.Key = &key
			}
			var evs []client.Event
			if all {
				for ev, err := range c.Events.All(cmd.Context(), p) {
					if err != nil {
						return err
					}
					evs = append(evs, ev)
				}
			} else {
				page, err := c.Events.List(cmd.Context(), p)
				if err != nil {
					return err
				}
				evs = page.Items
			}
			if evs == nil {
				evs = []client.Event{}
			}
			t := &table{header: []string{"ID", "NAME", "STATUS", "NEXT RUN", "SCHEDULE", "ACTION", "TAGS"}, zone: a.localZone()}
			for i := range evs {
				ev := &evs[i]
				t.add(ev.ID, ev.Name, string(ev.Status), t.zone.when(ev.NextRunAt), scheduleSummary(ev), actionSummary(ev.Action), list(ev.Tags))
			}
			return a.render(evs, t)
		},
	}
	cmd.Flags().StringSliceVar(&tags, "tag", nil, "events with any of these tags")
	cmd.Flags().StringSliceVar(&tagsAll, "tag-all", nil, "events with all of these tags")
	cmd.Flags().StringVar(&status, "status", "", "active, paused or inactive (comma-separate several)")
	cmd.Flags().StringVar(&name, "name", "", "events whose name contains this text")
	cmd.Flags().StringVar(&endpoint, "endpoint", "", "events whose action names this endpoint id")
	cmd.Flags().StringVar(&topic, "topic", "", "events that target this topic (its exact name)")
	cmd.Flags().StringVar(&calendar, "calendar", "", "events that honour this calendar id")
	cmd.Flags().StringVar(&key, "key", "", "the event with this key")
	cmd.Flags().IntVar(&limit, "limit", 50, "page size (the server caps it at 500)")
	cmd.Flags().BoolVar(&all, "all", false, "follow the cursor through every page")
	return cmd
}
