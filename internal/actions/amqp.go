package actions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// AMQP publishes the occurrence to an AMQP 0-9-1 exchange (RabbitMQ) with a
// routing key, on a channel in confirm mode: the attempt succeeds when the
// broker confirms the message (basic.ack); a nack, a closed channel (an
// unknown exchange, a refused permission) or no confirmation in time fails
// it with the broker's reason. Messages are published mandatory: one the
// exchange routes to no queue is returned by the broker and fails the
// attempt (retried: a queue may be bound before the next), where a plain
// publish would be confirmed and dropped — a lost occurrence reported as
// delivered. Messages are persistent and carry the delivery id as
// message_id and the webhook headers as headers.
type AMQP struct{ cfg BrokerConfig }

var _ Action = (*AMQP)(nil)

// NewAMQP returns the amqp action.
func NewAMQP(cfg BrokerConfig) *AMQP { return &AMQP{cfg: cfg.withDefaults()} }

// Type implements Action.
func (a *AMQP) Type() string { return "amqp" }

type amqpParams struct {
	brokerParams
	Exchange   *string `json:"exchange"`
	RoutingKey string  `json:"routing_key"`
}

// Prepare implements Action: {"url" | "endpoint_id", "exchange",
// "routing_key"}. exchange "" is the default exchange, which routes to the
// queue named by routing_key.
func (a *AMQP) Prepare(params json.RawMessage) (Delivery, error) {
	var p amqpParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	d, err := prepareBroker(a.cfg, a.Type(), p.brokerParams)
	if err != nil {
		return nil, err
	}
	if p.Exchange == nil {
		return nil, &ParamError{Param: "exchange", Reason: `is required ("" names the default exchange)`}
	}
	if len(*p.Exchange) > 255 || len(p.RoutingKey) > 255 {
		field := "exchange"
		if len(p.RoutingKey) > 255 {
			field = "routing_key"
		}
		return nil, &ParamError{Param: field, Reason: "at most 255 bytes"}
	}
	if *p.Exchange == "" && p.RoutingKey == "" {
		return nil, &ParamError{Param: "routing_key", Reason: "is required with the default exchange (it names the queue)"}
	}
	d.pub = &amqpPublisher{exchange: *p.Exchange, routingKey: p.RoutingKey}
	return d, nil
}

type amqpPublisher struct {
	exchange, routingKey string
}

type amqpConn struct{ c *amqp.Connection }

func (c *amqpConn) usable() bool { return !c.c.IsClosed() }
func (c *amqpConn) close()       { _ = c.c.Close() }

func (p *amqpPublisher) dial(ctx context.Context, d brokerDial) (brokerConn, error) {
	u := *d.addr.URL
	u.User = nil
	u.Scheme = "amqp"
	cfg := amqp.Config{
		Properties: amqp.Table{"connection_name": "qhronos"},
		// amqp091-go bounds the TLS and AMQP handshakes only in its own
		// dialer, and takes no context: a broker that accepted the
		// connection and never answered held the attempt for minutes. The
		// attempt's deadline bounds them here; amqp091-go clears it once
		// the connection is open (its heartbeats take over).
		Dial: func(network, addr string) (net.Conn, error) {
			conn, err := d.dialer(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			if dl, ok := ctx.Deadline(); ok {
				if err := conn.SetDeadline(dl); err != nil {
					_ = conn.Close()
					return nil, err
				}
			}
			return conn, nil
		},
	}
	if d.tls != nil {
		u.Scheme = "amqps"
		cfg.TLSClientConfig = d.tls
	}
	if d.hasUser {
		cfg.SASL = []amqp.Authentication{&amqp.PlainAuth{Username: d.username, Password: d.password}}
	}
	c, err := amqp.DialConfig(u.String(), cfg)
	if err != nil {
		return nil, amqpError(err)
	}
	return &amqpConn{c: c}, nil
}

func amqpError(err error) error {
	var ae *amqp.Error
	if errors.Is(err, amqp.ErrCredentials) || errors.Is(err, amqp.ErrSASL) || errors.Is(err, amqp.ErrVhost) ||
		(errors.As(err, &ae) && ae.Code == amqp.AccessRefused && !ae.Server) {
		return &brokerError{err: err, auth: true, reconnect: true}
	}
	if errors.Is(err, amqp.ErrClosed) {
		return &brokerError{err: err, reconnect: true}
	}
	return err
}

func (p *amqpPublisher) publish(ctx context.Context, conn brokerConn, req Request, msg BrokerMessage) (string, error) {
	c := conn.(*amqpConn)
	// A channel per publish: the broker closes a channel on a refused
	// publish (unknown exchange), and that must not fail other attempts
	// sharing the connection.
	ch, err := c.c.Channel()
	if err != nil {
		return "", amqpError(err)
	}
	defer func() { _ = ch.Close() }()
	closed := ch.NotifyClose(make(chan *amqp.Error, 1))
	// The broker sends basic.return before the basic.ack of an unroutable
	// mandatory message, and the client hands it to this channel before it
	// reads the ack: a buffer of one never blocks its reader.
	returned := ch.NotifyReturn(make(chan amqp.Return, 1))
	if err := ch.Confirm(false); err != nil {
		return "", fmt.Errorf("confirm mode: %w", amqpError(err))
	}
	headers := amqp.Table{}
	for k, v := range msg.Headers {
		headers[k] = v
	}
	dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, p.exchange, p.routingKey, true, false, amqp.Publishing{
		Headers: headers, ContentType: msg.Headers[brokerHeaderContentType], DeliveryMode: amqp.Persistent,
		MessageId: msg.ID, Timestamp: time.Now().UTC(), AppId: "qhronos", Body: msg.Body,
	})
	if err != nil {
		return "", amqpError(err)
	}
	acked, err := dc.WaitContext(ctx)
	if err != nil {
		return "", fmt.Errorf("wait for the broker's confirmation: %w", err)
	}
	if acked {
		select {
		case r := <-returned:
			return "", fmt.Errorf("broker returned the message: %s (code %d): exchange %q routes routing key %q to no queue",
				r.ReplyText, r.ReplyCode, p.exchange, p.routingKey)
		default:
		}
		return fmt.Sprintf("confirmed by the broker (exchange %q, routing key %q)", p.exchange, p.routingKey), nil
	}
	select {
	case e := <-closed:
		if e != nil {
			return "", fmt.Errorf("broker refused the message: %s (code %d)", strings.TrimSpace(e.Reason), e.Code)
		}
	default:
	}
	return "", errors.New("broker did not confirm the message (nack)")
}
