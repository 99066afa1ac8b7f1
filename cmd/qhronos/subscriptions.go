package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/qhronos/qhronos/client"
)

func newSubscriptionsCmd(a *app) *cobra.Command {
	cmd := group("subscriptions", "Manage subscriptions: endpoints subscribed to a topic or a pattern of topics, with a CEL filter",
		newSubscriptionsCreateCmd(a), newSubscriptionsListCmd(a), newSubscriptionsGetCmd(a),
		newSubscriptionsUpdateCmd(a), newSubscriptionsPauseCmd(a), newSubscriptionsResumeCmd(a),
		newSubscriptionsDeleteCmd(a), newSubscriptionsDeliveriesCmd(a))
	cmd.Aliases = []string{"subscription", "subs"}
	cmd.Long = `A subscription asks for the firings of a topic, or of every topic a pattern names (segments
may be *, one segment each: digest.* names digest.daily and digest.weekly, and topics to come), to
be delivered to one endpoint. --filter narrows them with a CEL expression over topic, name, tags,
metadata, scheduled_at and payload that gives true or false; without one, every firing goes.
A named topic must exist ("qhronos topics create"); a pattern need not match any yet.
Subscriptions are scoped by --tag like endpoints: a token limited to tags sees and changes only
the subscriptions carrying one of its tags, and gives new ones tags inside its scope.`
	cmd.Example = `  qhronos topics create digest.daily
  qhronos subscriptions create --topic digest.daily --endpoint 5c9d… --filter 'metadata.plan == "pro"' --tag billing
  qhronos subscriptions create --topic 'digest.*' --endpoint 5c9d…
  qhronos subscriptions list --topic digest.daily
  qhronos subscriptions pause 0b7e…
  qhronos subscriptions deliveries 0b7e…`
	return cmd
}

// subscriptionFlags are a subscription's members as flags; update sends
// only the flags given.
type subscriptionFlags struct {
	topic, endpoint, filter, description string
	tags                                 []string
	paused, noFilter, noTags             bool
}

func (f *subscriptionFlags) register(cmd *cobra.Command, creating bool) {
	fs := cmd.Flags()
	topicHelp, endpointHelp := "the topic's name, or a pattern with * segments (such as digest.*)", "the endpoint id"
	if creating {
		topicHelp += " (required)"
		endpointHelp = "the id of the endpoint the firings are delivered to (required)"
	}
	fs.StringVar(&f.topic, "topic", "", topicHelp)
	fs.StringVar(&f.endpoint, "endpoint", "", endpointHelp)
	fs.StringVar(&f.filter, "filter", "", "a CEL expression over topic, name, tags, metadata, scheduled_at and payload "+
		"giving true for the firings to deliver (none: every firing)")
	fs.StringVar(&f.description, "description", "", "what the subscription is for (at most 1000 characters)")
	fs.StringSliceVar(&f.tags, "tag", nil, "a tag scoping the subscription like an endpoint (repeat or comma-separate)")
	if creating {
		fs.BoolVar(&f.paused, "paused", false, "create it paused: nothing is delivered until resume")
	} else {
		fs.BoolVar(&f.noFilter, "no-filter", false, "remove the filter: every firing is delivered")
		fs.BoolVar(&f.noTags, "no-tags", false, "clear the tags")
	}
}

// request builds a create's body from the flags.
func (f *subscriptionFlags) request(cmd *cobra.Command) (client.TopicSubscriptionRequest, error) {
	set := cmd.Flags().Changed
	if !set("topic") || !set("endpoint") {
		return client.TopicSubscriptionRequest{}, usagef("--topic and --endpoint are required")
	}
	in := client.TopicSubscriptionRequest{Topic: &f.topic, EndpointID: &f.endpoint, Tags: f.tags}
	if set("filter") {
		in.Filter = &f.filter
	}
	if set("description") {
		in.Description = &f.description
	}
	if set("paused") {
		in.Paused = &f.paused
	}
	return in, nil
}

// patch builds an update's members from the flags that were set;
// --no-filter sends "filter": null, --no-tags an empty list.
func (f *subscriptionFlags) patch(cmd *cobra.Command) (map[string]any, error) {
	set := cmd.Flags().Changed
	if f.noFilter && set("filter") {
		return nil, usagef("--no-filter: not with --filter")
	}
	if f.noTags && set("tag") {
		return nil, usagef("--no-tags: not with --tag")
	}
	out := map[string]any{}
	for flag, member := range map[string]string{"topic": "topic", "endpoint": "endpoint_id", "filter": "filter",
		"description": "description"} {
		if set(flag) {
			v, _ := cmd.Flags().GetString(flag)
			out[member] = v
		}
	}
	if f.noFilter {
		out["filter"] = nil
	}
	if set("tag") || f.noTags {
		out["tags"] = orEmpty(f.tags)
	}
	if len(out) == 0 {
		return nil, usagef("nothing to change: give a flag")
	}
	return out, nil
}

func (a *app) subscriptionTable(s *client.TopicSubscription) *table {
	z := a.localZone()
	t := fields("id", s.ID, "topic", s.Topic, "endpoint", s.EndpointID, "filter", filterText(s.Filter, 0),
		"description", orDash(s.Description), "tags", list(s.Tags), "paused", flag(&s.Paused),
		"version", fmt.Sprint(s.Version), "created", z.when(&s.CreatedAt), "created by", s.CreatedBy,
		"updated", z.when(&s.UpdatedAt))
	t.zone = z
	return t
}

// filterText is a subscription's filter, cut to n characters when n > 0;
// "-" when it has none (every firing).
func filterText(filter *string, n int) string {
	if filter == nil || strings.TrimSpace(*filter) == "" {
		return "-"
	}
	if n > 0 {
		return truncate(*filter, n)
	}
	return *filter
}

func newSubscriptionsCreateCmd(a *app) *cobra.Command {
	var f subscriptionFlags
	cmd := &cobra.Command{
		Use:   "create --topic TOPIC --endpoint ENDPOINT_ID [flags]",
		Short: "Subscribe an endpoint to a topic or a pattern of topics",
		Example: `  qhronos subscriptions create --topic digest.daily --endpoint 5c9d…
  qhronos subscriptions create --topic 'billing.*' --endpoint 5c9d… --tag billing \
    --filter 'metadata.amount > 100 && "vip" in tags' --description "big invoices"
  qhronos subscriptions create --topic digest.daily --endpoint 5c9d… --paused -o json | jq -r .id`,
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
			s, err := c.Subscriptions.Create(cmd.Context(), in)
			if err != nil {
				return err
			}
			return a.render(s, a.subscriptionTable(s))
		},
	}
	f.register(cmd, true)
	return cmd
}

func newSubscriptionsListCmd(a *app) *cobra.Command {
	var topic, endpoint, paused string
	var tags []string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the subscriptions your token can read, newest first",
		Example: `  qhronos subscriptions list --topic digest.daily
  qhronos subscriptions list --endpoint 5c9d… --paused true
  qhronos subscriptions list --tag billing --output json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			set := cmd.Flags().Changed
			var p client.ListSubscriptionsParams
			if set("topic") {
				p.Topic = &topic
			}
			if set("endpoint") {
				p.EndpointID = &endpoint
			}
			if set("paused") {
				b, err := strconv.ParseBool(paused)
				if err != nil {
					return usagef("--paused: true or false, got %q", paused)
				}
				p.Paused = &b
			}
			if len(tags) > 0 {
				p.Tags = tags
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			subs := []client.TopicSubscription{}
			for s, err := range c.Subscriptions.All(cmd.Context(), p) {
				if err != nil {
					return err
				}
				subs = append(subs, s)
			}
			t := &table{header: []string{"ID", "TOPIC", "ENDPOINT", "FILTER", "TAGS", "PAUSED"}}
			for i := range subs {
				s := &subs[i]
				t.add(s.ID, s.Topic, s.EndpointID, filterText(s.Filter, 40), list(s.Tags), flag(&s.Paused))
			}
			return a.render(subs, t)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&topic, "topic", "", "only subscriptions naming exactly this topic or pattern, as written")
	fs.StringVar(&endpoint, "endpoint", "", "only subscriptions delivering to this endpoint id")
	fs.StringVar(&paused, "paused", "", "only paused (true) or only active (false) subscriptions")
	fs.StringSliceVar(&tags, "tag", nil, "subscriptions with any of these tags (repeat or comma-separate)")
	return cmd
}

// subscriptionCmd is a command that takes a subscription id and shows the
// subscription call returns.
func subscriptionCmd(a *app, use, short, example string,
	call func(c *client.Client, cmd *cobra.Command, id string) (*client.TopicSubscription, error)) *cobra.Command {
	return &cobra.Command{
		Use:     use + " SUBSCRIPTION_ID",
		Short:   short,
		Example: example,
		Args:    exactArgs("SUBSCRIPTION_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			s, err := call(c, cmd, args[0])
			if err != nil {
				return err
			}
			return a.render(s, a.subscriptionTable(s))
		},
	}
}

func newSubscriptionsGetCmd(a *app) *cobra.Command {
	return subscriptionCmd(a, "get", "Show one subscription with its whole filter",
		"  qhronos subscriptions get 0b7e…\n  qhronos subscriptions get 0b7e… -o json | jq -r .filter",
		func(c *client.Client, cmd *cobra.Command, id string) (*client.TopicSubscription, error) {
			return c.Subscriptions.Get(cmd.Context(), id)
		})
}

func newSubscriptionsPauseCmd(a *app) *cobra.Command {
	return subscriptionCmd(a, "pause", "Pause a subscription: nothing is delivered to it until resume",
		"  qhronos subscriptions pause 0b7e…",
		func(c *client.Client, cmd *cobra.Command, id string) (*client.TopicSubscription, error) {
			return c.Subscriptions.Pause(cmd.Context(), id)
		})
}

func newSubscriptionsResumeCmd(a *app) *cobra.Command {
	return subscriptionCmd(a, "resume", "Resume a paused subscription: its firings are delivered again",
		"  qhronos subscriptions resume 0b7e…",
		func(c *client.Client, cmd *cobra.Command, id string) (*client.TopicSubscription, error) {
			return c.Subscriptions.Resume(cmd.Context(), id)
		})
}

func newSubscriptionsUpdateCmd(a *app) *cobra.Command {
	var f subscriptionFlags
	cmd := &cobra.Command{
		Use:   "update SUBSCRIPTION_ID [flags]",
		Short: "Change a subscription: only the flags given change",
		Example: `  qhronos subscriptions update 0b7e… --filter 'metadata.region == "eu"'
  qhronos subscriptions update 0b7e… --no-filter          # every firing again
  qhronos subscriptions update 0b7e… --topic 'digest.*' --endpoint 5c9d… --no-tags`,
		Args: exactArgs("SUBSCRIPTION_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			body, err := f.patch(cmd)
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			s, err := c.Subscriptions.UpdateFields(cmd.Context(), args[0], body)
			if err != nil {
				return err
			}
			return a.render(s, a.subscriptionTable(s))
		},
	}
	f.register(cmd, false)
	return cmd
}

func newSubscriptionsDeleteCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "delete SUBSCRIPTION_ID",
		Short:   "Delete a subscription: its endpoint receives the topic's firings no more",
		Example: `  qhronos subscriptions delete 0b7e…`,
		Args:    exactArgs("SUBSCRIPTION_ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			if err := c.Subscriptions.Delete(cmd.Context(), args[0]); err != nil {
				return err
			}
			return a.render(map[string]string{"deleted": args[0]}, &table{rows: [][]string{{"deleted " + args[0]}}})
		},
	}
}
