package actions_test

import (
	"encoding/json"
	"testing"

	"github.com/qhronos/qhronos/internal/actions"
)

func TestDestinationOf(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, nil)
	tests := []struct {
		name   string
		action actions.Action
		params string
		want   string
		wantOK bool
	}{
		{"webhook", actions.NewWebhook(cfg), `{"url":"https://Hooks.Example.com/a"}`, "hooks.example.com:443", true},
		{"apicall", actions.NewAPICall(cfg), `{"method":"GET","url":"http://api.example.com:8080/x"}`, "api.example.com:8080", true},
		{"invalid params", actions.NewWebhook(cfg), `{"url":"ftp://x"}`, "", false},
	}
	for _, tc := range tests {
		got, ok := actions.DestinationOf(tc.action, json.RawMessage(tc.params))
		if got != tc.want || ok != tc.wantOK {
			t.Errorf("%s: DestinationOf = %q, %v; want %q, %v", tc.name, got, ok, tc.want, tc.wantOK)
		}
	}
}
