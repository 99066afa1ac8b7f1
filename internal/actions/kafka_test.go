package actions_test

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/qhronos/qhronos/internal/actions"
	"github.com/qhronos/qhronos/internal/actions/brokertest"
)

// Kafka has no Debian package to start: these tests run against franz-go's
// in-process kfake cluster, which speaks the Kafka protocol on a real
// loopback port (SASL included).

// kafkaCluster starts a one-broker kfake cluster on a port of its own
// choosing (no window for another test to take it) and returns its port.
func kafkaCluster(t *testing.T) int {
	t.Helper()
	c, err := kfake.NewCluster(kafkaOpts(0)...)
	require.NoError(t, err)
	t.Cleanup(c.Close)
	_, port, err := net.SplitHostPort(c.ListenAddrs()[0])
	require.NoError(t, err)
	n, err := strconv.Atoi(port)
	require.NoError(t, err)
	return n
}

// kafkaOpts are the cluster's settings; port 0 lets it pick one.
func kafkaOpts(port int) []kfake.Opt {
	opts := []kfake.Opt{kfake.NumBrokers(1), kfake.SeedTopics(1, "orders"),
		kfake.EnableSASL(), kfake.Superuser("PLAIN", "qhronos", "kafka-secret")}
	if port != 0 {
		opts = append(opts, kfake.Ports(port))
	}
	return opts
}

func kafkaParams(port int, password, topic string) string {
	return fmt.Sprintf(`{"url":"kafka://qhronos:%s@127.0.0.1:%d","topic":%q,"key":"customer-42"}`, password, port, topic)
}

// consumeOne reads the first record of topic as a receiver would.
func consumeOne(t *testing.T, port int, topic string) *kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(fmt.Sprintf("127.0.0.1:%d", port)), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.SASL(plainAuth("qhronos", "kafka-secret")))
	require.NoError(t, err)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		fs := cl.PollFetches(ctx)
		require.NoError(t, ctx.Err(), "no record within 60 s")
		if recs := fs.Records(); len(recs) > 0 {
			return recs[0]
		}
	}
}

func recordHeaders(r *kgo.Record) map[string]string {
	h := map[string]string{}
	for _, kv := range r.Headers {
		h[kv.Key] = string(kv.Value)
	}
	return h
}

func TestKafkaProducesOneSignedRecordWithItsKey(t *testing.T) {
	t.Parallel()
	port := kafkaCluster(t)
	d := prepareJSON(t, actions.NewKafka(brokerConfig(t)), kafkaParams(port, "kafka-secret", "orders"))
	req := brokerRequest()
	out := d.Execute(context.Background(), req)
	require.NoError(t, out.Err)
	require.Contains(t, out.Excerpt, "acknowledged by all in-sync replicas (topic orders, partition 0, offset 0)")
	r := consumeOne(t, port, "orders")
	require.Equal(t, "customer-42", string(r.Key))
	verifyMessage(t, req, recordHeaders(r), r.Value)
}

func TestKafkaUnknownTopicIsARefusedPublish(t *testing.T) {
	t.Parallel()
	port := kafkaCluster(t)
	d := prepareJSON(t, actions.NewKafka(brokerConfig(t)), kafkaParams(port, "kafka-secret", "no-such-topic"))
	out := d.Execute(context.Background(), brokerRequest())
	require.ErrorContains(t, out.Err, "topic no-such-topic does not exist")
	require.True(t, out.Retryable)
}

func TestKafkaWrongCredentialsFailClearly(t *testing.T) {
	t.Parallel()
	port := kafkaCluster(t)
	d := prepareJSON(t, actions.NewKafka(brokerConfig(t)), kafkaParams(port, "wrong-secret", "orders"))
	out := d.Execute(context.Background(), brokerRequest())
	require.Error(t, out.Err)
	// A Kafka broker answers SASL_AUTHENTICATION_FAILED ("credentials
	// refused", permanent); kfake closes the connection instead, which the
	// attempt names as a failed authentication too.
	require.Contains(t, out.Err.Error(), "during SASL PLAIN authentication (check the credentials")
	require.NotContains(t, out.Err.Error(), "wrong-secret")
}

func TestKafkaBrokerDownIsRetriedUntilItReturns(t *testing.T) {
	t.Parallel()
	first, err := kfake.NewCluster(kafkaOpts(0)...)
	require.NoError(t, err)
	_, p, err := net.SplitHostPort(first.ListenAddrs()[0])
	require.NoError(t, err)
	port, err := strconv.Atoi(p)
	require.NoError(t, err)
	d := prepareJSON(t, actions.NewKafka(brokerConfig(t)), kafkaParams(port, "kafka-secret", "orders"))
	req := brokerRequest()
	req.Timeout = 2 * time.Second
	require.NoError(t, d.Execute(context.Background(), req).Err)

	first.Close()
	req.Attempt = 2
	out := d.Execute(context.Background(), req)
	require.Error(t, out.Err)
	require.True(t, out.Retryable)

	// The broker returns at the same address (its log is gone: kfake keeps
	// it in memory).
	var second *kfake.Cluster
	brokertest.WaitFor(t, "the Kafka port to be free", func() bool {
		second, err = kfake.NewCluster(kafkaOpts(port)...)
		return err == nil
	})
	t.Cleanup(second.Close)
	req.Attempt = 3
	req.Timeout = 10 * time.Second
	executeUntilOK(t, d, req)
	r := consumeOne(t, port, "orders")
	verifyMessage(t, req, recordHeaders(r), r.Value)
}

func plainAuth(user, pass string) sasl.Mechanism {
	return plain.Auth{User: user, Pass: pass}.AsMechanism()
}
