package lifecycle

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/qhronos/qhronos/internal/auth"
	"github.com/qhronos/qhronos/internal/input"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/outbound"
	"github.com/qhronos/qhronos/internal/repository"
)

const endpointParam = "action.params.endpoint_id"

// endpointActions are the action types that may name an endpoint: the HTTP
// ones, and the broker ones (whose endpoint's URL is a broker's).
var endpointActions = map[string]bool{"webhook": true, "apicall": true,
	"nats": true, "amqp": true, "kafka": true, "redis_stream": true}

// actionEndpoint is the endpoint an action names in params.endpoint_id, or
// "" when it has none (an inline URL).
func actionEndpoint(a *model.Action) (string, error) {
	if a == nil || !endpointActions[a.Type] || len(a.Params) == 0 {
		return "", nil
	}
	var p struct {
		EndpointID json.RawMessage `json:"endpoint_id"`
	}
	if json.Unmarshal(a.Params, &p) != nil || len(p.EndpointID) == 0 || input.IsNull(p.EndpointID) {
		return "", nil // not an object: the action's own validation says so
	}
	var id string
	if err := json.Unmarshal(p.EndpointID, &id); err != nil || id == "" {
		return "", input.BadRequest(endpointParam, "must be an endpoint id")
	}
	if canonical, ok := input.CanonicalUUID(id); ok {
		return canonical, nil // as the action's own validation stores it
	}
	return id, nil
}

// checkActionEndpoint refuses an action naming an endpoint that does not
// exist, was deleted or is outside the principal's scope (all alike, so
// nothing leaks). It runs before the action's own validation so the answer
// names the endpoint.
func (s *Service) checkActionEndpoint(ctx context.Context, p auth.Principal, a *model.Action) error {
	id, err := actionEndpoint(a)
	if err != nil || id == "" {
		return err
	}
	e, err := s.store.GetEndpoint(ctx, id)
	if errors.Is(err, model.ErrNotFound) || (err == nil && !p.CanRead(e.Tags)) {
		return input.BadRequestf(endpointParam, "unknown endpoint %s", id)
	}
	if err != nil {
		return err
	}
	return endpointServes(id, e.URL, a.Type)
}

// endpointServes refuses an action of type actionType naming endpoint id,
// whose URL is url, when the endpoint delivers another way: a broker
// endpoint serves its broker's action type only, an HTTP one the HTTP
// actions only.
func endpointServes(id, url, actionType string) error {
	switch kind := outbound.BrokerKind(url); {
	case kind != "" && kind != actionType:
		return input.BadRequestf(endpointParam, "endpoint %s is a %s broker endpoint: use action type %s", id, kind, kind)
	case kind == "" && actionType != "webhook" && actionType != "apicall":
		return input.BadRequestf(endpointParam, "endpoint %s is an HTTP endpoint, not a %s broker's", id, actionType)
	}
	return nil
}

// setEventEndpoint records in ev.EndpointID the endpoint its (validated)
// action names; nil for an inline URL.
func setEventEndpoint(ev *model.Event) error {
	id, err := actionEndpoint(&ev.Action)
	if err != nil {
		return err
	}
	ev.EndpointID = nil
	if id != "" {
		ev.EndpointID = &id
	}
	return nil
}

// holdEventEndpoint locks the endpoint ev names in the event's
// transaction, so the endpoint cannot be deleted, nor its URL changed to
// another kind, between the check and the write (see
// repository.DeleteEndpoint and UpdateEndpoint). With checkKind (an action
// that names the endpoint anew, or with another type) the kind is checked
// again as locked; an edit that leaves the action alone is not refused for
// it, so an event can still be paused or renamed whatever its endpoint became.
func holdEventEndpoint(ctx context.Context, tx *repository.Store, ev *model.Event, checkKind bool) error {
	if ev.EndpointID == nil {
		return nil
	}
	url, err := tx.LockEndpoint(ctx, *ev.EndpointID)
	if errors.Is(err, model.ErrNotFound) {
		return input.BadRequestf(endpointParam, "unknown endpoint %s", *ev.EndpointID)
	}
	if err != nil || !checkKind {
		return err
	}
	return endpointServes(*ev.EndpointID, url, ev.Action.Type)
}

// namesEndpointAnew reports whether ev's action names its endpoint anew
// compared with before: another endpoint, or another action type.
func namesEndpointAnew(before, ev *model.Event) bool {
	if ev.EndpointID == nil {
		return false
	}
	return before.EndpointID == nil || *before.EndpointID != *ev.EndpointID || before.Action.Type != ev.Action.Type
}
