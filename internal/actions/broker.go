package actions

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/qhronos/qhronos/internal/outbound"
	"github.com/qhronos/qhronos/internal/redact"
)

// Broker actions (nats, amqp, kafka, redis_stream) publish the webhook body
// of an occurrence as one message to a broker. They are action types, not a
// kind of HTTP delivery, because what they send to (a subject, an exchange, a
// topic, a stream) is per event; where they connect to is either the event's
// own url or an endpoint's (params.endpoint_id), and through an endpoint the
// broker gets what HTTP receivers get: the endpoint's rate limit, concurrency
// limit, circuit breaker, disabling, signing secret with its rotation, and its
// auth (basic: the broker user and password; mtls: the client certificate and
// CA) kept write-only.

// DefaultBrokerIdle is how long an unused pooled broker connection stays open.
const DefaultBrokerIdle = 5 * time.Minute

// Broker message header names: the Standard Webhooks names as the webhook
// sends them, in lowercase (AMQP tables and Kafka headers are case-sensitive;
// the receiver kit reads them in any case).
const (
	brokerHeaderContentType = "content-type"
)

// BrokerConfig is what the broker actions share. Build it once in main.
type BrokerConfig struct {
	// Outbound is the policy broker addresses pass at validation and at
	// dial time, as HTTP destinations do.
	Outbound outbound.Options
	// Pool keeps the connections; nil means a pool of the action's own.
	Pool *BrokerPool
	// Redactor and OmitRequests are HTTPConfig's: how the message an
	// attempt publishes is recorded, and whether it is.
	Redactor     *redact.Redactor
	OmitRequests bool
	// Now stamps webhook-timestamp. Nil means time.Now.
	Now func() time.Time
}

func (c BrokerConfig) withDefaults() BrokerConfig {
	if c.Pool == nil {
		c.Pool = NewBrokerPool(DefaultBrokerIdle)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// BrokerTarget is how an endpoint whose URL is a broker's is reached: its
// credentials (auth basic) and TLS settings (the URL's TLS scheme, auth
// mtls). Never logged.
type BrokerTarget struct {
	Username, Password string
	HasUser            bool
	// TLS is the endpoint's TLS configuration; nil when its URL's scheme is
	// the plain one.
	TLS *tls.Config
}

// brokerConn is one pooled connection of a broker client.
type brokerConn interface {
	// usable reports whether the connection can still publish (or
	// reconnects by itself); an unusable one is closed and dialed again.
	usable() bool
	close()
}

// BrokerPool keeps one connection per broker destination (URL, credentials
// and TLS), shared by every attempt to it and reopened when it breaks.
type BrokerPool struct {
	idle   time.Duration
	closed atomic.Bool

	mu      sync.Mutex
	entries map[string]*poolEntry
}

type poolEntry struct {
	// dialing is a token held while connecting, so one attempt dials and
	// the others wait for its connection — each no longer than its own
	// deadline, which a mutex could not offer.
	dialing chan struct{}

	mu   sync.Mutex // guards the fields below; never held across I/O
	conn brokerConn
	used time.Time
	gone bool // swept or closed: no longer in the pool
}

// NewBrokerPool returns a pool closing connections unused for idle.
func NewBrokerPool(idle time.Duration) *BrokerPool {
	if idle <= 0 {
		idle = DefaultBrokerIdle
	}
	return &BrokerPool{idle: idle, entries: map[string]*poolEntry{}}
}

// errPoolClosed fails attempts made while the server shuts down.
var errPoolClosed = errors.New("broker connections are closed (shutting down)")

// get returns the open connection under key, dialing one when there is none
// or it broke.
func (p *BrokerPool) get(ctx context.Context, key string, dial func(ctx context.Context) (brokerConn, error)) (brokerConn, error) {
	for {
		now := time.Now()
		e, err := p.entry(key, now)
		if err != nil {
			return nil, err
		}
		if c := e.open(now); c != nil {
			return c, nil
		}
		select {
		case e.dialing <- struct{}{}:
		case <-ctx.Done():
			return nil, fmt.Errorf("wait for another attempt's connection: %w", ctx.Err())
		}
		c, err := p.connect(ctx, e, now, dial)
		<-e.dialing
		if err == nil && c == nil {
			continue // the entry left the pool meanwhile
		}
		return c, err
	}
}

// entry returns the entry under key, closing the connections of entries
// unused for longer than the pool's idle time on the way.
func (p *BrokerPool) entry(key string, now time.Time) (*poolEntry, error) {
	p.mu.Lock()
	if p.closed.Load() {
		p.mu.Unlock()
		return nil, errPoolClosed
	}
	e := p.entries[key]
	if e == nil {
		e = &poolEntry{dialing: make(chan struct{}, 1)}
		p.entries[key] = e
	}
	var stale []brokerConn
	for k, other := range p.entries {
		if other == e {
			continue
		}
		if !other.mu.TryLock() {
			continue // busy: an attempt is using it
		}
		if other.conn != nil && now.Sub(other.used) > p.idle && len(other.dialing) == 0 {
			delete(p.entries, k)
			other.gone = true
			stale = append(stale, other.conn)
			other.conn = nil
		}
		other.mu.Unlock()
	}
	p.mu.Unlock()
	for _, c := range stale {
		c.close()
	}
	return e, nil
}

// open returns e's connection if it can publish.
func (e *poolEntry) open(now time.Time) brokerConn {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.gone || e.conn == nil || !e.conn.usable() {
		return nil
	}
	e.used = now
	return e.conn
}

// connect dials e's connection, its caller holding e's dialing token. It
// returns nil and no error when e left the pool (the caller starts over).
func (p *BrokerPool) connect(ctx context.Context, e *poolEntry, now time.Time, dial func(ctx context.Context) (brokerConn, error)) (brokerConn, error) {
	e.mu.Lock()
	if e.gone {
		e.mu.Unlock()
		return nil, nil
	}
	if e.conn != nil && e.conn.usable() {
		// Dialed by the attempt this one waited for.
		e.used = now
		c := e.conn
		e.mu.Unlock()
		return c, nil
	}
	broken := e.conn
	e.conn = nil
	e.mu.Unlock()
	if broken != nil {
		broken.close()
	}
	c, err := dial(ctx)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if p.closed.Load() || e.gone {
		c.close()
		return nil, errPoolClosed
	}
	e.conn, e.used = c, now
	return c, nil
}

// drop closes the connection under key if it is still conn: the broker
// refused it in a way that needs a new one, or an attempt on it timed out.
// It never waits for a dial.
func (p *BrokerPool) drop(key string, conn brokerConn) {
	p.mu.Lock()
	e := p.entries[key]
	p.mu.Unlock()
	if e == nil {
		return
	}
	e.mu.Lock()
	mine := e.conn == conn
	if mine {
		e.conn = nil
	}
	e.mu.Unlock()
	if mine {
		conn.close()
	}
}

// Close closes every connection; later attempts fail. main calls it after
// the dispatcher drained.
func (p *BrokerPool) Close() {
	p.mu.Lock()
	p.closed.Store(true)
	entries := p.entries
	p.entries = map[string]*poolEntry{}
	p.mu.Unlock()
	for _, e := range entries {
		e.mu.Lock()
		c := e.conn
		e.conn, e.gone = nil, true
		e.mu.Unlock()
		if c != nil {
			c.close()
		}
	}
}

// brokerDial is everything a client needs to connect: the checked address
// and, from the URL or the endpoint, credentials and TLS.
type brokerDial struct {
	addr     outbound.BrokerAddress
	username string
	password string
	hasUser  bool
	tls      *tls.Config // nil: plain
	dialer   outbound.DialFunc
}

// key identifies the connection in the pool; it is a digest so the pool
// holds no credentials in its keys.
func (d brokerDial) key() string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00%t\x00%p", d.addr.Kind, d.addr.URL.String(), d.username, d.password, d.hasUser, d.tls)
	return hex.EncodeToString(h.Sum(nil))
}

// BrokerMessage is what a broker action publishes: the webhook body (or its
// JWE) and the headers a webhook would carry, lowercase.
type BrokerMessage struct {
	ID      string // the delivery id (webhook-id)
	Body    []byte
	Headers map[string]string
}

// brokerPublisher is one broker's half of a broker action.
type brokerPublisher interface {
	// dial opens a connection.
	dial(ctx context.Context, d brokerDial) (brokerConn, error)
	// publish sends msg and waits for the broker's acknowledgement,
	// returning a short description of it (the attempt's excerpt).
	publish(ctx context.Context, conn brokerConn, req Request, msg BrokerMessage) (string, error)
}

// brokerError is a failure the broker answered; auth marks a refusal of
// the credentials, which no retry can cure until they change.
type brokerError struct {
	err  error
	auth bool
	// reconnect says the connection must be dropped (it is broken).
	reconnect bool
}

func (e *brokerError) Error() string { return e.err.Error() }
func (e *brokerError) Unwrap() error { return e.err }

// brokerDelivery is a broker action's prepared params.
type brokerDelivery struct {
	cfg        BrokerConfig
	kind       string
	pub        brokerPublisher
	endpointID string
	addr       outbound.BrokerAddress // inline url; zero with an endpoint
	url        string                 // inline url as given; "" with an endpoint
	// inlineTLS is built once for an inline TLS url: the pool keys a
	// connection by its TLS configuration, so it must stay the same one.
	inlineTLS *tls.Config
	encrypt   *Encryption
}

var _ EndpointDelivery = (*brokerDelivery)(nil)

// EndpointID implements EndpointDelivery: "" with an inline url.
func (d *brokerDelivery) EndpointID() string { return d.endpointID }

// Destination implements Delivery: the broker's host:port; "" with an
// endpoint (the dispatcher limits by the endpoint it resolves).
func (d *brokerDelivery) Destination() string {
	if d.endpointID != "" {
		return ""
	}
	return d.addr.Host
}

// AckTimeout implements Delivery: the broker's ack is awaited within the
// attempt itself.
func (d *brokerDelivery) AckTimeout() time.Duration { return 0 }

// Execute implements Delivery: one publish, acknowledged or failed.
func (d *brokerDelivery) Execute(ctx context.Context, req Request) Outcome {
	start := d.cfg.Now()
	out := d.execute(ctx, req)
	out.Duration = d.cfg.Now().Sub(start)
	return out
}

func (d *brokerDelivery) execute(ctx context.Context, req Request) (out Outcome) {
	dial, err := d.target(req)
	if err != nil {
		return Outcome{Err: err, Retryable: errors.Is(err, ErrEndpointNotResolved)}
	}
	timeout := req.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	msg, err := NewBrokerMessage(req, d.cfg.Now(), d.encrypt)
	if err != nil {
		return Outcome{Err: fmt.Errorf("%s message: %w", d.kind, err)}
	}
	if !d.cfg.OmitRequests {
		u := d.url
		if req.Target != nil {
			u = req.Target.URL
		}
		sent := recordMessage(HTTPConfig{Redactor: d.cfg.Redactor}.redactor(), u, msg)
		hideRunToken(sent, req.Run)
		defer func() { out.Request = sent }()
	}
	key := dial.key()
	conn, err := d.cfg.Pool.get(ctx, key, func(ctx context.Context) (brokerConn, error) { return d.pub.dial(ctx, dial) })
	if err != nil {
		return d.failed(ctx, "connect to", err, timeout)
	}
	// An attempt that runs out of time gives its connection up: whatever
	// held it (a broker that stopped answering, a library call that waits
	// without a deadline) must not hold the next attempt too, and closing
	// the connection ends the calls still blocked on it — at the deadline,
	// even when the publish does not return (the registry's guard then
	// stops waiting for it).
	stop := context.AfterFunc(ctx, func() { d.cfg.Pool.drop(key, conn) })
	defer stop()
	ack, err := d.pub.publish(ctx, conn, req, msg)
	if err != nil {
		var be *brokerError
		if timedOut(ctx, err) || (errors.As(err, &be) && be.reconnect) {
			// Before returning, so the next attempt cannot pick the
			// connection up ahead of the AfterFunc.
			d.cfg.Pool.drop(key, conn)
		}
		return d.failed(ctx, "publish to", err, timeout)
	}
	return Outcome{Excerpt: ack}
}

// failed turns a connect or publish error into the attempt's outcome: a
// policy refusal and refused credentials are permanent, anything else (the
// broker down, a refused or unconfirmed publish) is retried by the event's
// policy.
func (d *brokerDelivery) failed(ctx context.Context, what string, err error, timeout time.Duration) Outcome {
	var blocked *outbound.BlockedError
	if errors.As(err, &blocked) {
		return Outcome{Err: fmt.Errorf("%s %s: %w", what, d.kind, blocked)}
	}
	var be *brokerError
	if errors.As(err, &be) && be.auth {
		return Outcome{Err: fmt.Errorf("%s %s: credentials refused: %w", what, d.kind, err)}
	}
	if timedOut(ctx, err) {
		return Outcome{Err: fmt.Errorf("%s %s: timed out after %s: %w", what, d.kind, timeout, err), Retryable: true}
	}
	return Outcome{Err: fmt.Errorf("%s %s: %w", what, d.kind, err), Retryable: true}
}

// target returns where this attempt connects: the inline url, or the
// endpoint the dispatcher resolved.
func (d *brokerDelivery) target(req Request) (brokerDial, error) {
	dial := brokerDial{dialer: outbound.NewDialer(d.cfg.Outbound)}
	if d.endpointID == "" {
		dial.addr = d.addr
		dial.username, dial.password, dial.hasUser = d.addr.Username, d.addr.Password, d.addr.HasUser
		dial.tls = d.inlineTLS
		return dial, nil
	}
	t := req.Target
	if t == nil || t.URL == "" {
		return dial, ErrEndpointNotResolved
	}
	if t.EndpointID != "" && !strings.EqualFold(t.EndpointID, d.endpointID) {
		return dial, fmt.Errorf("%w: target is endpoint %s, want %s", ErrEndpointNotResolved, t.EndpointID, d.endpointID)
	}
	if t.Broker == nil || outbound.BrokerKind(t.URL) != d.kind {
		return dial, fmt.Errorf("endpoint %s is not a %s broker endpoint (its url must use %s:// or %s://)",
			d.endpointID, d.kind, outbound.BrokerSchemes[d.kind].Plain, outbound.BrokerSchemes[d.kind].TLS)
	}
	addr, err := outbound.CheckBrokerURL(d.kind, t.URL, d.cfg.Outbound)
	if err != nil {
		return dial, fmt.Errorf("endpoint %s url: %w", d.endpointID, err)
	}
	dial.addr = addr
	dial.username, dial.password, dial.hasUser = addr.Username, addr.Password, addr.HasUser
	if t.Broker.HasUser {
		dial.username, dial.password, dial.hasUser = t.Broker.Username, t.Broker.Password, true
	}
	dial.tls = t.Broker.TLS
	return dial, nil
}

// NewBrokerMessage builds the message of one attempt at now: the webhook
// body — sealed to the receiver's key when enc is set — and its headers
// (content-type, webhook-id, webhook-timestamp, signatures), the signatures
// over the bytes sent.
func NewBrokerMessage(req Request, now time.Time, enc *Encryption) (BrokerMessage, error) {
	body, err := NewPayload(req).Marshal()
	if err != nil {
		return BrokerMessage{}, err
	}
	contentType := "application/json"
	if enc != nil {
		if body, err = enc.Seal(body); err != nil {
			return BrokerMessage{}, err
		}
		contentType = ContentTypeJOSE
	}
	h := http.Header{}
	SignHeaders(h, req.Secrets, req.OccurrenceID, now, body)
	headers := make(map[string]string, len(h)+1)
	for name := range h {
		headers[strings.ToLower(name)] = h.Get(name)
	}
	headers[brokerHeaderContentType] = contentType
	if req.Run != nil {
		headers[strings.ToLower(HeaderRunToken)] = req.Run.Token
	}
	return BrokerMessage{ID: req.OccurrenceID, Body: body, Headers: headers}, nil
}

// brokerParams are the params every broker action takes.
type brokerParams struct {
	URL           string          `json:"url"`
	EndpointID    string          `json:"endpoint_id"`
	EncryptionJWK json.RawMessage `json:"encryption_jwk"`
}

// prepareBroker checks the common params and returns the delivery without
// its publisher.
func prepareBroker(cfg BrokerConfig, kind string, p brokerParams) (*brokerDelivery, error) {
	d := &brokerDelivery{cfg: cfg, kind: kind, url: p.URL}
	switch {
	case p.EndpointID == "" && p.URL == "":
		return nil, &ParamError{Param: "url", Reason: "is required (or endpoint_id)"}
	case p.EndpointID != "" && p.URL != "":
		return nil, &ParamError{Param: "endpoint_id", Reason: "not allowed with url (give one of them)"}
	case p.EndpointID != "":
		id, err := uuid.Parse(p.EndpointID)
		if err != nil || len(p.EndpointID) != 36 {
			return nil, &ParamError{Param: "endpoint_id", Reason: "must be a UUID"}
		}
		d.endpointID = id.String()
	default:
		addr, err := outbound.CheckBrokerURL(kind, p.URL, cfg.Outbound)
		if err != nil {
			return nil, &ParamError{Param: "url", Reason: err.Error()}
		}
		d.addr = addr
		if addr.TLS {
			if d.inlineTLS, err = outbound.BrokerTLS(cfg.Outbound, outbound.Auth{}, addr.Host); err != nil {
				return nil, &ParamError{Param: "url", Reason: err.Error()}
			}
		}
	}
	if len(p.EncryptionJWK) > 0 && string(p.EncryptionJWK) != "null" {
		enc, err := ParseEncryptionJWK(p.EncryptionJWK)
		if err != nil {
			return nil, &ParamError{Param: "encryption_jwk", Reason: err.Error()}
		}
		d.encrypt = enc
	}
	return d, nil
}

// tlsClient starts TLS over conn (the Kafka client dials through the
// guarded dialer, so it cannot do TLS itself).
func tlsClient(conn net.Conn, cfg *tls.Config) *tls.Conn { return tls.Client(conn, cfg) }
