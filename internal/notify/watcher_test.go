package notify_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/notify"
)

// backend is a dependency whose reachability the test sets.
type backend struct {
	mu  sync.Mutex
	err error
}

func (b *backend) set(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.err = err
}

func (b *backend) Ping(context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

func TestWatcherNotifiesOnceWhenUnreachableAndOnceWhenRecovered(t *testing.T) {
	t.Parallel()
	r := newReceiver(t, testSecret)
	clk := newClock()
	n, _ := webhookNotifier(t, r, clk, notify.Options{MinInterval: -1})
	db, redis := &backend{}, &backend{}
	w := notify.NewWatcher([]notify.Dependency{{Name: "database", Ping: db.Ping}, {Name: "redis", Ping: redis.Ping}},
		n, clk.Now, notify.WatcherConfig{After: time.Minute, Instance: "qhronosd-1"})
	ctx := context.Background()
	step := func(d time.Duration) {
		clk.Advance(d)
		w.RunOnce(ctx)
		n.RunOnce(ctx)
	}

	step(0)
	redis.set(errors.New("dial tcp 10.0.0.5:6379: connection refused"))
	step(5 * time.Second)
	step(50 * time.Second)
	require.Empty(t, r.received(), "unreachable for 50s: below the threshold")

	step(10 * time.Second)
	step(5 * time.Second)
	step(5 * time.Second)
	got := r.received()
	require.Len(t, got, 1, "one notice, however long it stays down")
	require.Equal(t, "dependency_unreachable", got[0].Payload.Type)
	var data struct {
		Title  string            `json:"title"`
		Fields map[string]string `json:"fields"`
	}
	require.NoError(t, json.Unmarshal(got[0].Payload.Data, &data))
	require.Equal(t, "Redis unreachable", data.Title)
	require.Equal(t, "redis", data.Fields["dependency"])
	require.Equal(t, "qhronosd-1", data.Fields["instance"])
	require.Contains(t, data.Fields["error"], "connection refused")

	redis.set(nil)
	step(5 * time.Second)
	step(5 * time.Second)
	got = r.received()
	require.Len(t, got, 2, "one recovery notice")
	require.Equal(t, "dependency_recovered", got[1].Payload.Type)

	// A blip shorter than the threshold says nothing.
	db.set(errors.New("timeout"))
	step(5 * time.Second)
	db.set(nil)
	step(5 * time.Second)
	step(2 * time.Minute)
	require.Len(t, r.received(), 2)
}
