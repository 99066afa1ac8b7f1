package events

import (
	"encoding/json"
	"strings"

	"github.com/qhronos/qhronos/internal/input"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/recurrence"
)

// Event fields a client may send, and read-only ones it may send back (they
// are ignored, so GET → edit → PUT round trips work).
var (
	eventFields = input.Set("name", "description", "start_time", "timezone", "rrule", "schedule", "cron", "action",
		"webhook", "metadata", "tags", "status", "hmac_secret", "retry", "catch_up", "timeout", "dst", "jitter",
		"calendars", "trace_propagation", "completion", "max_runtime", "overlap", "concurrency", "topic")
	eventReadOnly = input.Set("id", "created_by", "created_via", "version", "next_run_at", "last_run_at", "last_status",
		"created_at", "updated_at", "hmac_secret_set", "paused_at", "paused_until", "pause_reason", "paused_by",
		"pause_catch_up", "key", "debounce", "max_wait")
)

// Input is a decoded create or update body of an event; nil means absent. The
// recurrence members keep their raw form so that null (clear) and absent
// (keep) differ.
type Input struct {
	members map[string]json.RawMessage
	// key is the key member as sent (keySent: at all), for KeepsKey.
	key     json.RawMessage
	keySent bool

	Name, Description, StartTime, Timezone *string
	Webhook, Status, HMACSecret, CatchUp   *string
	Timeout, Completion, MaxRuntime        *string
	Overlap, Topic                         *string
	Tags                                   *[]string
	Action                                 *model.Action
	TracePropagation                       *bool
}

// DecodeInput reads an event body's members: their JSON types, not yet
// their rules (Create and Update check those).
func DecodeInput(members map[string]json.RawMessage) (*Input, error) {
	key, keySent := members["key"] // read-only, so dropped below; KeepsKey checks it
	if err := input.RejectUnknown(members, eventFields, eventReadOnly); err != nil {
		return nil, err
	}
	in := &Input{members: members, key: key, keySent: keySent}
	for _, f := range []struct {
		name string
		dst  **string
	}{
		{"name", &in.Name}, {"description", &in.Description}, {"start_time", &in.StartTime},
		{"timezone", &in.Timezone}, {"webhook", &in.Webhook}, {"status", &in.Status},
		{"hmac_secret", &in.HMACSecret}, {"catch_up", &in.CatchUp}, {"timeout", &in.Timeout},
		{"completion", &in.Completion}, {"max_runtime", &in.MaxRuntime}, {"overlap", &in.Overlap},
		{"topic", &in.Topic},
	} {
		raw, ok := members[f.name]
		if !ok || input.IsNull(raw) {
			continue
		}
		var v string
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, input.BadRequest(f.name, "must be a string")
		}
		*f.dst = &v
	}
	if raw, ok := members["tags"]; ok && !input.IsNull(raw) {
		var tags []string
		if err := json.Unmarshal(raw, &tags); err != nil {
			return nil, input.BadRequest("tags", "must be an array of strings")
		}
		in.Tags = &tags
	}
	if raw, ok := members["trace_propagation"]; ok && !input.IsNull(raw) {
		var v bool
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, input.BadRequest("trace_propagation", "must be a boolean")
		}
		in.TracePropagation = &v
	}
	if raw, ok := members["action"]; ok && !input.IsNull(raw) {
		var a model.Action
		if err := input.DecodeStrict(raw, "action", &a); err != nil {
			return nil, err
		}
		in.Action = &a
	}
	return in, nil
}

// present reports whether a member was sent, and whether it was null.
func (in *Input) present(name string) (sent, null bool) {
	raw, ok := in.members[name]
	if !ok {
		return false, false
	}
	return true, input.IsNull(raw)
}

// TouchesSchedule reports whether the input changes when the event fires.
func (in *Input) TouchesSchedule() bool {
	for _, f := range []string{"start_time", "timezone", "rrule", "schedule", "cron", "dst", "jitter", "calendars"} {
		if sent, _ := in.present(f); sent {
			return true
		}
	}
	return false
}

// applyRecurrence sets the recurrence source members onto ev: sending one
// replaces the old, null clears it.
func (in *Input) applyRecurrence(ev *model.Event) error {
	rruleSent, rruleNull := in.present("rrule")
	schedSent, schedNull := in.present("schedule")
	cronSent, cronNull := in.present("cron")
	var chosen []string
	if rruleSent && !rruleNull {
		chosen = append(chosen, "rrule")
	}
	if schedSent && !schedNull {
		chosen = append(chosen, "schedule")
	}
	if cronSent && !cronNull {
		chosen = append(chosen, "cron")
	}
	if len(chosen) > 1 {
		return input.BadRequestf(chosen[1], "only one of rrule, schedule and cron may be set (got %s)", strings.Join(chosen, ", "))
	}
	if len(chosen) == 1 || rruleNull || schedNull || cronNull {
		ev.RRule, ev.Schedule, ev.Cron = nil, nil, nil
	}
	if len(chosen) == 0 {
		return nil
	}
	switch chosen[0] {
	case "rrule":
		var v string
		if err := json.Unmarshal(in.members["rrule"], &v); err != nil {
			return input.BadRequest("rrule", "must be a string")
		}
		ev.RRule = &v
	case "cron":
		var v string
		if err := json.Unmarshal(in.members["cron"], &v); err != nil {
			return input.BadRequest("cron", "must be a string")
		}
		ev.Cron = &v
	case "schedule":
		echo, err := scheduleEcho(in.members["schedule"])
		if err != nil {
			return err
		}
		ev.Schedule = echo
	}
	return nil
}

// scheduleEcho validates the schedule object's shape and returns it as sent
// with interval filled in (the original required it; we default it to 1).
func scheduleEcho(raw json.RawMessage) (*model.Schedule, error) {
	var sched recurrence.Schedule
	if err := input.DecodeStrict(raw, "schedule", &sched); err != nil {
		return nil, err
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil {
		return nil, input.BadRequest("schedule", "must be an object")
	}
	if v, ok := members["interval"]; !ok || input.IsNull(v) {
		members["interval"] = json.RawMessage("1")
	} else if sched.Interval < 1 {
		// Absent means 1; an explicit 0 is a mistake, not a default.
		return nil, input.BadRequest("schedule.interval", "must be at least 1")
	}
	out, err := json.Marshal(members)
	if err != nil {
		return nil, input.BadRequest("schedule", "must be an object")
	}
	return model.DecodeSchedule(out)
}
