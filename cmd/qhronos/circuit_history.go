package main

import (
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/qhronos/qhronos/client"
)

func newEndpointsCircuitHistoryCmd(a *app) *cobra.Command {
	var limit int
	cmd := &cobra.Command{
		Use:   "circuit-history ENDPOINT_ID",
		Short: "Show an endpoint's circuit transitions, newest first: opened, reopened, closed, disabled, enabled",
		Example: `  qhronos endpoints circuit-history 5c9d…
  qhronos endpoints circuit-history 5c9d… --limit 500 --output json`,
		Args: exactArgs("ENDPOINT_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			entries := []client.CircuitEntry{}
			p := client.CircuitHistoryParams{Limit: client.Ptr(min(limit, 500))}
			for e, err := range c.Endpoints.AllCircuitHistory(cmd.Context(), args[0], p) {
				if err != nil {
					return err
				}
				entries = append(entries, e)
				if len(entries) >= limit {
					break
				}
			}
			t := &table{header: []string{"AT", "CHANGE", "FROM", "TO", "FAILURES", "WHO", "REASON"}}
			for _, e := range entries {
				who := e.Subject
				if who != "" && e.Channel != "" {
					who += " (" + e.Channel + ")"
				}
				t.add(e.At.UTC().Format(time.RFC3339), string(e.Change), string(e.FromState), string(e.ToState),
					strconv.Itoa(e.ConsecutiveFailures), who, e.Reason)
			}
			return a.render(entries, t)
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 50, "show at most this many entries (the server keeps the newest 200)")
	return cmd
}

func newNotificationsCmd(a *app) *cobra.Command {
	cmd := group("notifications", "Notification channels (admin): list them, send a test, read their recent notices",
		newNotificationsListCmd(a), newNotificationsTestCmd(a), newNotificationsNoticesCmd(a))
	cmd.Aliases = []string{"notification-channels", "notify"}
	cmd.Example = `  qhronos notifications list
  qhronos notifications test 7a1e…
  qhronos notifications notices 7a1e… --limit 10`
	return cmd
}

func newNotificationsListCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "list",
		Short:   "List the notification channels stored through the API",
		Example: `  qhronos notifications list --output json`,
		Args:    exactArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			chans, err := c.NotificationChannels.List(cmd.Context())
			if err != nil {
				return err
			}
			t := &table{header: []string{"ID", "NAME", "TYPE", "TO", "KINDS"}}
			for _, ch := range chans {
				to := ""
				if ch.URL != nil {
					to = *ch.URL
				}
				if len(ch.To) > 0 {
					to = list(ch.To)
				}
				names := make([]string, 0, len(ch.Kinds))
				for _, k := range ch.Kinds {
					names = append(names, string(k))
				}
				kinds := list(names)
				if kinds == "" {
					kinds = "all"
				}
				t.add(ch.ID, ch.Name, string(ch.Type), to, kinds)
			}
			return a.render(chans, t)
		},
	}
}

func newNotificationsTestCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "test CHANNEL_ID",
		Short:   "Send a test notice to a channel now and show whether it took it",
		Example: `  qhronos notifications test 7a1e…`,
		Args:    exactArgs("CHANNEL_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			res, err := c.NotificationChannels.Test(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			t := &table{header: []string{"DELIVERED", "ERROR"}}
			t.add(strconv.FormatBool(res.Delivered), str(res.Error))
			return a.render(res, t)
		},
	}
}

func newNotificationsNoticesCmd(a *app) *cobra.Command {
	var limit int
	cmd := &cobra.Command{
		Use:   "notices CHANNEL_ID",
		Short: "Show the notices sent to a channel, newest first, and how each went",
		Example: `  qhronos notifications notices 7a1e…
  qhronos notifications notices 7a1e… --limit 10 --output json`,
		Args: exactArgs("CHANNEL_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			notices := []client.SentNotice{}
			p := client.NoticesParams{Limit: client.Ptr(min(limit, 500))}
			for {
				page, err := c.NotificationChannels.Notices(cmd.Context(), args[0], p)
				if err != nil {
					return err
				}
				notices = append(notices, page.Items...)
				if page.NextCursor == "" || len(notices) >= limit {
					break
				}
				p.Cursor = &page.NextCursor
			}
			notices = notices[:min(len(notices), limit)]
			t := &table{header: []string{"AT", "KIND", "OUTCOME", "ANSWER", "TEST", "SUMMARY"}}
			for _, n := range notices {
				t.add(n.At.UTC().Format(time.RFC3339), n.Kind, string(n.Outcome), n.Answer, strconv.FormatBool(n.Test),
					n.Summary)
			}
			return a.render(notices, t)
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 50, "show at most this many notices (the server keeps the newest 200)")
	return cmd
}
