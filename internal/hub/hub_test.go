package hub_test

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/qhronos/qhronos/internal/actions"
	"github.com/qhronos/qhronos/internal/coordination"
	"github.com/qhronos/qhronos/internal/coordination/coordinationtest"
	"github.com/qhronos/qhronos/internal/hub"
	"github.com/qhronos/qhronos/internal/model"
)

// With Redis unreachable, feeding tag-listeners never waits on it: local
// listeners get every frame at once, and frames for other instances are
// dropped and counted once the outbox is full, instead of each publish
// holding the delivery path for its timeout.
func TestBroadcastNeverWaitsOnTheBus(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: coordinationtest.BlackHoleAddr(t), MaxRetries: -1})
	t.Cleanup(func() { _ = client.Close() })
	bus := coordination.NewRedis(client, "hub-test:", zap.NewNop())
	h := hub.New(bus, "instance-a", zap.NewNop())
	require.NoError(t, h.Start(t.Context()))
	t.Cleanup(h.Stop)

	l := hub.NewListener("", []string{"billing"}, func([]string) bool { return true }, 64)
	h.Add(l)

	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 10 {
			h.Broadcast([]string{"billing"}, []byte(`{"type":"event"}`))
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second): // ten publishes waiting on the bus would take 20 s
		t.Fatal("Broadcast waited on the unreachable bus")
	}
	for range 10 {
		select {
		case <-l.Queue():
		case <-time.After(60 * time.Second):
			t.Fatal("a local listener missed a frame")
		}
	}

	// Every frame is in the outbox (4,096), in the one batch being
	// published (at most 256) or dropped and counted.
	const extra = 1000
	for range 4096 + extra {
		h.Broadcast([]string{"billing"}, []byte(`{"type":"event"}`))
	}
	require.GreaterOrEqual(t, h.DroppedFrames(), uint64(extra-256),
		"frames beyond the outbox are dropped and counted, not waited for")
}

// Frames for tag-listeners are built and published only while some
// instance has one: an instance learns of another's listener before that
// listener's session is acknowledged, of listeners that were there before it
// started, and of the last one leaving.
func TestTagListenerPresenceAcrossInstances(t *testing.T) {
	client, prefix := coordinationtest.RedisClient(t)
	start := func(id string) *hub.Hub {
		h := hub.New(coordination.NewRedis(coordinationtest.RedisPeer(t, client), prefix, zap.NewNop()), id, zap.NewNop())
		require.NoError(t, h.Start(t.Context()))
		t.Cleanup(h.Stop)
		select {
		case <-h.Ready():
		case <-time.After(30 * time.Second):
			t.Fatal("hub never subscribed")
		}
		return h
	}
	a, b := start("instance-a"), start("instance-b")
	// Every frame published on the bus, in order.
	frames, err := coordination.NewRedis(client, prefix, zap.NewNop()).Subscribe(t.Context(), "ws.deliver")
	require.NoError(t, err)

	eventually := func(what string, cond func() bool) {
		t.Helper()
		require.Eventually(t, cond, 30*time.Second, 5*time.Millisecond, what)
	}
	ev := &model.Event{ID: "e1", Name: "nightly", Tags: []string{"billing"}}
	require.False(t, a.Listening(), "no tag-listener anywhere")
	a.ObserveAttempt(ev, &model.Occurrence{ID: "unheard", AttemptCount: 1}, actions.Outcome{}, time.Now())

	l := hub.NewListener("", []string{"billing"}, func([]string) bool { return true }, 64)
	b.Add(l)
	eventually("instance a never learned of b's listener", a.Listening)
	a.ObserveAttempt(ev, &model.Occurrence{ID: "heard", AttemptCount: 1}, actions.Outcome{}, time.Now())
	select {
	case f := <-l.Queue():
		require.Contains(t, string(f), `"heard"`)
	case <-time.After(30 * time.Second):
		t.Fatal("the listener on b missed a's frame")
	}
	select {
	case f := <-frames:
		require.Contains(t, string(f), `"heard"`, "the frame nobody could hear was never published")
	case <-time.After(30 * time.Second):
		t.Fatal("no frame on the bus")
	}

	c := start("instance-c")
	eventually("a new instance never learned of b's listener", c.Listening)

	b.Remove(l)
	eventually("instance a never learned that b's last listener left", func() bool { return !a.Listening() })
	eventually("instance c never learned that b's last listener left", func() bool { return !c.Listening() })

	// A listener of a's own gets a's frames there, and they go no further
	// while no other instance listens.
	own := hub.NewListener("", []string{"billing"}, func([]string) bool { return true }, 64)
	a.Add(own)
	a.ObserveAttempt(ev, &model.Occurrence{ID: "local-only", AttemptCount: 1}, actions.Outcome{}, time.Now())
	select {
	case f := <-own.Queue():
		require.Contains(t, string(f), `"local-only"`)
	case <-time.After(30 * time.Second):
		t.Fatal("a's own listener missed its frame")
	}
	// Once b listens again, a's frames go on the bus: the first one there
	// is one of those, not the one only a's own listener could hear.
	b.Add(l)
	deadline := time.Now().Add(30 * time.Second)
	for {
		a.ObserveAttempt(ev, &model.Occurrence{ID: "shared", AttemptCount: 1}, actions.Outcome{}, time.Now())
		select {
		case f := <-frames:
			require.Contains(t, string(f), `"shared"`, "a frame only a's own listener could hear went on the bus")
			return
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("instance a never learned of b's listener again")
		}
	}
}
