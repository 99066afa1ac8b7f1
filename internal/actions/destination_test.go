package actions_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/qhronos/qhronos/internal/actions"
)

// A prepared delivery names the destination the dispatcher limits
// concurrency by, and how long a require_ack delivery waits.
func TestPreparedDestinationAndAckTimeout(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, nil)
	tests := []struct {
		name    string
		action  actions.Action
		params  string
		wantDst string
		wantAck time.Duration
	}{
		{"webhook", actions.NewWebhook(cfg), `{"url":"https://Hooks.Example.com/a"}`, "hooks.example.com:443", 0},
		{"apicall", actions.NewAPICall(cfg), `{"method":"GET","url":"http://api.example.com:8080/x"}`, "api.example.com:8080", 0},
		{"websocket ack_timeout param", actions.NewWebSocket(nil, time.Minute),
			`{"client_name":"acme","require_ack":true,"ack_timeout":"90s"}`, "", 90 * time.Second},
		{"websocket action default", actions.NewWebSocket(nil, time.Minute),
			`{"client_name":"acme","require_ack":true}`, "", time.Minute},
		{"websocket dispatcher default", actions.NewWebSocket(nil, 0),
			`{"client_name":"acme","require_ack":true}`, "", 0},
	}
	for _, tc := range tests {
		d, err := tc.action.Prepare(json.RawMessage(tc.params))
		if err != nil {
			t.Errorf("%s: Prepare = %v, want a delivery", tc.name, err)
			continue
		}
		if got := d.Destination(); got != tc.wantDst {
			t.Errorf("%s: Destination = %q, want %q", tc.name, got, tc.wantDst)
		}
		if got := d.AckTimeout(); got != tc.wantAck {
			t.Errorf("%s: AckTimeout = %s, want %s", tc.name, got, tc.wantAck)
		}
	}
}

func TestWebSocketPrepareRefusesBadParams(t *testing.T) {
	t.Parallel()
	ws := actions.NewWebSocket(nil, 0)
	tests := []struct {
		params    string
		wantParam string
	}{
		{`{}`, "client_name"},
		{`{"client_name":"a b"}`, "client_name"},
		{`{"client_name":"acme","ack_timeout":"500ms"}`, "ack_timeout"},
		{`{"client_name":"acme","ack_timeout":"25h"}`, "ack_timeout"},
		{`{"client_name":"acme","ack_timeout":30}`, "ack_timeout"},
		{`{"client_name":"acme","ack":true}`, "ack"},
	}
	for _, tc := range tests {
		d, err := ws.Prepare(json.RawMessage(tc.params))
		var pe *actions.ParamError
		if !errors.As(err, &pe) || pe.Param != tc.wantParam || d != nil {
			t.Errorf("Prepare(%s) = %v, %v; want no delivery and a ParamError on %s", tc.params, d, err, tc.wantParam)
		}
	}
}
