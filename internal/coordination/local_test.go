package coordination

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

type testClock struct{ now time.Time }

func (c *testClock) Now() time.Time { return c.now }

func TestLocalLockExpiresExactlyAtTTL(t *testing.T) {
	t.Parallel()
	clk := &testClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	l := NewLocal(clk.Now)
	ctx := context.Background()
	ok, err := l.TryLock(ctx, "leader", "a", time.Minute)
	require.NoError(t, err)
	require.True(t, ok)

	clk.now = clk.now.Add(time.Minute - time.Nanosecond)
	ok, err = l.TryLock(ctx, "leader", "b", time.Minute)
	require.NoError(t, err)
	if ok {
		t.Fatal("b took the lock 1ns before a's lease ended")
	}
	clk.now = clk.now.Add(time.Nanosecond)
	ok, err = l.TryLock(ctx, "leader", "b", time.Minute)
	require.NoError(t, err)
	if !ok {
		t.Fatal("b refused the lock when a's lease ended")
	}
	// a's unlock after its lease ended must not free b's.
	require.NoError(t, l.Unlock(ctx, "leader", "a"))
	ok, err = l.TryLock(ctx, "leader", "a", time.Minute)
	require.NoError(t, err)
	require.False(t, ok, "a's stale unlock freed b's lock")
}

func TestLocalCloseEndsSubscriptions(t *testing.T) {
	t.Parallel()
	l := NewLocal(time.Now)
	require.Equal(t, "in-process", l.Name())
	require.NoError(t, l.Ping(context.Background()))
	sub, err := l.Subscribe(context.Background(), "news")
	require.NoError(t, err)

	require.NoError(t, l.Close())
	_, ok := <-sub
	require.False(t, ok, "subscription open after Close")
	require.ErrorIs(t, l.Publish(context.Background(), "news", nil), ErrClosed)
	_, err = l.Subscribe(context.Background(), "news")
	require.ErrorIs(t, err, ErrClosed)
	require.NoError(t, l.Close(), "closing twice")
}

func TestLocalBusDropsForAFullSubscriber(t *testing.T) {
	t.Parallel()
	l := NewLocal(time.Now)
	t.Cleanup(func() { _ = l.Close() })
	sub, err := l.Subscribe(t.Context(), "flood")
	require.NoError(t, err)
	for i := range subscriberBuffer + 10 {
		require.NoError(t, l.Publish(t.Context(), "flood", fmt.Appendf(nil, "%d", i)))
	}
	if got, want := len(sub), subscriberBuffer; got != want {
		t.Fatalf("buffered messages got %d, want %d (the rest dropped)", got, want)
	}
	// The oldest are kept; the overflow was dropped.
	if got, want := string(<-sub), "0"; got != want {
		t.Errorf("first message got %q, want %q", got, want)
	}
}

func TestLocalBusGivesEachSubscriberItsOwnCopy(t *testing.T) {
	t.Parallel()
	l := NewLocal(time.Now)
	t.Cleanup(func() { _ = l.Close() })
	a, err := l.Subscribe(t.Context(), "c")
	require.NoError(t, err)
	b, err := l.Subscribe(t.Context(), "c")
	require.NoError(t, err)
	payload := []byte("abc")
	require.NoError(t, l.Publish(t.Context(), "c", payload))
	payload[0] = 'X' // the publisher reuses its buffer
	gotA := <-a
	gotA[1] = 'Y' // one subscriber scribbles on its message
	if got, want := string(<-b), "abc"; got != want {
		t.Errorf("second subscriber got %q, want %q", got, want)
	}
}

func TestMemoryLimiterForgetsFullBuckets(t *testing.T) {
	t.Parallel()
	clk := &testClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	m := newMemoryLimiter(clk.Now)
	limit := Limit{Rate: 10, Burst: 10}
	for i := range 5000 {
		_, err := m.Allow(context.Background(), fmt.Sprint("client-", i), limit)
		require.NoError(t, err)
		clk.now = clk.now.Add(10 * time.Millisecond) // each bucket refills within 100ms
	}
	if got := len(m.tats); got > sweepEvery+20 {
		t.Errorf("buckets kept for 5000 one-off clients: got %d, want at most about %d", got, sweepEvery)
	}
}
