package actions_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/actions"
	"github.com/qhronos/qhronos/internal/actions/brokertest"
)

// amqpQueue declares a queue bound to amq.direct with a fresh routing key,
// as the receiver's side would, and returns the key and a channel to read it.
func amqpQueue(t *testing.T, node *brokertest.Rabbit) (string, *amqp.Channel, string) {
	t.Helper()
	conn, err := amqp.Dial(fmt.Sprintf("amqp://guest:guest@127.0.0.1:%d/", node.Port))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	ch, err := conn.Channel()
	require.NoError(t, err)
	key := "reports." + uuid.NewString()
	q, err := ch.QueueDeclare("", false, true, true, false, nil)
	require.NoError(t, err)
	require.NoError(t, ch.QueueBind(q.Name, key, "amq.direct", false, nil))
	return key, ch, q.Name
}

// getOne waits for the queue's first message.
func getOne(t *testing.T, ch *amqp.Channel, queue string) amqp.Delivery {
	t.Helper()
	var msg amqp.Delivery
	brokertest.WaitFor(t, "a message in "+queue, func() bool {
		m, ok, err := ch.Get(queue, true)
		require.NoError(t, err)
		msg = m
		return ok
	})
	return msg
}

func tableHeaders(tbl amqp.Table) map[string]string {
	h := map[string]string{}
	for k, v := range tbl {
		if s, ok := v.(string); ok {
			h[k] = s
		}
	}
	return h
}

func TestAMQPPublishIsConfirmedAndDeliveredOnceWithHeaders(t *testing.T) {
	t.Parallel()
	node := brokertest.RabbitMQ(t)
	key, ch, queue := amqpQueue(t, node)
	d := prepareJSON(t, actions.NewAMQP(brokerConfig(t)),
		fmt.Sprintf(`{"url":"amqp://guest:guest@127.0.0.1:%d/","exchange":"amq.direct","routing_key":%q}`, node.Port, key))
	req := brokerRequest()
	out := d.Execute(context.Background(), req)
	require.NoError(t, out.Err)
	require.Contains(t, out.Excerpt, "confirmed by the broker")
	m := getOne(t, ch, queue)
	require.Equal(t, req.OccurrenceID, m.MessageId)
	require.Equal(t, "application/json", m.ContentType)
	require.Equal(t, uint8(amqp.Persistent), m.DeliveryMode)
	verifyMessage(t, req, tableHeaders(m.Headers), m.Body)
	_, ok, err := ch.Get(queue, true)
	require.NoError(t, err)
	require.False(t, ok, "one attempt publishes one message")
}

func TestAMQPUnknownExchangeIsARefusedPublish(t *testing.T) {
	t.Parallel()
	node := brokertest.RabbitMQ(t)
	d := prepareJSON(t, actions.NewAMQP(brokerConfig(t)),
		fmt.Sprintf(`{"url":"amqp://guest:guest@127.0.0.1:%d/","exchange":"no-such-exchange","routing_key":"k"}`, node.Port))
	out := d.Execute(context.Background(), brokerRequest())
	require.Error(t, out.Err)
	require.Contains(t, out.Err.Error(), "broker refused the message")
	require.Contains(t, out.Err.Error(), "no exchange 'no-such-exchange'")
	require.True(t, out.Retryable, "the exchange may be declared before the next attempt")
	// The refusal closed only that attempt's channel: the pooled
	// connection still publishes.
	key, ch, queue := amqpQueue(t, node)
	ok := prepareJSON(t, actions.NewAMQP(brokerConfig(t)),
		fmt.Sprintf(`{"url":"amqp://guest:guest@127.0.0.1:%d/","exchange":"amq.direct","routing_key":%q}`, node.Port, key))
	require.NoError(t, ok.Execute(context.Background(), brokerRequest()).Err)
	getOne(t, ch, queue)
}

func TestAMQPWrongCredentialsFailClearly(t *testing.T) {
	t.Parallel()
	node := brokertest.RabbitMQ(t)
	d := prepareJSON(t, actions.NewAMQP(brokerConfig(t)),
		fmt.Sprintf(`{"url":"amqp://guest:not-guest@127.0.0.1:%d/","exchange":"amq.direct","routing_key":"k"}`, node.Port))
	out := d.Execute(context.Background(), brokerRequest())
	require.Error(t, out.Err)
	require.Contains(t, out.Err.Error(), "credentials refused")
	require.Contains(t, out.Err.Error(), "username or password not allowed")
	require.NotContains(t, out.Err.Error(), "not-guest")
	require.False(t, out.Retryable)
}

func TestAMQPBrokerDownIsRetriedUntilItReturns(t *testing.T) {
	t.Parallel()
	node := brokertest.RabbitMQ(t)
	// The node stays up; the path to it goes away and comes back, which is
	// what a client sees of a broker restart.
	proxy := brokertest.NewProxy(t, fmt.Sprintf("127.0.0.1:%d", node.Port))
	key, ch, queue := amqpQueue(t, node)
	d := prepareJSON(t, actions.NewAMQP(brokerConfig(t)),
		fmt.Sprintf(`{"url":"amqp://guest:guest@127.0.0.1:%d/","exchange":"amq.direct","routing_key":%q}`, proxy.Port, key))
	req := brokerRequest()
	req.Timeout = 5 * time.Second
	require.NoError(t, d.Execute(context.Background(), req).Err)
	getOne(t, ch, queue)

	proxy.Cut()
	req.Attempt = 2
	out := d.Execute(context.Background(), req)
	require.Error(t, out.Err)
	require.True(t, out.Retryable)

	proxy.Restore(t)
	req.Attempt = 3
	executeUntilOK(t, d, req)
	m := getOne(t, ch, queue)
	verifyMessage(t, req, tableHeaders(m.Headers), m.Body)
}

func TestAMQPUnroutableMessageIsAFailedAttempt(t *testing.T) {
	t.Parallel()
	node := brokertest.RabbitMQ(t)
	// amq.direct exists, but no queue is bound with this routing key: a
	// plain publish would be confirmed and the message dropped.
	d := prepareJSON(t, actions.NewAMQP(brokerConfig(t)),
		fmt.Sprintf(`{"url":"amqp://guest:guest@127.0.0.1:%d/","exchange":"amq.direct","routing_key":"nobody-listens"}`, node.Port))
	out := d.Execute(context.Background(), brokerRequest())
	require.Error(t, out.Err)
	require.Contains(t, out.Err.Error(), "broker returned the message: NO_ROUTE (code 312)")
	require.Contains(t, out.Err.Error(), `routing key "nobody-listens" to no queue`)
	require.True(t, out.Retryable, "a queue may be bound before the next attempt")

	// Once a queue is bound, the same delivery goes through.
	key, ch, queue := amqpQueue(t, node)
	ok := prepareJSON(t, actions.NewAMQP(brokerConfig(t)),
		fmt.Sprintf(`{"url":"amqp://guest:guest@127.0.0.1:%d/","exchange":"amq.direct","routing_key":%q}`, node.Port, key))
	require.NoError(t, ok.Execute(context.Background(), brokerRequest()).Err)
	getOne(t, ch, queue)
}
