package actions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// NATS publishes the occurrence to a NATS subject: with a core publish
// acknowledged by the server's answer to a flush (the server received it;
// core NATS keeps nothing for absent subscribers), or with jetstream=true a
// JetStream publish acknowledged once a stream stored it. A JetStream
// publish carries the delivery id as Nats-Msg-Id, so the stream drops a
// retry's duplicate within its duplicate window.
type NATS struct{ cfg BrokerConfig }

var _ Action = (*NATS)(nil)

// NewNATS returns the nats action.
func NewNATS(cfg BrokerConfig) *NATS { return &NATS{cfg: cfg.withDefaults()} }

// Type implements Action.
func (a *NATS) Type() string { return "nats" }

type natsParams struct {
	brokerParams
	Subject   string `json:"subject"`
	JetStream bool   `json:"jetstream"`
}

// Prepare implements Action: {"url" | "endpoint_id", "subject", "jetstream"}.
func (a *NATS) Prepare(params json.RawMessage) (Delivery, error) {
	var p natsParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	d, err := prepareBroker(a.cfg, a.Type(), p.brokerParams)
	if err != nil {
		return nil, err
	}
	if err := checkNATSSubject(p.Subject); err != nil {
		return nil, &ParamError{Param: "subject", Reason: err.Error()}
	}
	d.pub = &natsPublisher{subject: p.Subject, jetstream: p.JetStream}
	return d, nil
}

// checkNATSSubject accepts a publishable subject: dot-separated non-empty
// tokens, no wildcards, no whitespace.
func checkNATSSubject(s string) error {
	if s == "" {
		return errors.New("is required")
	}
	if len(s) > 255 {
		return errors.New("at most 255 characters")
	}
	if strings.ContainsAny(s, " \t\r\n") {
		return errors.New("must not contain whitespace")
	}
	for _, tok := range strings.Split(s, ".") {
		switch tok {
		case "":
			return errors.New("must not have empty tokens (leading, trailing or double dots)")
		case "*", ">":
			return errors.New("must not contain wildcards (a message is published to one subject)")
		}
	}
	return nil
}

type natsPublisher struct {
	subject   string
	jetstream bool
}

type natsConn struct {
	nc *nats.Conn
	js jetstream.JetStream
}

func (c *natsConn) usable() bool { return !c.nc.IsClosed() }
func (c *natsConn) close()       { c.nc.Close() }

// natsDialer adapts the guarded dialer to nats.CustomDialer (which takes
// no context).
type natsDialer struct {
	dial    func(ctx context.Context, network, address string) (net.Conn, error)
	timeout time.Duration
}

func (d natsDialer) Dial(network, address string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d.timeout)
	defer cancel()
	return d.dial(ctx, network, address)
}

func (p *natsPublisher) dial(ctx context.Context, d brokerDial) (brokerConn, error) {
	// The attempt's deadline bounds the connect and the handshake. The
	// client reconnects with the same timeout later, in the background, so
	// it is at least a second: an attempt with less time left may run over,
	// and the registry's deadline guard ends it.
	timeout := 10 * time.Second
	if dl, ok := ctx.Deadline(); ok {
		timeout = max(time.Until(dl), time.Second)
	}
	scheme := "nats"
	if d.tls != nil {
		scheme = "tls"
	}
	opts := []nats.Option{
		nats.Name("qhronos"),
		nats.SetCustomDialer(natsDialer{dial: d.dialer, timeout: timeout}),
		nats.Timeout(timeout),
		// Reconnect for as long as the connection is pooled; while it is
		// down, publishes fail (no buffering) so the attempt is retried
		// by the event's policy rather than reported sent.
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.ReconnectBufSize(-1),
		nats.NoCallbacksAfterClientClose(),
	}
	if d.tls != nil {
		opts = append(opts, nats.Secure(d.tls))
	}
	if d.hasUser {
		if d.password == "" {
			// nats://token@host is token authentication.
			opts = append(opts, nats.Token(d.username))
		} else {
			opts = append(opts, nats.UserInfo(d.username, d.password))
		}
	}
	nc, err := nats.Connect(scheme+"://"+d.addr.Host, opts...)
	if err != nil {
		return nil, natsError(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	return &natsConn{nc: nc, js: js}, nil
}

func natsError(err error) error {
	lower := strings.ToLower(err.Error())
	if errors.Is(err, nats.ErrAuthorization) || errors.Is(err, nats.ErrAuthExpired) ||
		strings.Contains(lower, "authorization violation") || strings.Contains(lower, "authentication") {
		return &brokerError{err: err, auth: true, reconnect: true}
	}
	return err
}

func (p *natsPublisher) publish(ctx context.Context, conn brokerConn, req Request, msg BrokerMessage) (string, error) {
	c := conn.(*natsConn)
	m := nats.NewMsg(p.subject)
	m.Data = msg.Body
	for k, v := range msg.Headers {
		m.Header.Set(k, v)
	}
	if !p.jetstream {
		if err := c.nc.PublishMsg(m); err != nil {
			return "", natsError(err)
		}
		// The server answers a flush after it processed what came before.
		if err := c.nc.FlushWithContext(ctx); err != nil {
			return "", fmt.Errorf("flush: %w", natsError(err))
		}
		return fmt.Sprintf("published to %s (core NATS: the server received it)", p.subject), nil
	}
	var opts []jetstream.PublishOpt
	if !req.Manual {
		// A manual replay is a deliberate re-send: the stream must not
		// drop it as a duplicate of the first delivery.
		opts = append(opts, jetstream.WithMsgID(msg.ID))
	}
	ack, err := c.js.PublishMsg(ctx, m, opts...)
	if err != nil {
		if errors.Is(err, jetstream.ErrNoStreamResponse) {
			return "", fmt.Errorf("no JetStream stream stored subject %s: %w", p.subject, err)
		}
		return "", natsError(err)
	}
	dup := ""
	if ack.Duplicate {
		dup = " (duplicate: the stream already had this delivery)"
	}
	return fmt.Sprintf("stored by JetStream stream %s, sequence %d%s", ack.Stream, ack.Sequence, dup), nil
}
