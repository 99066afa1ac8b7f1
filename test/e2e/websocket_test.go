package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/qhronostest"
)

// A WebSocket client connected to one server process receives an occurrence
// fired by another process, and its acknowledgement completes it there.
// Instance B is API-only (scheduler.dispatch=false), so only A can fire.
func TestWebSocketClientOnOneProcessReceivesFromAnother(t *testing.T) {
	d := newDeployment(t)
	d.withSharedRedis()
	webSocketAcrossProcesses(t, d)
}

// webSocketAcrossProcesses is the cross-process WebSocket scenario on the
// deployment's Redis.
func webSocketAcrossProcesses(t *testing.T, d *deployment) {
	a := d.start("a")
	b := d.start("b", "QHRONOS_SCHEDULER_DISPATCH", "false")
	c := d.client()

	ctx := qhronostest.Context(t, 30*time.Second)
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(b.url, "http")+"/ws", nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.CloseNow() })
	send := func(v any) {
		t.Helper()
		msg, err := json.Marshal(v)
		require.NoError(t, err)
		require.NoError(t, conn.Write(ctx, websocket.MessageText, msg))
	}
	read := func() map[string]any {
		t.Helper()
		_, msg, err := conn.Read(ctx)
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(msg, &m))
		return m
	}
	send(map[string]any{"type": "client-hook", "client_name": "acme", "token": c.token})
	require.Equal(t, "ack", read()["type"])

	status, body, err := c.do("POST", b.url+"/events", map[string]any{
		"name": "cross-process", "start_time": time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339Nano),
		"action": map[string]any{"type": "websocket", "params": map[string]any{"client_name": "acme", "require_ack": true}},
	})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, status, "%s", body)

	frame := read()
	require.Equal(t, "event", frame["type"])
	occID := frame["occurrence_id"].(string)
	send(map[string]any{"type": "ack", "occurrence_id": occID})
	require.Equal(t, "ack", read()["type"])
	got := c.waitStatus(a, occID, "completed", 15*time.Second)
	require.Equal(t, "completed", got.Status, "the acknowledgement is seen by the firing instance")
}
