package actions_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/actions"
)

func TestRegistry(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, nil)
	r := actions.NewRegistry()
	require.NoError(t, r.Register(actions.NewWebhook(cfg)))
	require.NoError(t, r.Register(actions.NewAPICall(cfg)))

	if err := r.Register(actions.NewWebhook(cfg)); err == nil {
		t.Error("registering webhook twice succeeded, want an error")
	}
	if got, want := r.Types(), []string{"apicall", "webhook"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Types() = %v, want %v", got, want)
	}
	if _, err := r.Get("carrier-pigeon"); !errors.Is(err, actions.ErrUnknownType) {
		t.Errorf("Get(unknown) err = %v, want ErrUnknownType", err)
	}
	if err := r.Validate("carrier-pigeon", json.RawMessage(`{}`)); !errors.Is(err, actions.ErrUnknownType) {
		t.Errorf("Validate(unknown) err = %v, want ErrUnknownType", err)
	}
	if d, err := r.Prepare("carrier-pigeon", json.RawMessage(`{}`)); !errors.Is(err, actions.ErrUnknownType) || d != nil {
		t.Errorf("Prepare(unknown) = %v, %v; want no delivery and ErrUnknownType", d, err)
	}
	if d, err := r.Prepare("webhook", json.RawMessage(`{"url":"https://x.example/"}`)); err != nil || d.Destination() != "x.example:443" {
		t.Errorf("Prepare(webhook, valid) = %v, %v; want the delivery to x.example:443", d, err)
	}
	var pe *actions.ParamError
	if err := r.Validate("webhook", json.RawMessage(`{"url":"ftp://x.example/"}`)); !errors.As(err, &pe) || pe.Param != "url" {
		t.Errorf("Validate(webhook, ftp url) = %v, want a ParamError on url", err)
	}
	if err := r.Validate("apicall", json.RawMessage(`{"method":"GET","url":"https://x.example/"}`)); err != nil {
		t.Errorf("Validate(apicall, valid) = %v, want nil", err)
	}
}
