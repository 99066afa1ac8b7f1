package actions_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/actions"
	"github.com/qhronos/qhronos/internal/actions/brokertest"
)

func redisURL(p *brokertest.Process, password string) string {
	return fmt.Sprintf("redis://:%s@127.0.0.1:%d/0", password, p.Port)
}

// readStream returns the entries of stream as a consumer reads them.
func readStream(t *testing.T, srv *brokertest.Process, stream string) []redis.XMessage {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", srv.Port), Password: "redis-secret"})
	t.Cleanup(func() { _ = c.Close() })
	msgs, err := c.XRange(context.Background(), stream, "-", "+").Result()
	require.NoError(t, err)
	return msgs
}

// entry splits a stream entry into its headers and body.
func entry(m redis.XMessage) (map[string]string, []byte) {
	h := map[string]string{}
	var body []byte
	for k, v := range m.Values {
		s, _ := v.(string)
		if k == "body" {
			body = []byte(s)
			continue
		}
		h[k] = s
	}
	return h, body
}

func TestRedisStreamAddsOneSignedEntry(t *testing.T) {
	t.Parallel()
	srv := brokertest.Redis(t)
	d := prepareJSON(t, actions.NewRedisStream(brokerConfig(t)), `{"url":"`+redisURL(srv, "redis-secret")+`","stream":"reminders"}`)
	req := brokerRequest()
	out := d.Execute(context.Background(), req)
	require.NoError(t, out.Err)
	require.Contains(t, out.Excerpt, "added to stream reminders as entry ")
	msgs := readStream(t, srv, "reminders")
	require.Len(t, msgs, 1)
	h, body := entry(msgs[0])
	verifyMessage(t, req, h, body)
}

func TestRedisStreamNoMkStreamRefusesAnUnknownStream(t *testing.T) {
	t.Parallel()
	srv := brokertest.Redis(t)
	d := prepareJSON(t, actions.NewRedisStream(brokerConfig(t)), `{"url":"`+redisURL(srv, "redis-secret")+`","stream":"mistyped","nomkstream":true}`)
	out := d.Execute(context.Background(), brokerRequest())
	require.ErrorContains(t, out.Err, "stream mistyped does not exist")
	require.True(t, out.Retryable)
	require.Empty(t, readStream(t, srv, "mistyped"))
}

func TestRedisStreamWrongCredentialsFailClearly(t *testing.T) {
	t.Parallel()
	srv := brokertest.Redis(t)
	d := prepareJSON(t, actions.NewRedisStream(brokerConfig(t)), `{"url":"`+redisURL(srv, "not-the-password")+`","stream":"s"}`)
	out := d.Execute(context.Background(), brokerRequest())
	require.Error(t, out.Err)
	require.Contains(t, out.Err.Error(), "credentials refused")
	require.Contains(t, out.Err.Error(), "WRONGPASS")
	require.NotContains(t, out.Err.Error(), "not-the-password")
	require.False(t, out.Retryable)
}

func TestRedisStreamBrokerDownIsRetriedUntilItReturns(t *testing.T) {
	t.Parallel()
	srv := brokertest.Redis(t)
	d := prepareJSON(t, actions.NewRedisStream(brokerConfig(t)), `{"url":"`+redisURL(srv, "redis-secret")+`","stream":"jobs"}`)
	req := brokerRequest()
	require.NoError(t, d.Execute(context.Background(), req).Err)

	srv.Stop() // no persistence: the stream is gone with it
	req.Attempt = 2
	out := d.Execute(context.Background(), req)
	require.Error(t, out.Err)
	require.True(t, out.Retryable)

	require.NoError(t, srv.Start())
	req.Attempt = 3
	executeUntilOK(t, d, req)
	msgs := readStream(t, srv, "jobs")
	require.Len(t, msgs, 1)
	h, body := entry(msgs[0])
	verifyMessage(t, req, h, body)
}
