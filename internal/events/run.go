package events

import (
	"encoding/json"

	"github.com/qhronos/qhronos/internal/input"
	"github.com/qhronos/qhronos/internal/model"
)

// MaxRunOutput bounds a run's reported output (its JSON text).
const MaxRunOutput = 16 << 10

// RunReport is a run's completion: how it ended and what it produced.
type RunReport struct {
	Status string
	// Output is the receiver's JSON document, or nil for none.
	Output json.RawMessage
}

// DecodeRunReport reads POST /occurrences/{id}/complete's body.
func DecodeRunReport(members map[string]json.RawMessage) (RunReport, error) {
	var r RunReport
	if err := input.RejectUnknown(members, input.Set("status", "output"), nil); err != nil {
		return r, err
	}
	if sent, err := input.DecodeField(members, "status", &r.Status); err != nil {
		return r, err
	} else if !sent || r.Status == "" {
		return r, input.BadRequest("status", `is required: "succeeded" or "failed"`)
	}
	if r.Status != model.RunSucceeded && r.Status != model.RunFailed {
		return r, input.BadRequest("status", `must be "succeeded" or "failed"`)
	}
	if raw, ok := members["output"]; ok && !input.IsNull(raw) {
		if len(raw) > MaxRunOutput {
			return r, input.BadRequestf("output", "must be at most %d bytes of JSON", MaxRunOutput)
		}
		r.Output = raw
	}
	return r, nil
}
