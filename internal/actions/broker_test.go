package actions_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/actions"
	"github.com/qhronos/qhronos/internal/actions/brokertest"
	"github.com/qhronos/qhronos/receiver"
)

const brokerSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// brokerConfig returns broker settings allowing loopback, whose
// connections close with the test.
func brokerConfig(t *testing.T) actions.BrokerConfig {
	t.Helper()
	pool := actions.NewBrokerPool(time.Minute)
	t.Cleanup(pool.Close)
	return actions.BrokerConfig{Outbound: loopbackOutbound, Pool: pool}
}

// brokerRequest is one attempt of a fresh occurrence.
func brokerRequest() actions.Request {
	return actions.Request{EventID: uuid.NewString(), OccurrenceID: uuid.NewString(), Attempt: 1,
		ScheduledAt: time.Now().UTC().Truncate(time.Second), DispatchedAt: time.Now().UTC(), Name: "nightly report",
		Metadata: json.RawMessage(`{"customer":42}`), Secrets: []string{brokerSecret}, Timeout: 10 * time.Second}
}

func prepareJSON(t *testing.T, a actions.Action, params string) actions.Delivery {
	t.Helper()
	d, err := a.Prepare(json.RawMessage(params))
	require.NoError(t, err)
	return d
}

// verifyMessage checks a received message as a consumer would: the
// receiver kit verifies the signature over the body with the headers as
// the broker carried them, and the body is the webhook payload.
func verifyMessage(t *testing.T, req actions.Request, headers map[string]string, body []byte) {
	t.Helper()
	require.NoError(t, receiver.NewVerifier([]string{brokerSecret}).VerifyMessage(headers, body))
	require.Equal(t, req.OccurrenceID, headers["webhook-id"])
	require.Equal(t, "application/json", headers["content-type"])
	d, err := receiver.ParseDelivery(body)
	require.NoError(t, err)
	require.Equal(t, req.EventID, d.EventID)
	require.Equal(t, req.OccurrenceID, d.OccurrenceID)
}

// executeUntilOK retries an attempt, as the dispatcher would, until one
// succeeds.
func executeUntilOK(t *testing.T, d actions.Delivery, req actions.Request) actions.Outcome {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		out := d.Execute(context.Background(), req)
		if out.OK() {
			return out
		}
		require.True(t, out.Retryable, "a broker coming back is worth retrying: %v", out.Err)
		if time.Now().After(deadline) {
			t.Fatalf("no attempt succeeded within 60 s; last: %v", out.Err)
		}
		req.Attempt++
		time.Sleep(50 * time.Millisecond) // the dispatcher's backoff, shortened
	}
}

func TestBrokerParamsAreValidated(t *testing.T) {
	t.Parallel()
	cfg := actions.BrokerConfig{Outbound: loopbackOutbound}
	cases := []struct {
		action actions.Action
		params string
		param  string
	}{
		{actions.NewNATS(cfg), `{"subject":"orders.created"}`, "url"},
		{actions.NewNATS(cfg), `{"url":"http://127.0.0.1:4222","subject":"a"}`, "url"},
		{actions.NewNATS(cfg), `{"url":"nats://10.0.0.1:4222","subject":"a"}`, "url"},
		{actions.NewNATS(cfg), `{"url":"nats://127.0.0.1:4222","subject":"orders.*"}`, "subject"},
		{actions.NewNATS(cfg), `{"url":"nats://127.0.0.1:4222","subject":"a..b"}`, "subject"},
		{actions.NewNATS(cfg), `{"url":"nats://127.0.0.1:4222","subject":"a","encryption_jwk":{"kty":"oct","k":"AA"}}`, "encryption_jwk"},
		{actions.NewNATS(cfg), `{"url":"nats://127.0.0.1:4222","endpoint_id":"` + uuid.NewString() + `","subject":"a"}`, "endpoint_id"},
		{actions.NewAMQP(cfg), `{"url":"amqp://127.0.0.1:5672","routing_key":"k"}`, "exchange"},
		{actions.NewAMQP(cfg), `{"url":"amqp://127.0.0.1:5672","exchange":""}`, "routing_key"},
		{actions.NewAMQP(cfg), `{"url":"amqps://127.0.0.1:22","exchange":"x"}`, "url"},
		{actions.NewKafka(cfg), `{"url":"kafka://127.0.0.1:9092","topic":"bad topic"}`, "topic"},
		{actions.NewKafka(cfg), `{"url":"kafka://127.0.0.1:9092","topic":"t","sasl_mechanism":"GSSAPI"}`, "sasl_mechanism"},
		{actions.NewRedisStream(cfg), `{"url":"redis://127.0.0.1:6379/x","stream":"s"}`, "url"},
		{actions.NewRedisStream(cfg), `{"url":"redis://127.0.0.1:6379"}`, "stream"},
		{actions.NewRedisStream(cfg), `{"url":"redis://127.0.0.1:6379","stream":"s","max_len":-1}`, "max_len"},
		{actions.NewRedisStream(cfg), `{"url":"redis://127.0.0.1:6379","stream":"s","streem":"t"}`, "streem"},
	}
	for _, c := range cases {
		_, err := c.action.Prepare(json.RawMessage(c.params))
		var pe *actions.ParamError
		require.ErrorAs(t, err, &pe, "%s %s", c.action.Type(), c.params)
		require.Equal(t, c.param, pe.Param, "%s %s: %v", c.action.Type(), c.params, err)
	}
}

func TestBrokerURLCredentialsNeverReachTheOutcome(t *testing.T) {
	t.Parallel()
	// Nothing listens there: the attempt fails, and its error must not
	// carry the password from the URL.
	port := brokertest.FreePort(t)
	d := prepareJSON(t, actions.NewAMQP(brokerConfig(t)), fmt.Sprintf(`{"url":"amqp://user:hunter2secret@127.0.0.1:%d/","exchange":"x"}`, port))
	out := d.Execute(context.Background(), brokerRequest())
	require.Error(t, out.Err)
	require.True(t, out.Retryable)
	require.NotContains(t, out.Err.Error(), "hunter2secret")
	require.NotContains(t, out.Excerpt, "hunter2secret")
}
