package endpoints

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/actions/brokertest"
	"github.com/qhronos/qhronos/internal/qhronostest"
	"github.com/qhronos/qhronos/receiver"
)

// TestBrokerEndpoint: a NATS endpoint keeps the broker's password
// write-only; an event publishing through it is delivered once with the
// endpoint's signature; with the broker down the event's retry policy
// retries it (the same attempt log as a webhook) until the broker returns.
func TestBrokerEndpoint(t *testing.T) {
	t.Parallel()
	for _, backend := range qhronostest.Backends() {
		t.Run(string(backend), func(t *testing.T) {
			t.Parallel()
			broker := brokertest.NATS(t)
			srv := qhronostest.Start(t, backend)
			c := client{t: t, srv: srv}
			ep := c.createEndpoint(map[string]any{"name": "nats", "url": fmt.Sprintf("nats://127.0.0.1:%d", broker.Port),
				"auth": map[string]any{"type": "basic", "username": "qhronos", "password": "nats-secret"}})
			require.NotEmpty(t, ep.Secret)
			var shown map[string]any
			require.Equal(t, http.StatusOK, c.call("GET", "/endpoints/"+ep.ID, nil, &shown))
			require.NotContains(t, fmt.Sprint(shown), "nats-secret", "the broker password is write-only")

			// A broker takes basic or mtls auth, not OAuth2.
			require.Equal(t, http.StatusBadRequest, c.call("POST", "/endpoints", map[string]any{"name": "x",
				"url": fmt.Sprintf("nats://127.0.0.1:%d", broker.Port), "auth": map[string]any{"type": "oauth2_client_credentials",
					"token_url": "https://auth.example.com/token", "client_id": "a", "client_secret": "b"}}, nil),
				"OAuth2 is for HTTP endpoints")

			// A broker endpoint serves its own action type only, and a broker
			// action only a broker endpoint.
			soon := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
			require.Equal(t, http.StatusBadRequest, c.call("POST", "/events", map[string]any{"name": "x", "start_time": soon,
				"action": map[string]any{"type": "webhook", "params": map[string]any{"endpoint_id": ep.ID}}}, nil))
			httpEP := c.createEndpoint(map[string]any{"name": "http", "url": "https://example.com/hooks"})
			require.Equal(t, http.StatusBadRequest, c.call("POST", "/events", map[string]any{"name": "x", "start_time": soon,
				"action": map[string]any{"type": "nats", "params": map[string]any{"endpoint_id": httpEP.ID, "subject": "a"}}}, nil))

			nc, err := nats.Connect(fmt.Sprintf("nats://127.0.0.1:%d", broker.Port), nats.UserInfo("qhronos", "nats-secret"))
			require.NoError(t, err)
			t.Cleanup(nc.Close)
			sub, err := nc.SubscribeSync("billing.run")
			require.NoError(t, err)
			require.NoError(t, nc.Flush())

			action := map[string]any{"type": "nats", "params": map[string]any{"endpoint_id": ep.ID, "subject": "billing.run"}}
			first := c.onceAt("nats-1", ep.ID, time.Now().Add(1500*time.Millisecond), map[string]any{"action": action})
			occs := c.settled([]string{first}, 30*time.Second, "completed")
			require.Len(t, occs, 1)
			m, err := sub.NextMsg(30 * time.Second)
			require.NoError(t, err)
			headers := map[string]string{}
			for k := range m.Header {
				headers[k] = m.Header.Get(k)
			}
			require.NoError(t, receiver.NewVerifier([]string{ep.Secret}).VerifyMessage(headers, m.Data))
			for id := range occs {
				require.Equal(t, id, headers["webhook-id"])
			}

			// The broker goes away: attempts fail and are retried.
			broker.Stop()
			second := c.onceAt("nats-2", ep.ID, time.Now().Add(500*time.Millisecond), map[string]any{"action": action})
			qhronostest.Wait(t, 30*time.Second, "a failed attempt while the broker is down", func() bool {
				o := c.occurrences(second)
				return len(o) == 1 && o[0].AttemptCount >= 1 && o[0].Status == "retrying"
			})
			require.NoError(t, broker.Start())
			occs = c.settled([]string{second}, 60*time.Second, "completed")
			for _, o := range occs {
				require.GreaterOrEqual(t, o.AttemptCount, 2)
			}
		})
	}
}
