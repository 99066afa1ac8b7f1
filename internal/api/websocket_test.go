package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/qhronos/qhronos/internal/coordination"
	"github.com/qhronos/qhronos/internal/coordination/coordinationtest"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/repository/repositorytest"
)

// wsClient is a real WebSocket client of /ws.
type wsClient struct {
	t    *testing.T
	conn *websocket.Conn
}

func (e *env) dialWS(t *testing.T, header http.Header) (*wsClient, *http.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	url := "ws" + strings.TrimPrefix(e.http.URL, "http") + "/ws"
	conn, res, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: header})
	if err != nil {
		return nil, res, err
	}
	t.Cleanup(func() { _ = conn.CloseNow() })
	return &wsClient{t: t, conn: conn}, res, nil
}

func (c *wsClient) send(v any) {
	c.t.Helper()
	b, err := json.Marshal(v)
	require.NoError(c.t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	require.NoError(c.t, c.conn.Write(ctx, websocket.MessageText, b))
}

// next reads one frame within a bounded wait.
func (c *wsClient) next(wait time.Duration) (map[string]any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	_, b, err := c.conn.Read(ctx)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return m, nil
}

func (c *wsClient) mustNext(wait time.Duration) map[string]any {
	c.t.Helper()
	m, err := c.next(wait)
	require.NoError(c.t, err)
	return m
}

// subscribe opens a connection and completes the handshake.
func (e *env) subscribe(t *testing.T, handshake map[string]any) *wsClient {
	t.Helper()
	c, _, err := e.dialWS(t, nil)
	require.NoError(t, err)
	c.send(handshake)
	ack := c.mustNext(60 * time.Second)
	require.Equal(t, map[string]any{"type": "ack", "message": "subscription registered"}, ack)
	return c
}

// soon is a start time the server still finds in the future when the
// request reaches it on a loaded machine (300 ms was refused by chance as
// "must be in the future"); the tests wait on the delivery, not the clock.
func soon() string { return time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339Nano) }

func TestWebSocketClientHookReceivesAndAcknowledges(t *testing.T) {
	e := newEnv(t, repositorytest.SQLite)
	e.sched.Start(context.Background())
	c := e.subscribe(t, map[string]any{"type": "client-hook", "client_name": "acme", "token": e.master})

	ev := e.createEvent(e.master, map[string]any{"name": "nudge", "start_time": soon(), "tags": []string{"crm"},
		"metadata": map[string]any{"customer": 42},
		"action":   map[string]any{"type": "websocket", "params": map[string]any{"client_name": "acme", "require_ack": true}}})
	frame := c.mustNext(60 * time.Second)
	require.Equal(t, "event", frame["type"])
	require.Equal(t, ev["id"], frame["event_id"])
	require.Equal(t, map[string]any{"customer": float64(42)}, frame["metadata"])
	require.Equal(t, frame["metadata"], frame["payload"], "payload is kept for clients of the original protocol")
	occID := frame["occurrence_id"].(string)

	require.Eventually(t, func() bool { return e.occurrenceStatus(t, occID) == "awaiting_ack" }, 60*time.Second,
		10*time.Millisecond, "delivered, waiting for the client")
	c.send(map[string]any{"type": "ack", "event_id": ev["id"], "occurrence_id": occID})
	reply := c.mustNext(60 * time.Second)
	require.Equal(t, "ack", reply["type"], "%v", reply)
	require.Equal(t, "completed", e.occurrenceStatus(t, occID))
	attempts := e.do("GET", "/occurrences/"+occID+"/attempts", e.master, nil)
	require.Contains(t, string(attempts.Body), `"outcome":"awaiting_ack"`, "the delivery attempt is recorded")

	c.send(map[string]any{"type": "ack", "occurrence_id": occID})
	require.Equal(t, "error", c.mustNext(60 * time.Second)["type"], "a second ack is refused")
	c.send(map[string]any{"type": "subscribe"})
	require.Equal(t, "unsupported message type", c.mustNext(60 * time.Second)["message"])
}

func (e *env) occurrenceStatus(t *testing.T, id string) string {
	t.Helper()
	res := e.do("GET", "/occurrences/"+id, e.master, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	return res.object(t)["status"].(string)
}

func TestWebSocketWithoutClientRetries(t *testing.T) {
	e := newEnv(t, repositorytest.SQLite)
	e.sched.Start(context.Background())
	e.createEvent(e.master, map[string]any{"name": "nobody", "start_time": soon(), "webhook": "q:nobody-home"})
	require.Eventually(t, func() bool {
		rows, err := e.store.ListOccurrences(context.Background(), model.OccurrenceFilter{Unrestricted: true})
		return err == nil && len(rows) == 1 && rows[0].Status == model.OccurrenceRetrying &&
			rows[0].ErrorMessage != nil && strings.Contains(*rows[0].ErrorMessage, "no websocket client")
	}, 15*time.Second, 20*time.Millisecond, "no client connected: the attempt fails and is retried")
}

func TestWebSocketTagListener(t *testing.T) {
	e := newEnv(t, repositorytest.SQLite)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	t.Cleanup(receiver.Close)
	e.sched.Start(context.Background())
	scoped := e.mint("read", []string{"billing"})
	l := e.subscribe(t, map[string]any{"type": "tag-listener", "tags": []string{"billing"}, "token": scoped})

	ev := e.createEvent(e.master, map[string]any{"name": "invoice", "start_time": soon(),
		"webhook": receiver.URL + "/hook", "tags": []string{"billing", "eu"}})
	frame := l.mustNext(60 * time.Second)
	require.Equal(t, ev["id"], frame["event_id"], "tag-listeners receive events carrying their tags, whatever the action")

	l.send(map[string]any{"type": "ack", "occurrence_id": frame["occurrence_id"]})
	require.Equal(t, map[string]any{"type": "error", "message": "acknowledge not supported for tag-listener"},
		l.mustNext(5*time.Second))
}

// TestWebSocketListenerOfAll: a listener of every event gets untagged
// events' frames too, and a scoped token's only its scope's events.
func TestWebSocketListenerOfAll(t *testing.T) {
	e := newEnv(t, repositorytest.SQLite)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	t.Cleanup(receiver.Close)
	e.sched.Start(context.Background())
	all := e.subscribe(t, map[string]any{"type": "tag-listener", "all": true, "token": e.master})
	scoped := e.subscribe(t, map[string]any{"type": "tag-listener", "all": true,
		"token": e.mint("read", []string{"billing"})})

	untagged := e.createEvent(e.master, map[string]any{"name": "untagged sync", "start_time": soon(),
		"webhook": receiver.URL + "/hook"})
	billing := e.createEvent(e.master, map[string]any{"name": "invoice", "start_time": soon(),
		"webhook": receiver.URL + "/hook", "tags": []string{"billing"}})
	got := map[any]bool{}
	for range 2 {
		got[all.mustNext(60 * time.Second)["event_id"]] = true
	}
	require.Equal(t, map[any]bool{untagged["id"]: true, billing["id"]: true}, got,
		"an untagged event's delivery reaches a listener of all, as a tagged one's does")
	require.Equal(t, billing["id"], scoped.mustNext(60 * time.Second)["event_id"],
		"a scoped token's listener of all gets its scope's events only")
	extra, _ := scoped.next(time.Second) // both delivered by now: a frame here would be the untagged one
	require.Nil(t, extra, "the untagged event is not for a token scoped to billing")

	c, _, err := e.dialWS(t, nil)
	require.NoError(t, err)
	c.send(map[string]any{"type": "tag-listener", "all": true, "tags": []string{"billing"}, "token": e.master})
	require.Equal(t, map[string]any{"type": "error", "message": "tags: leave out with all"}, c.mustNext(5*time.Second))
}

func TestWebSocketRefusals(t *testing.T) {
	e := newEnv(t, repositorytest.SQLite, withOptions(func(o *Options) {
		o.WebSocket.HandshakeTimeout = 200 * time.Millisecond
		o.WebSocket.ReadLimit = 1024
	}))
	closeCode := func(c *wsClient) websocket.StatusCode {
		for range 5 {
			if _, err := c.next(5 * time.Second); err != nil {
				return websocket.CloseStatus(err)
			}
		}
		return -1
	}

	t.Run("bad token", func(t *testing.T) {
		c, _, err := e.dialWS(t, nil)
		require.NoError(t, err)
		c.send(map[string]any{"type": "client-hook", "client_name": "acme", "token": "not-a-token"})
		require.Equal(t, map[string]any{"type": "error", "message": "unauthorized"}, c.mustNext(5*time.Second))
		require.Equal(t, websocket.StatusPolicyViolation, closeCode(c))
	})
	t.Run("client-hook outside the token's rights", func(t *testing.T) {
		c, _, err := e.dialWS(t, nil)
		require.NoError(t, err)
		c.send(map[string]any{"type": "client-hook", "client_name": "acme", "token": e.mint("read", []string{"other"})})
		require.Equal(t, "error", c.mustNext(60 * time.Second)["type"])
		require.Equal(t, websocket.StatusPolicyViolation, closeCode(c))
	})
	t.Run("tag-listener outside scope", func(t *testing.T) {
		c, _, err := e.dialWS(t, nil)
		require.NoError(t, err)
		c.send(map[string]any{"type": "tag-listener", "tags": []string{"billing"}, "token": e.mint("read", []string{"ops"})})
		require.Equal(t, map[string]any{"type": "error", "message": "tags: outside token scope"}, c.mustNext(5*time.Second))
	})
	t.Run("foreign Origin", func(t *testing.T) {
		_, res, err := e.dialWS(t, http.Header{"Origin": []string{"https://evil.example"}})
		require.Error(t, err)
		require.NotNil(t, res)
		require.Equal(t, http.StatusForbidden, res.StatusCode)
	})
	t.Run("handshake timeout", func(t *testing.T) {
		c, _, err := e.dialWS(t, nil)
		require.NoError(t, err)
		require.Equal(t, websocket.StatusPolicyViolation, closeCode(c))
	})
	t.Run("oversized frame", func(t *testing.T) {
		c, _, err := e.dialWS(t, nil)
		require.NoError(t, err)
		c.send(map[string]any{"type": "client-hook", "client_name": "acme", "token": strings.Repeat("x", 4096)})
		require.Equal(t, websocket.StatusMessageTooBig, closeCode(c))
	})
}

// twoInstances builds two servers sharing one PostgreSQL schema and one
// Redis (under a prefix of the test's own), as two instances of a deployment.
func twoInstances(t *testing.T) (*env, *env) {
	client, prefix := coordinationtest.RedisClient(t)
	store := repositorytest.Postgres(t)
	shared := func(testing.TB) *repository.Store { return store }
	coordA := coordination.NewRedis(client, prefix, zap.NewNop())
	coordB := coordination.NewRedis(client, prefix, zap.NewNop())
	t.Cleanup(func() { _ = coordA.Close(); _ = coordB.Close() })
	return newEnv(t, shared, withCoordinator(coordA, "instance-a")), newEnv(t, shared, withCoordinator(coordB, "instance-b"))
}

// A client connected to instance B receives an occurrence fired by instance A
// (shared PostgreSQL and Redis), and its ack travels back.
func TestWebSocketAcrossInstances(t *testing.T) {
	a, b := twoInstances(t)

	c := b.subscribe(t, map[string]any{"type": "client-hook", "client_name": "acme", "token": b.master})
	a.sched.Start(context.Background()) // only A dispatches
	a.createEvent(a.master, map[string]any{"name": "cross", "start_time": soon(),
		"action": map[string]any{"type": "websocket", "params": map[string]any{"client_name": "acme", "require_ack": true}}})
	frame := c.mustNext(60 * time.Second)
	occID := frame["occurrence_id"].(string)
	c.send(map[string]any{"type": "ack", "occurrence_id": occID})
	require.Equal(t, "ack", c.mustNext(60 * time.Second)["type"])
	require.Eventually(t, func() bool { return a.occurrenceStatus(t, occID) == "completed" }, 60*time.Second,
		10*time.Millisecond, "the ack is visible on the firing instance")
}

// A slow client is disconnected rather than stalling the others.
func TestWebSocketSlowClientIsDisconnected(t *testing.T) {
	e := newEnv(t, repositorytest.SQLite, withOptions(func(o *Options) { o.WebSocket.SendQueue = 2 }))
	slow := e.subscribe(t, map[string]any{"type": "client-hook", "client_name": "acme", "token": e.master})
	_ = slow
	var delivered atomic.Int64
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var closed bool
	for i := 0; i < 10000 && !closed; i++ {
		n, err := e.hub.SendToClient(ctx, "acme", nil, []byte(`{"type":"event"}`), time.Millisecond)
		require.NoError(t, err)
		delivered.Add(int64(n))
		closed = n == 0
	}
	require.True(t, closed, "the connection that stopped reading was dropped")
	_, err := slow.next(5 * time.Second)
	for err == nil {
		_, err = slow.next(5 * time.Second)
	}
	require.True(t, errors.Is(err, context.DeadlineExceeded) || websocket.CloseStatus(err) == websocket.StatusPolicyViolation ||
		strings.Contains(err.Error(), "EOF") || strings.Contains(err.Error(), "closed"), "got %v", err)
}

// After a client-hook acknowledges, the event's last_status says what
// happened: "awaiting_ack" while the client has not answered, "completed"
// once it has (it once stayed "awaiting_ack" for good).
func TestAcknowledgedDeliveryCompletesTheEventsLastStatus(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			e.sched.Start(context.Background())
			c := e.subscribe(t, map[string]any{"type": "client-hook", "client_name": "acme", "token": e.master})
			ev := e.createEvent(e.master, map[string]any{"name": "nudge", "start_time": soon(),
				"action": map[string]any{"type": "websocket", "params": map[string]any{"client_name": "acme", "require_ack": true}}})
			id := ev["id"].(string)
			frame := c.mustNext(60 * time.Second)
			occID := frame["occurrence_id"].(string)
			lastStatus := func() any { return e.do("GET", "/events/"+id, e.master, nil).object(t)["last_status"] }
			require.Eventually(t, func() bool { return e.occurrenceStatus(t, occID) == "awaiting_ack" }, 60*time.Second,
				10*time.Millisecond, "delivered, waiting for the client")
			require.Eventually(t, func() bool { return lastStatus() == "awaiting_ack" }, 60*time.Second, 10*time.Millisecond)
			c.send(map[string]any{"type": "ack", "event_id": id, "occurrence_id": occID})
			require.Equal(t, "ack", c.mustNext(60 * time.Second)["type"])
			require.Equal(t, "completed", e.occurrenceStatus(t, occID))
			require.Equal(t, "completed", lastStatus(), "the event's last_status follows the acknowledgement")
			var list []map[string]any
			e.do("GET", "/events", e.master, nil).json(t, &list)
			require.Len(t, list, 1)
			require.Equal(t, "completed", list[0]["last_status"], "the list (and the console's Events page) agrees")
		})
	}
}

// A tag-listener with "all" receives every occurrence its token may read:
// untagged events too for the master token, only its own tags' for a
// scoped one.
func TestWebSocketListenerToAll(t *testing.T) {
	e := newEnv(t, repositorytest.SQLite)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	t.Cleanup(receiver.Close)
	e.sched.Start(context.Background())
	all := e.subscribe(t, map[string]any{"type": "tag-listener", "all": true, "token": e.master})
	scoped := e.subscribe(t, map[string]any{"type": "tag-listener", "all": true, "token": e.mint("read", []string{"billing"})})

	ids := map[string]bool{}
	for _, tags := range [][]string{nil, {"ops"}, {"billing"}} {
		ev := e.createEvent(e.master, map[string]any{"name": "n", "start_time": soon(), "webhook": receiver.URL, "tags": tags})
		ids[ev["id"].(string)] = true
	}
	for range 3 {
		f := all.mustNext(60 * time.Second)
		require.True(t, ids[f["event_id"].(string)], "an event of this test: %v", f)
		delete(ids, f["event_id"].(string))
	}
	require.Empty(t, ids, "the master token's listener got every event, the untagged one included")
	f := scoped.mustNext(60 * time.Second)
	require.Equal(t, []any{"billing"}, f["tags"], "the scoped listener's first frame is its own tag's event")
	later := e.createEvent(e.master, map[string]any{"name": "n", "start_time": soon(), "webhook": receiver.URL,
		"tags": []string{"billing"}})
	f = scoped.mustNext(60 * time.Second)
	require.Equal(t, later["id"], f["event_id"], "nothing of other tags, or untagged, came in between")

	c, _, err := e.dialWS(t, nil)
	require.NoError(t, err)
	c.send(map[string]any{"type": "tag-listener", "all": true, "tags": []string{"billing"}, "token": e.master})
	require.Equal(t, "error", c.mustNext(5 * time.Second)["type"])
}
