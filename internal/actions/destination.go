package actions

import (
	"encoding/json"

	"github.com/qhronos/qhronos/internal/outbound"
)

// Destined is implemented by actions that send to one network destination.
// The dispatcher uses it to key outbound.Limiter, so one slow receiver holds
// at most a few workers.
type Destined interface {
	// Destination returns the host:port that params send to.
	Destination(params json.RawMessage) (string, error)
}

// DestinationOf returns a's destination for params, and false when a has no
// single network destination (websocket) or params are invalid.
func DestinationOf(a Action, params json.RawMessage) (string, bool) {
	d, ok := a.(Destined)
	if !ok {
		return "", false
	}
	key, err := d.Destination(params)
	if err != nil {
		return "", false
	}
	return key, true
}

// Destination implements Destined.
func (w *Webhook) Destination(params json.RawMessage) (string, error) {
	p, err := w.parse(params)
	if err != nil {
		return "", err
	}
	return outbound.Destination(p.URL)
}

// Destination implements Destined.
func (a *APICall) Destination(params json.RawMessage) (string, error) {
	p, err := a.parse(params)
	if err != nil {
		return "", err
	}
	return outbound.Destination(p.URL)
}
