package main

import (
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/qhronos/qhronos/client"
)

// noticeKindsHelp lists the notice kinds a channel may ask for, in the
// order the console's form shows them.
const noticeKindsHelp = "delivery_failed, run_failed, run_timed_out, missed, circuit_opened, circuit_closed, " +
	"endpoint_disabled, series_ended, dependency_unreachable, dependency_recovered"

func newNotificationsCmd(a *app) *cobra.Command {
	cmd := group("notifications", "Notification channels (admin): create, list, change and delete them, send a test, read their recent notices",
		newNotificationsCreateCmd(a), newNotificationsListCmd(a), newNotificationsGetCmd(a),
		newNotificationsUpdateCmd(a), newNotificationsDeleteCmd(a), newNotificationsTestCmd(a),
		newNotificationsNoticesCmd(a))
	cmd.Aliases = []string{"notification-channels", "notify"}
	cmd.Long = `Notification channels are where operator notices go: a webhook (a signed HTTP POST) or email
(through the server's SMTP settings). A channel takes the notice kinds it lists (--kind; none: every
kind) about the events and endpoints carrying one of its tags (--tag; none: every notice, the
installation-wide ones such as dependency_unreachable included).

Kinds: ` + noticeKindsHelp + `.
missed tells once per outage that an event's instants did not fire (recorded missed, or still
pending notifications.missed_after past their time): a dead man's switch.`
	cmd.Example = `  qhronos notifications create --name ops --url https://ops.example.com/qhronos --kind missed --tag billing
  qhronos notifications create --name oncall --type email --to oncall@example.com --kind circuit_opened
  qhronos notifications list
  qhronos notifications update 7a1e… --no-tags
  qhronos notifications test 7a1e…
  qhronos notifications notices 7a1e… --limit 10`
	return cmd
}

// channelFlags are a channel's members as flags; update sends only the
// flags given.
type channelFlags struct {
	name, typ, url, secret string
	to, kinds, tags        []string
	noKinds, noTags        bool
}

func (f *channelFlags) register(cmd *cobra.Command, creating bool) {
	fs := cmd.Flags()
	fs.StringVar(&f.name, "name", "", "the channel's name (unique)")
	if creating {
		fs.StringVar(&f.typ, "type", "", "webhook or email (default: email with --to, else webhook); it cannot change later")
	}
	fs.StringVar(&f.url, "url", "", "webhook channels: where notices are POSTed (must pass the outbound policy)")
	secretHelp := "webhook channels: the signing secret, 16 to 256 characters (default: a generated whsec_ secret, shown once)"
	if !creating {
		secretHelp = "webhook channels: a new signing secret, 16 to 256 characters"
	}
	fs.StringVar(&f.secret, "secret", "", secretHelp)
	fs.StringSliceVar(&f.to, "to", nil, "email channels: a recipient address (repeat or comma-separate)")
	fs.StringSliceVar(&f.kinds, "kind", nil, "a notice kind the channel takes (repeat or comma-separate; none: every kind): "+
		noticeKindsHelp)
	fs.StringSliceVar(&f.tags, "tag", nil, "take only notices about events and endpoints with this tag (repeat or comma-separate; none: every notice)")
	if !creating {
		fs.BoolVar(&f.noKinds, "no-kinds", false, "clear the kinds: the channel takes every kind")
		fs.BoolVar(&f.noTags, "no-tags", false, "clear the tags: the channel takes every notice, installation-wide ones too")
	}
}

// orEmpty keeps a list flag given as "" an empty list rather than null.
func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// request builds a create's body from the flags.
func (f *channelFlags) request(cmd *cobra.Command) (client.NotificationChannelRequest, error) {
	set := cmd.Flags().Changed
	if !set("name") {
		return client.NotificationChannelRequest{}, usagef("--name: required")
	}
	typ := f.typ
	if typ == "" {
		typ = "webhook"
		if set("to") {
			typ = "email"
		}
	}
	in := client.NotificationChannelRequest{Name: &f.name, Type: client.Ptr(client.NotificationChannelRequestType(typ)),
		To: f.to, Tags: f.tags}
	if set("url") {
		in.URL = &f.url
	}
	if set("secret") {
		in.Secret = &f.secret
	}
	for _, k := range f.kinds {
		in.Kinds = append(in.Kinds, client.NotificationChannelRequestKinds(k))
	}
	return in, nil
}

// patch builds an update's members from the flags that were set; --no-kinds
// and --no-tags send an empty list.
func (f *channelFlags) patch(cmd *cobra.Command) (map[string]any, error) {
	set := cmd.Flags().Changed
	if f.noKinds && set("kind") {
		return nil, usagef("--no-kinds: not with --kind")
	}
	if f.noTags && set("tag") {
		return nil, usagef("--no-tags: not with --tag")
	}
	out := map[string]any{}
	for flag, v := range map[string]string{"name": f.name, "url": f.url, "secret": f.secret} {
		if set(flag) {
			out[flag] = v
		}
	}
	if set("to") {
		out["to"] = orEmpty(f.to)
	}
	if set("kind") || f.noKinds { // with --no-kinds f.kinds is empty
		out["kinds"] = orEmpty(f.kinds)
	}
	if set("tag") || f.noTags {
		out["tags"] = orEmpty(f.tags)
	}
	if len(out) == 0 {
		return nil, usagef("nothing to change: give a flag")
	}
	return out, nil
}

// channelDestination is where a channel's notices go: the webhook's URL as
// the API shows it, or the recipients.
func channelDestination(ch *client.NotificationChannel) string {
	if len(ch.To) > 0 {
		return list(ch.To)
	}
	return str(ch.URL)
}

// channelKinds and channelTags show an empty list as what it means: every
// notice.
func channelKinds(ch *client.NotificationChannel) string {
	if len(ch.Kinds) == 0 {
		return "all"
	}
	names := make([]string, 0, len(ch.Kinds))
	for _, k := range ch.Kinds {
		names = append(names, string(k))
	}
	return list(names)
}

func channelTags(ch *client.NotificationChannel) string {
	if len(ch.Tags) == 0 {
		return "all"
	}
	return list(ch.Tags)
}

func (a *app) channelTable(ch *client.NotificationChannel) *table {
	z := a.localZone()
	t := fields("id", ch.ID, "name", ch.Name, "type", string(ch.Type), "to", channelDestination(ch),
		"kinds", channelKinds(ch), "tags", channelTags(ch))
	if ch.Type == client.NotificationChannelTypeWebhook {
		t.add("SECRET SET:", flag(&ch.SecretSet))
	}
	t.add("CREATED:", z.when(&ch.CreatedAt))
	t.add("CREATED BY:", ch.CreatedBy)
	t.add("UPDATED:", z.when(&ch.UpdatedAt))
	if ch.Secret != nil {
		t.add("SECRET:", *ch.Secret)
		t.add("", "(shown once: store it now; receivers verify notices with it)")
	}
	t.zone = z
	return t
}

func newNotificationsCreateCmd(a *app) *cobra.Command {
	var f channelFlags
	cmd := &cobra.Command{
		Use:   "create --name NAME (--url URL | --type email --to ADDRESS) [flags]",
		Short: "Add a notification channel; a webhook's signing secret is shown once",
		Example: `  qhronos notifications create --name ops --url https://ops.example.com/qhronos --kind missed --kind circuit_opened
  qhronos notifications create --name billing-oncall --type email --to a@example.com --to b@example.com --tag billing
  qhronos notifications create --name ops --url https://ops.example.com/qhronos -o json | jq -r .secret`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := f.request(cmd)
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			ch, err := c.NotificationChannels.Create(cmd.Context(), in)
			if err != nil {
				return err
			}
			return a.render(ch, a.channelTable(ch))
		},
	}
	f.register(cmd, true)
	return cmd
}

func newNotificationsGetCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "get CHANNEL_ID",
		Short:   "Show one notification channel (its secret never: it was shown once, on create)",
		Example: `  qhronos notifications get 7a1e… --output json`,
		Args:    exactArgs("CHANNEL_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			ch, err := c.NotificationChannels.Get(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return a.render(ch, a.channelTable(ch))
		},
	}
}

func newNotificationsUpdateCmd(a *app) *cobra.Command {
	var f channelFlags
	cmd := &cobra.Command{
		Use:   "update CHANNEL_ID [flags]",
		Short: "Change a notification channel: only the flags given change; its type cannot",
		Example: `  qhronos notifications update 7a1e… --kind missed --kind endpoint_disabled --tag billing --tag ops
  qhronos notifications update 7a1e… --no-kinds --no-tags     # every notice again
  qhronos notifications update 7a1e… --to oncall@example.com --name oncall`,
		Args: exactArgs("CHANNEL_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			body, err := f.patch(cmd)
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			ch, err := c.NotificationChannels.UpdateFields(cmd.Context(), args[0], body)
			if err != nil {
				return err
			}
			return a.render(ch, a.channelTable(ch))
		},
	}
	f.register(cmd, false)
	return cmd
}

func newNotificationsDeleteCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "delete CHANNEL_ID",
		Short:   "Delete a notification channel: notices stop going to it",
		Example: `  qhronos notifications delete 7a1e…`,
		Args:    exactArgs("CHANNEL_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			if err := c.NotificationChannels.Delete(cmd.Context(), args[0]); err != nil {
				return err
			}
			return a.render(map[string]string{"deleted": args[0]}, &table{rows: [][]string{{"deleted " + args[0]}}})
		},
	}
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
			t := &table{header: []string{"ID", "NAME", "TYPE", "TO", "KINDS", "TAGS"}}
			for i := range chans {
				ch := &chans[i]
				t.add(ch.ID, ch.Name, string(ch.Type), channelDestination(ch), channelKinds(ch), channelTags(ch))
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
