package actions_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/qhronos/qhronos/internal/actions"
	"github.com/qhronos/qhronos/internal/actions/brokertest"
	"github.com/qhronos/qhronos/internal/coordination"
	"github.com/qhronos/qhronos/internal/hub"
)

// Every attempt ends at its deadline whatever its destination does: one
// that accepts the connection and never answers, or answers one byte a
// second, holds a dispatch worker no longer than the attempt's timeout. The
// attempts go through the Registry, as the dispatcher's do.

// deadlineTimeout is the attempts' timeout; deadlineSlack (hostile_test.go)
// the generous bound on how far past it a busy machine may end one.
const deadlineTimeout = time.Second

// deadlineRegistry registers every action type the way main does.
func deadlineRegistry(t *testing.T, sender actions.ClientSender) *actions.Registry {
	t.Helper()
	httpCfg, brokerCfg := testConfig(t, nil), brokerConfig(t)
	r := actions.NewRegistry()
	for _, a := range []actions.Action{actions.NewWebhook(httpCfg), actions.NewAPICall(httpCfg), actions.NewNATS(brokerCfg),
		actions.NewAMQP(brokerCfg), actions.NewKafka(brokerCfg), actions.NewRedisStream(brokerCfg), actions.NewWebSocket(sender, 0)} {
		require.NoError(t, r.Register(a))
	}
	return r
}

// requireTimedOut runs one attempt with a short timeout and checks that it
// ends by its deadline as a retryable timeout.
func requireTimedOut(t *testing.T, d actions.Delivery, req actions.Request, timeout time.Duration) {
	t.Helper()
	req.Timeout = timeout
	done := make(chan actions.Outcome, 1)
	start := time.Now()
	go func() { done <- d.Execute(context.Background(), req) }()
	var out actions.Outcome
	select {
	case out = <-done:
	case <-time.After(timeout + deadlineSlack):
		t.Fatalf("the attempt with a %s timeout is still running after %s", timeout, time.Since(start).Round(time.Millisecond))
	}
	require.Error(t, out.Err, "an attempt to a peer that does not answer cannot succeed")
	require.Contains(t, out.Err.Error(), "timed out after "+timeout.String())
	require.True(t, out.Retryable, "a timed-out attempt is retried: %v", out.Err)
}

// requireDelivered runs one attempt with a generous timeout and checks that
// it succeeds.
func requireDelivered(t *testing.T, d actions.Delivery, req actions.Request) {
	t.Helper()
	req.Timeout = 30 * time.Second
	out := d.Execute(context.Background(), req)
	require.NoError(t, out.Err, "an attempt after the peer recovered must not inherit a wedged connection")
}

// deadlineCase is one action type against a real destination behind a
// brokertest.Proxy.
type deadlineCase struct {
	name, typ string
	// greeting is how the destination's answer starts; the slow peer
	// trickles it (a byte a second never completes one).
	greeting string
	// start starts the destination and returns its address, and the params
	// and endpoint target (nil for an inline url) of a delivery to addr.
	start func(t *testing.T) (target string, to func(addr string) (params string, target *actions.Target))
	// serverFirst: the server greets first (the slow peer trickles its
	// greeting without waiting for the client).
	serverFirst bool
	// direct: after connecting, the client talks to addresses the broker
	// advertises (Kafka), so a connection it keeps open never crosses the
	// proxy.
	direct bool
}

func httpDestination(params string, endpoint bool) func(t *testing.T) (string, func(string) (string, *actions.Target)) {
	return func(t *testing.T) (string, func(string) (string, *actions.Target)) {
		srv, _ := recorder(t, http.StatusOK)
		return srv.Listener.Addr().String(), func(addr string) (string, *actions.Target) {
			url := "http://" + addr + "/hook"
			if !endpoint {
				return fmt.Sprintf(params, url), nil
			}
			id := uuid.NewString()
			return fmt.Sprintf(params, id), &actions.Target{EndpointID: id, URL: url}
		}
	}
}

var deadlineCases = []deadlineCase{
	{name: "webhook", typ: "webhook", greeting: "HTTP/1.1 200 OK\r\n", start: httpDestination(`{"url":%q}`, false)},
	{name: "apicall", typ: "apicall", greeting: "HTTP/1.1 200 OK\r\n", start: httpDestination(`{"method":"PUT","url":%q,"body":{"n":1}}`, false)},
	{name: "webhook-endpoint", typ: "webhook", greeting: "HTTP/1.1 200 OK\r\n", start: httpDestination(`{"endpoint_id":%q}`, true)},
	{name: "apicall-endpoint", typ: "apicall", greeting: "HTTP/1.1 200 OK\r\n", start: httpDestination(`{"method":"POST","endpoint_id":%q}`, true)},
	{name: "nats", typ: "nats", greeting: "INFO {}\r\n", serverFirst: true, start: func(t *testing.T) (string, func(string) (string, *actions.Target)) {
		srv := brokertest.NATS(t)
		return "127.0.0.1:" + strconv.Itoa(srv.Port), func(addr string) (string, *actions.Target) {
			return `{"url":"nats://qhronos:nats-secret@` + addr + `","subject":"deadline.test"}`, nil
		}
	}},
	{name: "amqp", typ: "amqp", greeting: "\x01\x00\x00\x00\x00\x01\x00", start: func(t *testing.T) (string, func(string) (string, *actions.Target)) {
		node := brokertest.RabbitMQ(t)
		key, _, _ := amqpQueue(t, node)
		return "127.0.0.1:" + strconv.Itoa(node.Port), func(addr string) (string, *actions.Target) {
			return fmt.Sprintf(`{"url":"amqp://guest:guest@%s/","exchange":"amq.direct","routing_key":%q}`, addr, key), nil
		}
	}},
	{name: "kafka", typ: "kafka", greeting: "\x00\x00\x01\x00", direct: true, start: func(t *testing.T) (string, func(string) (string, *actions.Target)) {
		port := kafkaCluster(t)
		return "127.0.0.1:" + strconv.Itoa(port), func(addr string) (string, *actions.Target) {
			return `{"url":"kafka://qhronos:kafka-secret@` + addr + `","topic":"orders"}`, nil
		}
	}},
	{name: "redis_stream", typ: "redis_stream", greeting: "+", start: func(t *testing.T) (string, func(string) (string, *actions.Target)) {
		srv := brokertest.Redis(t)
		return "127.0.0.1:" + strconv.Itoa(srv.Port), func(addr string) (string, *actions.Target) {
			return `{"url":"redis://:redis-secret@` + addr + `/0","stream":"deadline"}`, nil
		}
	}},
}

func TestEveryAttemptEndsAtItsDeadline(t *testing.T) {
	t.Parallel()
	for _, c := range deadlineCases {
		for _, peer := range []string{"silent", "slow"} {
			t.Run(c.name+"/"+peer, func(t *testing.T) {
				t.Parallel()
				target, to := c.start(t)
				proxy := brokertest.NewProxy(t, target)
				params, endpoint := to(proxy.Addr())
				d, err := deadlineRegistry(t, nil).Prepare(c.typ, json.RawMessage(params))
				require.NoError(t, err)
				req := brokerRequest()
				req.Target = endpoint

				// The peer is bad from the first connection.
				if peer == "silent" {
					proxy.Stall()
				} else {
					proxy.Trickle(c.greeting, c.serverFirst)
				}
				requireTimedOut(t, d, req, deadlineTimeout)
				proxy.Resume()
				req.Attempt++
				requireDelivered(t, d, req)
				if c.direct {
					return
				}

				// The peer stops answering on the connection the last
				// attempt left open, then recovers: the next attempt must
				// not reuse the wedged connection.
				proxy.Stall()
				req.Attempt++
				requireTimedOut(t, d, req, deadlineTimeout)
				proxy.Resume()
				req.Attempt++
				requireDelivered(t, d, req)
			})
		}
	}
}

// TestWebSocketAttemptEndsAtItsDeadline: with no client connected here, a
// websocket attempt publishes the delivery on the Redis bus for other
// instances; a Redis that stops answering must not hold it past its
// deadline.
func TestWebSocketAttemptEndsAtItsDeadline(t *testing.T) {
	t.Parallel()
	srv := brokertest.Redis(t)
	proxy := brokertest.NewProxy(t, "127.0.0.1:"+strconv.Itoa(srv.Port))
	client, err := coordination.NewRedisClient(coordination.RedisConfig{URL: "redis://:redis-secret@" + proxy.Addr()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Close() })
	h := hub.New(coordination.NewRedis(client, "deadline-test:", zap.NewNop()), "instance-a", zap.NewNop())
	d, err := deadlineRegistry(t, h).Prepare("websocket", json.RawMessage(`{"client_name":"billing-worker"}`))
	require.NoError(t, err)

	// Shorter than the bus client's own 1 s I/O timeout, which ignores the
	// attempt's context.
	proxy.Stall()
	requireTimedOut(t, d, brokerRequest(), 500*time.Millisecond)

	proxy.Resume()
	h.Add(hub.NewListener("billing-worker", nil, func([]string) bool { return true }, 4))
	requireDelivered(t, d, brokerRequest())
}

// stubborn is an action whose attempts ignore their context: each blocks
// until the test releases it, as a client library without a deadline would.
type stubborn struct {
	release  chan struct{}
	returned chan struct{}
}

func (s *stubborn) Type() string { return "stubborn" }

func (s *stubborn) Prepare(json.RawMessage) (actions.Delivery, error) {
	return stubbornDelivery{s}, nil
}

type stubbornDelivery struct{ s *stubborn }

func (d stubbornDelivery) Destination() string       { return "stubborn.example:443" }
func (d stubbornDelivery) AckTimeout() time.Duration { return 0 }
func (d stubbornDelivery) EndpointID() string        { return "6f1c2d3e-0000-4000-8000-000000000001" }

func (d stubbornDelivery) Execute(context.Context, actions.Request) actions.Outcome {
	defer func() { d.s.returned <- struct{}{} }()
	<-d.s.release
	return actions.Outcome{Excerpt: "released"}
}

func stubbornRegistry(t *testing.T) (*stubborn, actions.Delivery) {
	t.Helper()
	s := &stubborn{release: make(chan struct{}, 1), returned: make(chan struct{}, 1)}
	r := actions.NewRegistry()
	require.NoError(t, r.Register(s))
	d, err := r.Prepare("stubborn", json.RawMessage(`{}`))
	require.NoError(t, err)
	return s, d
}

func waitReturned(t *testing.T, s *stubborn) {
	t.Helper()
	select {
	case <-s.returned:
	case <-time.After(60 * time.Second):
		t.Fatal("the abandoned attempt never returned")
	}
}

func TestRegistryDeliveryEndsAtDeadlineWhenItsActionIgnoresIt(t *testing.T) {
	t.Parallel()
	s, d := stubbornRegistry(t)
	require.Equal(t, "stubborn.example:443", d.Destination())
	require.Equal(t, "6f1c2d3e-0000-4000-8000-000000000001", actions.EndpointOf(d), "the dispatcher still finds the endpoint")

	req := baseRequest()
	req.Timeout = deadlineTimeout
	start := time.Now()
	out := d.Execute(context.Background(), req)
	elapsed := time.Since(start)
	require.Less(t, elapsed, deadlineTimeout+deadlineSlack, "the attempt outlived its deadline")
	require.GreaterOrEqual(t, out.Duration, deadlineTimeout)
	require.ErrorIs(t, out.Err, context.DeadlineExceeded)
	require.Contains(t, out.Err.Error(), "timed out after 1s")
	require.True(t, out.Retryable)

	// The abandoned call ends when its action lets go.
	s.release <- struct{}{}
	waitReturned(t, s)
}

func TestRegistryDeliveryPassesAnOutcomeInTime(t *testing.T) {
	t.Parallel()
	s, d := stubbornRegistry(t)
	s.release <- struct{}{}
	out := d.Execute(context.Background(), baseRequest())
	require.NoError(t, out.Err)
	require.Equal(t, "released", out.Excerpt)
	waitReturned(t, s)
}

func TestRegistryDeliveryEndsWhenCancelled(t *testing.T) {
	t.Parallel()
	s, d := stubbornRegistry(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := baseRequest()
	req.Timeout = time.Hour
	start := time.Now()
	out := d.Execute(ctx, req)
	require.Less(t, time.Since(start), deadlineSlack)
	require.ErrorIs(t, out.Err, context.Canceled)
	require.NotErrorIs(t, out.Err, context.DeadlineExceeded)
	require.True(t, out.Retryable)
	s.release <- struct{}{}
	waitReturned(t, s)
}
