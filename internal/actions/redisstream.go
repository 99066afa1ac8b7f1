package actions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"

	"github.com/redis/go-redis/v9"
)

// RedisStream appends the occurrence to a Redis stream with XADD on the
// Redis its url (or endpoint) names — never the coordination Redis unless
// outbound.allow_coordination_redis (outbound.Reserved, checkStreamKey). The entry's fields are "body" and one field per
// webhook header; success is the entry id Redis answers. nomkstream=true
// refuses to create a stream that does not exist (XADD NOMKSTREAM), so a
// mistyped name fails instead of filling a stream nobody reads; max_len
// trims the stream approximately (MAXLEN ~).
type RedisStream struct{ cfg BrokerConfig }

var _ Action = (*RedisStream)(nil)

// NewRedisStream returns the redis_stream action.
func NewRedisStream(cfg BrokerConfig) *RedisStream { return &RedisStream{cfg: cfg.withDefaults()} }

// Type implements Action.
func (a *RedisStream) Type() string { return "redis_stream" }

type redisStreamParams struct {
	brokerParams
	Stream     string `json:"stream"`
	NoMkStream bool   `json:"nomkstream"`
	MaxLen     int64  `json:"max_len"`
}

// Prepare implements Action: {"url" | "endpoint_id", "stream",
// "nomkstream", "max_len"}.
func (a *RedisStream) Prepare(params json.RawMessage) (Delivery, error) {
	var p redisStreamParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	d, err := prepareBroker(a.cfg, a.Type(), p.brokerParams)
	if err != nil {
		return nil, err
	}
	switch {
	case p.Stream == "":
		return nil, &ParamError{Param: "stream", Reason: "is required"}
	case len(p.Stream) > 1024:
		return nil, &ParamError{Param: "stream", Reason: "at most 1024 bytes"}
	case p.MaxLen < 0:
		return nil, &ParamError{Param: "max_len", Reason: "must not be negative"}
	}
	if err := checkStreamKey(a.cfg.Outbound.Reserved, p.Stream); err != nil {
		return nil, err
	}
	if d.addr.URL != nil {
		if _, err := redisDB(d.addr.URL.Path); err != nil {
			return nil, &ParamError{Param: "url", Reason: err.Error()}
		}
	}
	d.pub = &redisStreamPublisher{stream: p.Stream, noMkStream: p.NoMkStream, maxLen: p.MaxLen}
	return d, nil
}

// redisDB reads the database number of a redis:// URL's path.
func redisDB(path string) (int, error) {
	path = strings.Trim(path, "/")
	if path == "" {
		return 0, nil
	}
	var db int
	if _, err := fmt.Sscanf(path, "%d", &db); err != nil || db < 0 || fmt.Sprint(db) != path {
		return 0, errors.New("path must be a database number (redis://host:6379/0)")
	}
	return db, nil
}

type redisStreamPublisher struct {
	stream     string
	noMkStream bool
	maxLen     int64
}

type redisConn struct{ c *redis.Client }

func (c *redisConn) usable() bool { return true } // go-redis redials by itself
func (c *redisConn) close()       { _ = c.c.Close() }

func (p *redisStreamPublisher) dial(_ context.Context, d brokerDial) (brokerConn, error) {
	db, err := redisDB(d.addr.URL.Path)
	if err != nil {
		return nil, err
	}
	opts := &redis.Options{
		Addr:     d.addr.Host,
		DB:       db,
		PoolSize: 4,
		// One attempt is one XADD: retrying inside the client could add
		// the entry twice; the event's retry policy decides. Nor does it
		// dial twice.
		MaxRetries:    -1,
		DialerRetries: 1,
		// The attempt's deadline bounds every read and write: by default
		// go-redis ignores it for a 5 s read timeout of its own, and an
		// attempt with a 3 s timeout ran 5 s against a silent server.
		ContextTimeoutEnabled: true,
		Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
			conn, err := d.dialer(ctx, network, addr)
			if err != nil || d.tls == nil {
				return conn, err
			}
			tc := tlsClient(conn, d.tls)
			if err := tc.HandshakeContext(ctx); err != nil {
				_ = conn.Close()
				return nil, err
			}
			return tc, nil
		},
	}
	if d.hasUser {
		opts.Username, opts.Password = d.username, d.password
		if d.password == "" {
			// redis://:password@host puts the password where the user is
			// when there is no user part.
			opts.Username, opts.Password = "", d.username
		}
	}
	return &redisConn{c: redis.NewClient(opts)}, nil
}

func (p *redisStreamPublisher) publish(ctx context.Context, conn brokerConn, _ Request, msg BrokerMessage) (string, error) {
	c := conn.(*redisConn)
	names := make([]string, 0, len(msg.Headers))
	for k := range msg.Headers {
		names = append(names, k)
	}
	sort.Strings(names)
	values := make([]any, 0, 2*len(names)+2)
	for _, k := range names {
		values = append(values, k, msg.Headers[k])
	}
	values = append(values, "body", msg.Body)
	args := &redis.XAddArgs{Stream: p.stream, NoMkStream: p.noMkStream, Values: values}
	if p.maxLen > 0 {
		args.MaxLen, args.Approx = p.maxLen, true
	}
	id, err := c.c.XAdd(ctx, args).Result()
	if err != nil {
		if errors.Is(err, redis.Nil) {
			return "", fmt.Errorf("stream %s does not exist (nomkstream)", p.stream)
		}
		lower := strings.ToLower(err.Error())
		if strings.HasPrefix(lower, "wrongpass") || strings.HasPrefix(lower, "noauth") || strings.Contains(lower, "noperm") {
			return "", &brokerError{err: err, auth: true}
		}
		return "", err
	}
	return fmt.Sprintf("added to stream %s as entry %s", p.stream, id), nil
}
