package coordination_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestBusDeliversToEverySubscriberOnEveryInstance(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, in instances) {
		ctx := t.Context()
		a1, err := in.a.Subscribe(ctx, "news")
		require.NoError(t, err)
		a2, err := in.a.Subscribe(ctx, "news")
		require.NoError(t, err)
		b1, err := in.b.Subscribe(ctx, "news")
		require.NoError(t, err)
		other, err := in.b.Subscribe(ctx, "other")
		require.NoError(t, err)

		require.NoError(t, in.b.Publish(ctx, "news", []byte("from b")))
		require.NoError(t, in.a.Publish(ctx, "other", []byte("marker")))

		for name, ch := range map[string]<-chan []byte{"a1": a1, "a2": a2, "b1": b1} {
			if got, want := string(receive(t, ch, name)), "from b"; got != want {
				t.Errorf("%s got %q, want %q", name, got, want)
			}
		}
		// "other" must see its own message first, not the one on "news".
		if got, want := string(receive(t, other, "other")), "marker"; got != want {
			t.Errorf("subscriber of another channel got %q, want %q", got, want)
		}
	})
}

func TestBusKeepsOrderForOneSubscriber(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, in instances) {
		ctx := t.Context()
		sub, err := in.b.Subscribe(ctx, "seq")
		require.NoError(t, err)
		for i := range 10 {
			require.NoError(t, in.a.Publish(ctx, "seq", fmt.Appendf(nil, "%d", i)))
		}
		for i := range 10 {
			if got, want := string(receive(t, sub, "seq")), fmt.Sprint(i); got != want {
				t.Fatalf("message %d: got %q, want %q", i, got, want)
			}
		}
	})
}

// Many payloads in one Publish (one round trip on Redis) arrive in order,
// after what was published before them, on every instance.
func TestBusPublishesManyAtOnceInOrder(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, in instances) {
		ctx := t.Context()
		sub, err := in.b.Subscribe(ctx, "many")
		require.NoError(t, err)
		require.NoError(t, in.a.Publish(ctx, "many", []byte("first")))
		var batch [][]byte
		for i := range 20 {
			batch = append(batch, fmt.Appendf(nil, "%d", i))
		}
		require.NoError(t, in.a.Publish(ctx, "many", batch...))
		require.Equal(t, "first", string(receive(t, sub, "many")))
		for i := range 20 {
			if got, want := string(receive(t, sub, "many")), fmt.Sprint(i); got != want {
				t.Fatalf("message %d: got %q, want %q", i, got, want)
			}
		}
	})
}

func TestBusSubscriptionEndsWithContext(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, in instances) {
		ctx, cancel := context.WithCancel(t.Context())
		sub, err := in.a.Subscribe(ctx, "bye")
		require.NoError(t, err)
		cancel()

		deadline := time.NewTimer(5 * time.Second)
		defer deadline.Stop()
		for {
			select {
			case _, ok := <-sub:
				if !ok {
					return
				}
			case <-deadline.C:
				t.Fatal("subscription still open 5s after its context ended")
			}
		}
	})
}

func TestBusSlowSubscriberDoesNotStallPublishers(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, in instances) {
		ctx := t.Context()
		_, err := in.a.Subscribe(ctx, "flood") // never read
		require.NoError(t, err)
		reader, err := in.b.Subscribe(ctx, "flood")
		require.NoError(t, err)

		const n = 500
		done := make(chan error, 1)
		go func() {
			for i := range n {
				if err := in.a.Publish(ctx, "flood", fmt.Appendf(nil, "%d", i)); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
		// The publisher must finish although one subscriber never reads.
		deadline := time.NewTimer(20 * time.Second)
		defer deadline.Stop()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-deadline.C:
			t.Fatalf("publishing %d messages did not finish within 20s: a slow subscriber stalls publishers", n)
		}
		// The subscriber that reads still gets new messages (it may have
		// dropped some of the flood if it fell behind; that is the contract).
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case msg := <-reader:
				if string(msg) == "end" {
					return
				}
			case <-tick.C:
				require.NoError(t, in.a.Publish(ctx, "flood", []byte("end")))
			case <-deadline.C:
				t.Fatal("reading subscriber got no new message within 20s")
			}
		}
	})
}
