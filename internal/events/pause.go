package events

import (
	"encoding/json"
	"time"
	"unicode/utf8"

	"github.com/qhronos/qhronos/internal/input"
	"github.com/qhronos/qhronos/internal/model"
)

// MaxReasonLength bounds the free-text reason of a pause, skip or move.
const MaxReasonLength = 500

// Pause is a pause request: until (optional) is when the event resumes by
// itself, reason says why, and catch_up what happens on resume to the
// instants inside the pause ("skip", the default, or "fire": they become
// due and the event's own catch_up decides). UntilText is until as sent
// (any form ParseInstant reads); Resolve turns it into Until in the event's
// zone.
type Pause struct {
	Until     *time.Time `json:"-"`
	UntilText *string    `json:"until"`
	Reason    string     `json:"reason"`
	CatchUp   string     `json:"catch_up"`
}

// Resume is a resume request; CatchUp overrides the pause's choice.
type Resume struct {
	CatchUp string `json:"catch_up"`
}

// DecodePause reads a pause body (empty means a plain pause); its until is
// resolved later, by Resolve, in the event's zone.
func DecodePause(body []byte) (Pause, error) {
	var p Pause
	if err := decodeOptional(body, &p); err != nil {
		return p, err
	}
	if err := CheckReason(p.Reason); err != nil {
		return p, err
	}
	if p.CatchUp == "" {
		p.CatchUp = model.PauseSkip
	}
	return p, checkPauseCatchUp(p.CatchUp)
}

// Resolve reads until, when sent, in loc (the event's zone) against now;
// it must lie ahead.
func (p *Pause) Resolve(loc *time.Location, now time.Time) error {
	if p.UntilText == nil {
		return nil
	}
	u, err := When{Field: "until", Text: *p.UntilText}.Resolve(loc, now)
	if err != nil {
		return err
	}
	if !u.After(now) {
		return input.BadRequest("until", "must be in the future")
	}
	p.Until = &u
	return nil
}

// DecodeResume reads a resume body (empty means the pause's own choice).
func DecodeResume(body []byte) (Resume, error) {
	var r Resume
	if err := decodeOptional(body, &r); err != nil {
		return r, err
	}
	if r.CatchUp == "" {
		return r, nil
	}
	return r, checkPauseCatchUp(r.CatchUp)
}

// CheckReason bounds a free-text reason.
func CheckReason(reason string) error {
	if utf8.RuneCountInString(reason) > MaxReasonLength || !utf8.ValidString(reason) {
		return input.BadRequestf("reason", "must be valid text of at most %d characters", MaxReasonLength)
	}
	return nil
}

func checkPauseCatchUp(v string) error {
	if v != model.PauseSkip && v != model.PauseFire {
		return input.BadRequest("catch_up", `must be "skip" or "fire"`)
	}
	return nil
}

// decodeOptional decodes an optional JSON object body strictly.
func decodeOptional(body []byte, v any) error {
	if len(body) == 0 || string(body) == "null" {
		return nil
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(body, &probe); err != nil {
		return input.BadRequest("body", "must be a JSON object")
	}
	return input.DecodeStrict(body, "body", v)
}
