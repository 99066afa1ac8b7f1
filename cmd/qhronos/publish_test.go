package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/actions/brokertest"
	"github.com/qhronos/qhronos/internal/qhronostest"
)

// TestCreatePublishingEvent: --publish and --to make a nats event that the
// server delivers to the subject; --encrypt-to puts the receiver's public
// key on a webhook; flag misuse is a usage error.
func TestCreatePublishingEvent(t *testing.T) {
	t.Parallel()
	broker := brokertest.NATS(t)
	srv := qhronostest.Start(t, qhronostest.SQLite)
	e := serverEnv(t, srv)
	nc, err := nats.Connect(fmt.Sprintf("nats://127.0.0.1:%d", broker.Port), nats.UserInfo("qhronos", "nats-secret"))
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	sub, err := nc.SubscribeSync("cli.orders")
	require.NoError(t, err)
	require.NoError(t, nc.Flush())

	r := cli(t, e, "", "events", "create", "--name", "publish", "--start", time.Now().Add(time.Second).UTC().Format(time.RFC3339Nano),
		"--publish", fmt.Sprintf("nats://qhronos:nats-secret@127.0.0.1:%d", broker.Port), "--to", "cli.orders", "-o", "json")
	require.Equal(t, exitOK, r.code, r.stderr)
	var ev struct {
		Action struct {
			Type   string         `json:"type"`
			Params map[string]any `json:"params"`
		} `json:"action"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &ev))
	require.Equal(t, "nats", ev.Action.Type)
	require.Equal(t, "cli.orders", ev.Action.Params["subject"])
	require.NotContains(t, r.stdout, "nats-secret", "the URL's password is write-only")
	m, err := sub.NextMsg(60 * time.Second)
	require.NoError(t, err)
	require.NotEmpty(t, m.Header.Get("webhook-signature"))

	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	jwk, err := json.Marshal(jose.JSONWebKey{Key: &k.PublicKey, KeyID: "2026-11"})
	require.NoError(t, err)
	keyFile := filepath.Join(t.TempDir(), "receiver.jwk")
	require.NoError(t, os.WriteFile(keyFile, jwk, 0o600))
	r = cli(t, e, "", "events", "create", "--name", "sealed", "--start", "in 1 hour",
		"--webhook", "https://example.com/hooks", "--encrypt-to", keyFile, "-o", "json")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &ev))
	require.Equal(t, "webhook", ev.Action.Type)
	require.Equal(t, "2026-11", ev.Action.Params["encryption_jwk"].(map[string]any)["kid"])

	for _, args := range [][]string{
		{"--publish", "http://example.com", "--to", "x"},
		{"--publish", "nats://127.0.0.1:4222"},
		{"--publish", "amqp://127.0.0.1:5672", "--to", "no-colon"},
		{"--to", "x", "--webhook", "https://example.com"},
	} {
		r = cli(t, e, "", append([]string{"events", "create", "--name", "bad", "--start", "in 1 hour"}, args...)...)
		require.Equal(t, exitUsage, r.code, "%v: %s", args, r.stdout)
	}
}
