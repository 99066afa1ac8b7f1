package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/qhronos/qhronos/client"
)

// eventFlags are the fields create and update accept; update sends only
// the flags given.
type eventFlags struct {
	file, name, description, start, timezone, rrule, cron, schedule string
	webhook, clientName, action, metadata, catchUp, timeout, topic  string
	completion, maxRuntime, overlap, concurrencyKey                 string
	concurrencyLimit                                                int
	tags                                                            []string
	requireAck, tracePropagation, noConcurrency                     bool
	publishFlags
}

func (f *eventFlags) register(fs *pflag.FlagSet) {
	fs.StringVarP(&f.file, "file", "f", "", "read the event as JSON (the API's fields) from a file, - for stdin; flags override it")
	fs.StringVar(&f.name, "name", "", "name")
	fs.StringVar(&f.description, "description", "", "description")
	fs.StringVar(&f.start, "start", "", `start_time: RFC 3339 or natural language ("in 5 minutes", "tomorrow at 9am")`)
	fs.StringVar(&f.timezone, "timezone", "", "IANA time zone of the schedule (default UTC)")
	fs.StringVar(&f.rrule, "rrule", "", `recurrence as an RFC 5545 RRULE ("FREQ=DAILY;BYHOUR=9")`)
	fs.StringVar(&f.cron, "cron", "", `recurrence as cron ("*/5 * * * *", "@every 15m")`)
	fs.StringVar(&f.schedule, "schedule", "", `recurrence as a schedule object ('{"frequency":"weekly","by_day":["MO"]}')`)
	fs.StringVar(&f.webhook, "webhook", "", "deliver as a signed webhook to this URL")
	fs.StringVar(&f.clientName, "client", "", "deliver to WebSocket client-hooks of this client name (see qhronos listen)")
	fs.BoolVar(&f.requireAck, "require-ack", false, "with --client: the occurrence completes only when the client acknowledges it")
	fs.StringVar(&f.topic, "topic", "", "fan out to the subscribers of this topic of the catalogue (qhronos topics) instead of an action; --metadata must follow its schema")
	fs.StringVar(&f.action, "action", "", `the action as JSON ('{"type":"apicall","params":{"method":"POST","url":"…"}}')`)
	fs.StringSliceVar(&f.tags, "tag", nil, "tag (repeat or comma-separate)")
	fs.StringVar(&f.metadata, "metadata", "", "metadata as JSON, delivered verbatim")
	fs.StringVar(&f.catchUp, "catch-up", "", "missed instants after downtime: all, latest or none")
	fs.StringVar(&f.timeout, "timeout", "", "per-attempt timeout (e.g. 10s)")
	fs.StringVar(&f.completion, "completion", "", `response (default): the receiver's 2xx completes an occurrence; callback: the 2xx starts a run the receiver ends with "qhronos runs complete" (or its SDK)`)
	fs.StringVar(&f.overlap, "overlap", "", "what an instant does while the previous run is still in progress: allow (default), skip, buffer_one, buffer_all or cancel_previous")
	fs.StringVar(&f.concurrencyKey, "concurrency-key", "", "with --concurrency-limit: share a limit of occurrences in flight with every event naming this key (letters, digits and . _ : @ -)")
	fs.IntVar(&f.concurrencyLimit, "concurrency-limit", 0, "with --concurrency-key: how many occurrences of the key's events may be in flight at once, installation-wide (1 to 1000; the smallest its events name wins)")
	fs.BoolVar(&f.noConcurrency, "no-concurrency", false, "remove the event's concurrency key")
	fs.StringVar(&f.maxRuntime, "max-runtime", "", "with --completion callback: how long a run may go without a report or heartbeat before it times out (1s to 7d, default 1h)")
	f.publishFlags.register(fs)
	fs.BoolVar(&f.tracePropagation, "trace-propagation", true, "send traceparent to receivers when the server traces; --trace-propagation=false opts out")
}

// readOnlyEventFields are the event resource's fields that no request sets.
var readOnlyEventFields = []string{"id", "created_by", "created_via", "version", "next_run_at", "last_run_at",
	"last_status", "created_at", "updated_at", "hmac_secret_set", "paused_at", "paused_until", "pause_reason",
	"paused_by", "pause_catch_up"}

// input builds the EventInput from --file and the flags that were set.
func (f *eventFlags) input(cmd *cobra.Command, stdin io.Reader) (client.EventInput, error) {
	var in client.EventInput
	if f.file != "" {
		b, err := readInput(f.file, stdin)
		if err != nil {
			return in, usagef("--file: %v", err)
		}
		// What `events get -o json` prints is accepted: the read-only
		// fields are dropped (the server ignores them too); any other
		// unknown field is a mistake worth naming.
		var members map[string]json.RawMessage
		if err := json.Unmarshal(b, &members); err != nil {
			return in, usagef("--file: not a JSON object: %v", err)
		}
		for _, k := range readOnlyEventFields {
			delete(members, k)
		}
		b, _ = json.Marshal(members)
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&in); err != nil {
			return in, usagef("--file: not an event: %v", err)
		}
	}
	set := cmd.Flags().Changed
	// What the event does: one flag, which replaces what --file says (an
	// event read back with `events get -o json` carries its topic or action).
	n := 0
	for _, name := range []string{"webhook", "client", "action", "publish", "topic"} {
		if set(name) {
			n++
		}
	}
	if n > 1 {
		return in, usagef("--webhook, --client, --action, --publish and --topic: give one")
	}
	if n == 1 {
		in.Action, in.Webhook, in.Topic = nil, nil, nil
	}
	str := func(flag, v string, dst **string) {
		if set(flag) {
			*dst = client.Ptr(v)
		}
	}
	str("name", f.name, &in.Name)
	str("description", f.description, &in.Description)
	str("start", f.start, &in.StartTime)
	str("timezone", f.timezone, &in.Timezone)
	str("rrule", f.rrule, &in.Rrule)
	str("cron", f.cron, &in.Cron)
	str("webhook", f.webhook, &in.Webhook)
	str("topic", f.topic, &in.Topic)
	str("timeout", f.timeout, &in.Timeout)
	str("max-runtime", f.maxRuntime, &in.MaxRuntime)
	if set("completion") {
		in.Completion = client.Ptr(client.EventInputCompletion(f.completion))
	}
	if set("overlap") {
		in.Overlap = client.Ptr(client.EventInputOverlap(f.overlap))
	}
	if err := f.applyConcurrency(set, &in); err != nil {
		return in, err
	}
	if set("schedule") {
		var s client.Schedule
		if err := json.Unmarshal([]byte(f.schedule), &s); err != nil {
			return in, usagef("--schedule: not a schedule object: %v", err)
		}
		in.Schedule = &s
	}
	if set("catch-up") {
		in.CatchUp = client.Ptr(client.EventInputCatchUp(f.catchUp))
	}
	if set("tag") {
		in.Tags = f.tags
	}
	if set("trace-propagation") {
		in.TracePropagation = client.Ptr(f.tracePropagation)
	}
	if set("metadata") {
		if !json.Valid([]byte(f.metadata)) {
			return in, usagef("--metadata: not valid JSON")
		}
		in.Metadata = json.RawMessage(f.metadata)
	}
	if set("client") {
		params := map[string]any{"client_name": f.clientName}
		if f.requireAck {
			params["require_ack"] = true
		}
		in.Action = &client.Action{Type: client.ActionTypeWebsocket, Params: params}
	} else if set("require-ack") {
		return in, usagef("--require-ack: only with --client")
	}
	if set("action") {
		var act client.Action
		if err := json.Unmarshal([]byte(f.action), &act); err != nil {
			return in, usagef("--action: not an action object: %v", err)
		}
		in.Action = &act
	}
	if err := f.publishFlags.apply(cmd, &in, in.Webhook); err != nil {
		return in, err
	}
	return in, nil
}

// applyConcurrency sets in.Concurrency from the flags: a key and its limit
// go together; --no-concurrency removes it (over what --file says).
func (f *eventFlags) applyConcurrency(set func(string) bool, in *client.EventInput) error {
	key, limit := set("concurrency-key"), set("concurrency-limit")
	switch {
	case f.noConcurrency && (key || limit):
		return usagef("--no-concurrency: not with --concurrency-key or --concurrency-limit")
	case f.noConcurrency:
		in.Concurrency = nil
	case key && !limit:
		return usagef("--concurrency-limit: required with --concurrency-key")
	case limit && !key:
		return usagef("--concurrency-key: required with --concurrency-limit")
	case key:
		in.Concurrency = &client.Concurrency{Key: f.concurrencyKey, Limit: f.concurrencyLimit}
	}
	return nil
}

// update sends in as a change of event id. EventInput cannot say null, so
// with --no-concurrency its members go with "concurrency": null instead.
func (f *eventFlags) update(ctx context.Context, c *client.Client, id string, in client.EventInput,
	opts ...client.CallOption) (*client.Event, error) {
	if !f.noConcurrency {
		return c.Events.Update(ctx, id, in, opts...)
	}
	// Raw members, so numbers and metadata go exactly as EventInput has them.
	var raw map[string]json.RawMessage
	b, err := json.Marshal(in)
	if err == nil {
		err = json.Unmarshal(b, &raw)
	}
	if err != nil {
		return nil, fmt.Errorf("encode event: %w", err)
	}
	members := make(map[string]any, len(raw)+1)
	for k, v := range raw {
		members[k] = v
	}
	members["concurrency"] = nil
	return c.Events.UpdateFields(ctx, id, members, opts...)
}

// renderEvent shows one event: as the API answered it with --output json
// (no further call), else as its table.
func (a *app) renderEvent(ctx context.Context, c *client.Client, ev *client.Event) error {
	if a.output == "json" {
		return writeJSON(a.stdout, ev)
	}
	t, err := a.eventTable(ctx, c, ev)
	if err != nil {
		return err
	}
	return a.render(ev, t)
}

// eventTable is the one-event rendering, in the event's zone. A paused
// event's next run is its next firing after the pause, when that is known
// (an older server leaves next_run_at empty while paused), then the pause itself.
func (a *app) eventTable(ctx context.Context, c *client.Client, ev *client.Event) (*table, error) {
	next, err := c.Events.NextFiring(ctx, ev)
	if err != nil {
		return nil, err
	}
	z := a.eventZone(ev.Timezone)
	nextRun := z.when(next)
	if ev.Status == client.EventStatusPaused {
		until := "resumed by hand"
		if ev.PausedUntil != nil {
			until = z.when(ev.PausedUntil)
		}
		nextRun += " (paused until " + until
		if ev.PauseReason != nil && *ev.PauseReason != "" {
			nextRun += ": " + *ev.PauseReason
		}
		nextRun += ")"
	}
	// An event that fans out shows its topic where others show their action.
	does, what := "action", actionSummary(ev.Action)
	if ev.Topic != nil && *ev.Topic != "" {
		does, what = "topic", *ev.Topic
	}
	t := fields("id", ev.ID, "name", ev.Name, "status", string(ev.Status), does, what,
		"completion", completionSummary(ev), "overlap", overlapSummary(ev),
		"concurrency", concurrencySummary(ev), "schedule", scheduleSummary(ev), "timezone", ev.Timezone,
		"start", z.when(&ev.StartTime), "next run", nextRun, "last run", z.when(ev.LastRunAt),
		"last status", str(ev.LastStatus), "tags", list(ev.Tags), "key", str(ev.Key), "version", fmt.Sprint(ev.Version))
	t.zone = z
	return t, nil
}

// actionSummary is what an event does in a word and its destination:
// "webhook https://…", "websocket dev", "topic digest.daily".
func actionSummary(a client.Action) string {
	for _, k := range []string{"url", "client_name", "topic"} {
		if v, ok := a.Params[k].(string); ok {
			return string(a.Type) + " " + v
		}
	}
	return string(a.Type)
}

// completionSummary is how the event's occurrences complete: by the
// receiver's response, or by a callback within the run's max runtime.
func completionSummary(ev *client.Event) string {
	if ev.Completion == nil || *ev.Completion != client.EventCompletionCallback {
		return "response"
	}
	return "callback, max runtime " + str(ev.MaxRuntime)
}

// overlapSummary is the event's overlap policy.
func overlapSummary(ev *client.Event) string {
	if ev.Overlap == nil {
		return string(client.EventOverlapAllow)
	}
	return string(*ev.Overlap)
}

// concurrencySummary is the event's concurrency key and the limit it names.
func concurrencySummary(ev *client.Event) string {
	if ev.Concurrency == nil {
		return "none"
	}
	return fmt.Sprintf("%s (limit %d)", ev.Concurrency.Key, ev.Concurrency.Limit)
}

func scheduleSummary(ev *client.Event) string {
	switch {
	case ev.Rrule != nil:
		return "rrule " + *ev.Rrule
	case ev.Cron != nil:
		return "cron " + *ev.Cron
	case ev.Schedule != nil:
		b, _ := json.Marshal(ev.Schedule)
		return "schedule " + string(b)
	}
	return "once"
}
