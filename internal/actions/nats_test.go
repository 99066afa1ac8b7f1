package actions_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/actions"
	"github.com/qhronos/qhronos/internal/actions/brokertest"
)

func natsURL(p *brokertest.Process, user string) string {
	return fmt.Sprintf("nats://%s@127.0.0.1:%d", user, p.Port)
}

// natsConsumer connects to srv as a receiver would.
func natsConsumer(t *testing.T, srv *brokertest.Process) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(fmt.Sprintf("nats://127.0.0.1:%d", srv.Port), nats.UserInfo("qhronos", "nats-secret"))
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	return nc
}

func natsHeaders(m *nats.Msg) map[string]string {
	out := map[string]string{}
	for k := range m.Header {
		out[k] = m.Header.Get(k)
	}
	return out
}

func TestNATSCorePublishDeliversOnceWithSignedHeaders(t *testing.T) {
	t.Parallel()
	srv := brokertest.NATS(t)
	nc := natsConsumer(t, srv)
	sub, err := nc.SubscribeSync("reports.nightly")
	require.NoError(t, err)
	require.NoError(t, nc.Flush()) // the server knows the subscription
	d := prepareJSON(t, actions.NewNATS(brokerConfig(t)), `{"url":"`+natsURL(srv, "qhronos:nats-secret")+`","subject":"reports.nightly"}`)
	req := brokerRequest()
	out := d.Execute(context.Background(), req)
	require.NoError(t, out.Err)
	require.Contains(t, out.Excerpt, "reports.nightly")
	m, err := sub.NextMsg(60 * time.Second)
	require.NoError(t, err)
	verifyMessage(t, req, natsHeaders(m), m.Data)
	_, err = sub.NextMsg(100 * time.Millisecond)
	require.ErrorIs(t, err, nats.ErrTimeout, "one attempt publishes one message")
}

func TestNATSJetStreamPublishIsAcknowledgedByTheStream(t *testing.T) {
	t.Parallel()
	srv := brokertest.NATS(t)
	js, err := jetstream.New(natsConsumer(t, srv))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	stream, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}})
	require.NoError(t, err)

	d := prepareJSON(t, actions.NewNATS(brokerConfig(t)), `{"url":"`+natsURL(srv, "qhronos:nats-secret")+`","subject":"orders.created","jetstream":true}`)
	req := brokerRequest()
	out := d.Execute(ctx, req)
	require.NoError(t, out.Err)
	require.Contains(t, out.Excerpt, "stream ORDERS, sequence 1")
	// A retry of the same delivery (the first ack was lost) is dropped by
	// the stream's duplicate window: the receiver sees one message.
	req.Attempt = 2
	out = d.Execute(ctx, req)
	require.NoError(t, out.Err)
	require.Contains(t, out.Excerpt, "duplicate")

	m, err := stream.GetMsg(ctx, 1)
	require.NoError(t, err)
	h := map[string]string{}
	for k := range m.Header {
		h[k] = m.Header.Get(k)
	}
	verifyMessage(t, req, h, m.Data)
	info, err := stream.Info(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 1, info.State.Msgs)
}

func TestNATSJetStreamWithoutAStreamIsARefusedPublish(t *testing.T) {
	t.Parallel()
	srv := brokertest.NATS(t)
	d := prepareJSON(t, actions.NewNATS(brokerConfig(t)), `{"url":"`+natsURL(srv, "qhronos:nats-secret")+`","subject":"nowhere.to.go","jetstream":true}`)
	out := d.Execute(context.Background(), brokerRequest())
	require.Error(t, out.Err)
	require.Contains(t, out.Err.Error(), "no JetStream stream stored subject nowhere.to.go")
	require.True(t, out.Retryable, "a stream may be created before the next attempt")
}

func TestNATSWrongCredentialsFailClearly(t *testing.T) {
	t.Parallel()
	srv := brokertest.NATS(t)
	d := prepareJSON(t, actions.NewNATS(brokerConfig(t)), `{"url":"`+natsURL(srv, "qhronos:wrong-password")+`","subject":"a"}`)
	out := d.Execute(context.Background(), brokerRequest())
	require.Error(t, out.Err)
	require.Contains(t, out.Err.Error(), "credentials refused")
	require.Contains(t, out.Err.Error(), "uthorization")
	require.NotContains(t, out.Err.Error(), "wrong-password")
	require.False(t, out.Retryable)
}

func TestNATSBrokerDownIsRetriedUntilItReturns(t *testing.T) {
	t.Parallel()
	srv := brokertest.NATS(t)
	d := prepareJSON(t, actions.NewNATS(brokerConfig(t)), `{"url":"`+natsURL(srv, "qhronos:nats-secret")+`","subject":"jobs.run"}`)
	req := brokerRequest()
	require.NoError(t, d.Execute(context.Background(), req).Err)

	srv.Stop()
	req.Attempt = 2
	out := d.Execute(context.Background(), req)
	require.Error(t, out.Err, "nothing can acknowledge while the server is down")
	require.True(t, out.Retryable)

	require.NoError(t, srv.Start())
	nc := natsConsumer(t, srv)
	sub, err := nc.SubscribeSync("jobs.run")
	require.NoError(t, err)
	require.NoError(t, nc.Flush())
	req.Attempt = 3
	executeUntilOK(t, d, req)
	m, err := sub.NextMsg(60 * time.Second)
	require.NoError(t, err)
	verifyMessage(t, req, natsHeaders(m), m.Data)
}
