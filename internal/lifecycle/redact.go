package lifecycle

import (
	"encoding/json"
	"errors"

	"github.com/qhronos/qhronos/internal/events"
	"github.com/qhronos/qhronos/internal/input"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/redact"
)

// restoreSecrets puts back the stored values behind the fingerprints an
// event body sends where answers showed them (internal/redact), so a body
// read with GET and sent back never replaces a secret with its
// fingerprint. before is the stored event (nil on create: every
// fingerprint is refused). Params of another action type stand for
// nothing.
func (s *Service) restoreSecrets(in *events.Input, before *model.Event) error {
	var stored model.Event
	if before != nil {
		stored = *before
	}
	if in.Action != nil {
		var storedParams json.RawMessage
		if in.Action.Type == stored.Action.Type {
			storedParams = stored.Action.Params
		}
		params, err := s.redact.Restore("action.params", in.Action.Params, storedParams)
		if err != nil {
			return restoreError(err)
		}
		in.Action.Params = params
	}
	if in.Webhook != nil && redact.HasMask(*in.Webhook) {
		v, err := s.redact.RestoreValue("webhook", *in.Webhook, stored.Webhook)
		if err != nil {
			return restoreError(err)
		}
		w, _ := v.(string)
		in.Webhook = &w
	}
	return nil
}

// restoreError answers a refused fingerprint with 400 naming its field.
func restoreError(err error) error {
	var re *redact.RestoreError
	if errors.As(err, &re) {
		return input.BadRequest(re.Field, re.Reason())
	}
	return err
}
