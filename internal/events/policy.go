package events

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/qhronos/qhronos/internal/input"
	"github.com/qhronos/qhronos/internal/model"
)

// Limits of an event's time policy.
const (
	MaxJitter    = time.Hour
	MaxCalendars = 10
)

// applyTimePolicy writes the dst, jitter and calendars members onto ev;
// null clears one.
func applyTimePolicy(in *Input, ev *model.Event) error {
	if raw, ok := in.members["dst"]; ok {
		ev.DST = model.DST{}
		if !input.IsNull(raw) {
			if err := input.DecodeStrict(raw, "dst", &ev.DST); err != nil {
				return err
			}
			if err := checkDST(ev.DST); err != nil {
				return err
			}
		}
	}
	if raw, ok := in.members["jitter"]; ok {
		ev.Jitter = 0
		if !input.IsNull(raw) {
			var text string
			if err := json.Unmarshal(raw, &text); err != nil {
				return input.BadRequest("jitter", "must be a duration string such as \"5m\"")
			}
			d, err := input.ParseDuration("jitter", text, 0, MaxJitter)
			if err != nil {
				return err
			}
			ev.Jitter = d
		}
	}
	if raw, ok := in.members["calendars"]; ok {
		ev.Calendars = nil
		if !input.IsNull(raw) {
			refs, err := decodeCalendars(raw)
			if err != nil {
				return err
			}
			ev.Calendars = refs
		}
	}
	return nil
}

func checkDST(d model.DST) error {
	switch d.Gap {
	case "", "shift", "skip":
	default:
		return input.BadRequest("dst.gap", `must be "shift" or "skip"`)
	}
	switch d.Repeat {
	case "", "first", "last", "both":
	default:
		return input.BadRequest("dst.repeat", `must be "first", "last" or "both"`)
	}
	return nil
}

func decodeCalendars(raw json.RawMessage) ([]model.CalendarRef, error) {
	var refs []model.CalendarRef
	if err := input.DecodeStrict(raw, "calendars", &refs); err != nil {
		return nil, err
	}
	if len(refs) > MaxCalendars {
		return nil, input.BadRequestf("calendars", "at most %d calendars", MaxCalendars)
	}
	seen := map[string]bool{}
	for i := range refs {
		field := fmt.Sprintf("calendars[%d]", i)
		if _, err := uuid.Parse(refs[i].ID); err != nil {
			return nil, input.BadRequest(field+".id", "must be a calendar id")
		}
		refs[i].ID = uuid.MustParse(refs[i].ID).String()
		if seen[refs[i].ID] {
			return nil, input.BadRequest(field+".id", "lists a calendar twice")
		}
		seen[refs[i].ID] = true
		switch refs[i].Policy {
		case "":
			refs[i].Policy = model.CalendarSkip
		case model.CalendarSkip, model.CalendarRollForward, model.CalendarRollBackward:
		default:
			return nil, input.BadRequest(field+".policy", `must be "skip", "roll_forward" or "roll_backward"`)
		}
	}
	if len(refs) == 0 {
		return nil, nil
	}
	return refs, nil
}
