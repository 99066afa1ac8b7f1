package events

import (
	"slices"
	"strings"
	"time"

	"github.com/qhronos/qhronos/internal/input"
	"github.com/qhronos/qhronos/internal/model"
)

// applyCompletion sets how the event's occurrences complete: by the
// receiver's response (the default) or by a callback within max_runtime.
// The action is already applied. Switching back to response drops
// max_runtime; sending max_runtime without callback is refused.
func applyCompletion(in *Input, ev *model.Event) error {
	if in.Completion != nil {
		switch *in.Completion {
		case model.CompletionResponse, model.CompletionCallback:
			ev.Completion = *in.Completion
		default:
			return input.BadRequest("completion", `must be "response" or "callback"`)
		}
	} else if sent, null := in.present("completion"); sent && null || ev.Completion == "" {
		ev.Completion = model.CompletionResponse
	}
	if ev.Callback() && ev.Action.Type == "websocket" {
		return input.BadRequest("completion", `"callback" is for webhook, api_call and broker actions; `+
			`a WebSocket client acknowledges with require_ack`)
	}
	if in.MaxRuntime != nil {
		if !ev.Callback() {
			return input.BadRequest("max_runtime", `applies only with "completion": "callback"`)
		}
		d, err := input.ParseDuration("max_runtime", *in.MaxRuntime, time.Second, model.MaxMaxRuntime)
		if err != nil {
			return err
		}
		ev.MaxRuntime = d
	} else if sent, null := in.present("max_runtime"); sent && null || !ev.Callback() {
		ev.MaxRuntime = 0
	}
	return nil
}

// applyOverlap sets what an instant of the event does while an earlier run
// of it is in progress (model.Overlaps; "allow" when absent or null).
func applyOverlap(in *Input, ev *model.Event) error {
	if in.Overlap != nil {
		if !slices.Contains(model.Overlaps, *in.Overlap) {
			return input.BadRequest("overlap", `must be one of "`+strings.Join(model.Overlaps, `", "`)+`"`)
		}
		ev.Overlap = *in.Overlap
	} else if sent, null := in.present("overlap"); sent && null || ev.Overlap == "" {
		ev.Overlap = model.OverlapAllow
	}
	return nil
}

// applyConcurrency sets the event's concurrency key and limit
// ({"key", "limit"}; null or absent on create: none). The key follows the
// rules of an event key (CheckKey); both members are required.
func applyConcurrency(in *Input, ev *model.Event) error {
	raw, sent := in.members["concurrency"]
	switch {
	case !sent:
		return nil
	case input.IsNull(raw):
		ev.Concurrency = nil
		return nil
	}
	var c struct {
		Key   *string `json:"key"`
		Limit *int    `json:"limit"`
	}
	if err := input.DecodeStrict(raw, "concurrency", &c); err != nil {
		return err
	}
	if c.Key == nil {
		return input.BadRequest("concurrency.key", "required: the name the events sharing the limit use")
	}
	if err := checkKey("concurrency.key", *c.Key); err != nil {
		return err
	}
	switch {
	case c.Limit == nil:
		return input.BadRequest("concurrency.limit", "required: how many occurrences of the key may be in flight at once")
	case *c.Limit < 1 || *c.Limit > model.MaxConcurrencyLimit:
		return input.BadRequestf("concurrency.limit", "must be from 1 to %d", model.MaxConcurrencyLimit)
	}
	ev.Concurrency = &model.Concurrency{Key: *c.Key, Limit: *c.Limit}
	return nil
}
