package actions

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// Kafka produces the occurrence as one record to a Kafka topic with
// acks=all (every in-sync replica has it) through an idempotent producer:
// the attempt succeeds when the partition leader acknowledges the write.
// The record's key is params.key (the partitioning key), its headers the
// webhook headers. url names one seed broker (kafka://host:9092, or
// kafka+tls://); the client learns the rest of the cluster from it.
type Kafka struct{ cfg BrokerConfig }

var _ Action = (*Kafka)(nil)

// NewKafka returns the kafka action.
func NewKafka(cfg BrokerConfig) *Kafka { return &Kafka{cfg: cfg.withDefaults()} }

// Type implements Action.
func (a *Kafka) Type() string { return "kafka" }

type kafkaParams struct {
	brokerParams
	Topic string `json:"topic"`
	Key   string `json:"key"`
	// SASLMechanism is used with credentials: PLAIN (default),
	// SCRAM-SHA-256 or SCRAM-SHA-512.
	SASLMechanism string `json:"sasl_mechanism"`
}

// Prepare implements Action: {"url" | "endpoint_id", "topic", "key",
// "sasl_mechanism"}.
func (a *Kafka) Prepare(params json.RawMessage) (Delivery, error) {
	var p kafkaParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	d, err := prepareBroker(a.cfg, a.Type(), p.brokerParams)
	if err != nil {
		return nil, err
	}
	if err := checkKafkaTopic(p.Topic); err != nil {
		return nil, &ParamError{Param: "topic", Reason: err.Error()}
	}
	if len(p.Key) > 1<<10 {
		return nil, &ParamError{Param: "key", Reason: "at most 1024 bytes"}
	}
	mech := strings.ToUpper(p.SASLMechanism)
	switch mech {
	case "", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
	default:
		return nil, &ParamError{Param: "sasl_mechanism", Reason: "must be PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512"}
	}
	d.pub = &kafkaPublisher{topic: p.Topic, key: p.Key, mechanism: mech}
	return d, nil
}

// checkKafkaTopic applies Kafka's own rule for topic names.
func checkKafkaTopic(t string) error {
	switch {
	case t == "":
		return errors.New("is required")
	case len(t) > 249:
		return errors.New("at most 249 characters")
	case t == "." || t == "..":
		return errors.New(`must not be "." or ".."`)
	}
	for _, r := range t {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return errors.New("may contain only ASCII letters, digits, '.', '_' and '-'")
		}
	}
	return nil
}

type kafkaPublisher struct {
	topic, key, mechanism string
}

type kafkaConn struct {
	cl   *kgo.Client
	dead atomic.Bool
}

func (c *kafkaConn) usable() bool { return !c.dead.Load() }
func (c *kafkaConn) close()       { c.cl.Close() }

func (p *kafkaPublisher) dial(ctx context.Context, d brokerDial) (brokerConn, error) {
	opts := []kgo.Opt{
		kgo.SeedBrokers(d.addr.Host),
		kgo.ClientID("qhronos"),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerLinger(0),
		// Not idempotent: an idempotent producer may not fail a record once
		// a request went out, so an attempt could outlive its deadline
		// while the broker is away. Delivery is at-least-once anyway, and
		// receivers dedupe on webhook-id.
		kgo.DisableIdempotentWrite(),
		// A topic that does not exist is a refused publish, reported
		// after one metadata refresh rather than retried in the client.
		kgo.UnknownTopicRetries(1),
		kgo.Dialer(func(ctx context.Context, network, host string) (net.Conn, error) {
			conn, err := d.dialer(ctx, network, host)
			if err != nil || d.tls == nil {
				return conn, err
			}
			cfg := d.tls.Clone()
			if h, _, err := net.SplitHostPort(host); err == nil && cfg.ServerName == "" {
				cfg.ServerName = h
			}
			tc := tlsClient(conn, cfg)
			if err := tc.HandshakeContext(ctx); err != nil {
				_ = conn.Close()
				return nil, err
			}
			return tc, nil
		}),
	}
	if d.hasUser {
		var m sasl.Mechanism
		switch p.mechanism {
		case "SCRAM-SHA-256":
			m = scram.Auth{User: d.username, Pass: d.password}.AsSha256Mechanism()
		case "SCRAM-SHA-512":
			m = scram.Auth{User: d.username, Pass: d.password}.AsSha512Mechanism()
		default:
			m = plain.Auth{User: d.username, Pass: d.password}.AsMechanism()
		}
		opts = append(opts, kgo.SASL(m))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	// Connect now, so refused credentials are reported as such (the
	// producer alone would retry them until the attempt's deadline).
	if err := cl.Ping(ctx); err != nil {
		cl.Close()
		if d.hasUser && (errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)) {
			// Some brokers close the connection instead of answering a
			// failed SASL exchange.
			return nil, fmt.Errorf("the broker closed the connection during SASL %s authentication (check the credentials and sasl_mechanism): %w",
				cmp.Or(p.mechanism, "PLAIN"), err)
		}
		return nil, kafkaError(err)
	}
	return &kafkaConn{cl: cl}, nil
}

func (p *kafkaPublisher) publish(ctx context.Context, conn brokerConn, _ Request, msg BrokerMessage) (string, error) {
	c := conn.(*kafkaConn)
	rec := &kgo.Record{Topic: p.topic, Value: msg.Body, Timestamp: time.Now()}
	if p.key != "" {
		rec.Key = []byte(p.key)
	}
	for k, v := range msg.Headers {
		rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: k, Value: []byte(v)})
	}
	r, err := c.cl.ProduceSync(ctx, rec).First()
	if err != nil {
		if errors.Is(err, kerr.UnknownTopicOrPartition) {
			return "", fmt.Errorf("topic %s does not exist: %w", p.topic, err)
		}
		// Any other failure retires the client: it may hold a refusal or
		// metadata of a cluster that has since changed (a broker that came
		// back with a new topic id), and a fresh one costs one connect.
		c.dead.Store(true)
		return "", kafkaError(err)
	}
	return fmt.Sprintf("acknowledged by all in-sync replicas (topic %s, partition %d, offset %d)", r.Topic, r.Partition, r.Offset), nil
}

// kafkaError marks refused credentials and a closed client.
func kafkaError(err error) error {
	switch {
	case errors.Is(err, kerr.SaslAuthenticationFailed) || errors.Is(err, kerr.IllegalSaslState) ||
		errors.Is(err, kerr.UnsupportedSaslMechanism) || errors.Is(err, kerr.TopicAuthorizationFailed) ||
		errors.Is(err, kerr.ClusterAuthorizationFailed):
		return &brokerError{err: err, auth: true, reconnect: true}
	case errors.Is(err, kgo.ErrClientClosed):
		return &brokerError{err: err, reconnect: true}
	}
	return err
}
