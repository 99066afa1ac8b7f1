package hub_test

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/qhronos/qhronos/internal/coordination"
	"github.com/qhronos/qhronos/internal/coordination/coordinationtest"
	"github.com/qhronos/qhronos/internal/hub"
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
