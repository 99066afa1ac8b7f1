package console

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/client"
)

func TestBrokerEventTargets(t *testing.T) {
	t.Parallel()
	const ep = "8f0c5a3e-2b1d-4c6e-9a7f-1d2e3f4a5b6c"
	cases := []struct {
		name, action, want string
	}{
		{"nats url", `{"type":"nats","params":{"url":"nats://••••1a2b3c4d@nats.internal:4222","subject":"orders.created","jetstream":true}}`,
			"nats → subject orders.created (JetStream) at nats://••••1a2b3c4d@nats.internal:4222"},
		{"amqp endpoint", `{"type":"amqp","params":{"endpoint_id":"` + ep + `","exchange":"orders","routing_key":"created"}}`,
			"amqp → exchange orders, routing key created at endpoint " + ep},
		{"amqp default exchange", `{"type":"amqp","params":{"url":"amqp://mq:5672/","routing_key":"jobs"}}`,
			"amqp → exchange (default), routing key jobs at amqp://mq:5672/"},
		{"kafka", `{"type":"kafka","params":{"endpoint_id":"` + ep + `","topic":"billing","key":"k1"}}`,
			"kafka → topic billing, key k1 at endpoint " + ep},
		{"redis stream", `{"type":"redis_stream","params":{"url":"redis://cache:6379/0","stream":"jobs"}}`,
			"redis_stream → stream jobs at redis://cache:6379/0"},
		{"webhook endpoint", `{"type":"webhook","params":{"endpoint_id":"` + ep + `"}}`, "endpoint " + ep},
		{"webhook url", `{"type":"webhook","params":{"url":"https://example.com/hook"}}`, "https://example.com/hook"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// The list and the event page both read the event as an eventView.
			var a client.Action
			require.NoError(t, json.Unmarshal([]byte(c.action), &a))
			v := eventView{Action: a}
			if id, _ := a.Params["endpoint_id"].(string); id != "" {
				v.EndpointID = id
			}
			require.Equal(t, c.want, v.Target())
		})
	}
}
