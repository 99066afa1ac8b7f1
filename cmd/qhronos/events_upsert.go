package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/qhronos/qhronos/client"
)

func newEventsUpsertCmd(a *app) *cobra.Command {
	var f eventFlags
	var debounce, maxWait string
	cmd := &cobra.Command{
		Use:   "upsert KEY",
		Short: "Create the event with this key, or replace its schedule and content",
		Long: `Create the event named KEY in your token's key scope, or replace that event's schedule and
content (PUT /events/by-key/KEY). Takes the flags of "events create". With --debounce each
upsert moves the event's one pending occurrence to that long after it; --max-wait bounds how
far a burst of upserts can push it past the first one.`,
		Example: `  qhronos events upsert cart:user-42 --name "cart reminder" --start "in 1 hour" \
      --webhook https://example.com/hooks/cart
  qhronos events upsert cart:user-42 --name "cart reminder" --webhook https://example.com/hooks/cart \
      --debounce 1h --max-wait 24h`,
		Args: exactArgs("KEY"),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := f.input(cmd, a.stdin)
			if err != nil {
				return err
			}
			if in.Name == nil || *in.Name == "" {
				return usagef("--name: required")
			}
			body, err := upsertInput(in)
			if err != nil {
				return err
			}
			if debounce != "" {
				body.Debounce = &debounce
			}
			if maxWait != "" {
				body.MaxWait = &maxWait
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			ev, _, err := c.Events.Upsert(cmd.Context(), args[0], body, client.Via("cli"))
			if err != nil {
				return err
			}
			return a.renderEvent(cmd.Context(), c, ev)
		},
	}
	f.register(cmd.Flags())
	cmd.Flags().StringVar(&debounce, "debounce", "", `each upsert moves the pending occurrence this long after it (e.g. "1h"); no --start`)
	cmd.Flags().StringVar(&maxWait, "max-wait", "", "fire no later than this long after the first upsert of a burst")
	return cmd
}

// upsertInput is the create body in as an upsert's body: the same members.
// EventUpsertInput has no topic member, so a topic goes as the action that
// names it, {"type": "topic", "params": {"topic": …}}, which the server
// takes too.
func upsertInput(in client.EventInput) (client.EventUpsertInput, error) {
	var out client.EventUpsertInput
	b, err := json.Marshal(in)
	if err == nil {
		err = json.Unmarshal(b, &out)
	}
	if err != nil {
		return out, fmt.Errorf("encode event: %w", err)
	}
	if in.Topic != nil {
		if out.Action != nil && (out.Action.Type != topicAction || out.Action.Params["topic"] != *in.Topic) {
			return out, usagef("topic: give topic or action, not both")
		}
		out.Action = &client.Action{Type: topicAction, Params: map[string]any{"topic": *in.Topic}}
	}
	return out, nil
}

// topicAction is the action type of an event that fans out to a topic.
const topicAction client.ActionType = "topic"
