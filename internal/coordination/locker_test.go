package coordination_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestLockIsExclusiveAndOnlyTheOwnerUnlocks(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, in instances) {
		ctx := t.Context()
		const ttl = 30 * time.Second
		steps := []struct {
			what     string
			do       func() (bool, error)
			wantHeld bool
		}{
			{"a takes the free lock", func() (bool, error) { return in.a.TryLock(ctx, "expander", "a", ttl) }, true},
			{"b is refused while a holds it", func() (bool, error) { return in.b.TryLock(ctx, "expander", "b", ttl) }, false},
			{"a renews its own lock", func() (bool, error) { return in.a.TryLock(ctx, "expander", "a", ttl) }, true},
			{"b takes a different lock", func() (bool, error) { return in.b.TryLock(ctx, "archiver", "b", ttl) }, true},
			{"b's unlock of a's lock is refused", func() (bool, error) {
				require.NoError(t, in.b.Unlock(ctx, "expander", "b"))
				return in.b.TryLock(ctx, "expander", "b", ttl)
			}, false},
			{"after a unlocks, b takes it", func() (bool, error) {
				require.NoError(t, in.a.Unlock(ctx, "expander", "a"))
				return in.b.TryLock(ctx, "expander", "b", ttl)
			}, true},
			{"a's late unlock does not free b's lock", func() (bool, error) {
				require.NoError(t, in.a.Unlock(ctx, "expander", "a"))
				return in.a.TryLock(ctx, "expander", "a", ttl)
			}, false},
		}
		for _, step := range steps {
			got, err := step.do()
			require.NoError(t, err, step.what)
			if got != step.wantHeld {
				t.Fatalf("%s: got held=%v, want %v", step.what, got, step.wantHeld)
			}
		}
	})
}

func TestLockExpiresAfterTTL(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, in instances) {
		ctx := t.Context()
		const ttl = 300 * time.Millisecond
		const step = 20 * time.Millisecond
		start := in.clock.Now()
		ok, err := in.a.TryLock(ctx, "leader", "a", ttl)
		require.NoError(t, err)
		require.True(t, ok, "a takes the free lock")

		for i := 0; ; i++ {
			require.Less(t, i, 250, "b never got the lock a stopped renewing")
			ok, err := in.b.TryLock(ctx, "leader", "b", ttl)
			require.NoError(t, err)
			if ok {
				break
			}
			in.clock.Step(step)
		}
		// Redis expires at millisecond precision on its own clock; allow that.
		if got, want := in.clock.Now().Sub(start), ttl-5*time.Millisecond; got < want {
			t.Errorf("b got the lock after %s, want no earlier than the %s TTL", got, ttl)
		}
	})
}

func TestLockRenewalKeepsItPastTTL(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, in instances) {
		ctx := t.Context()
		const ttl = time.Second
		const every = 100 * time.Millisecond
		// a renews every 100ms for 2.5 TTLs; b must be refused throughout.
		for i := range 25 {
			ok, err := in.a.TryLock(ctx, "leader", "a", ttl)
			require.NoError(t, err)
			if !ok {
				t.Fatalf("renewal %d: a lost its own lock", i)
			}
			ok, err = in.b.TryLock(ctx, "leader", "b", ttl)
			require.NoError(t, err)
			if ok {
				t.Fatalf("renewal %d: b took a lock a keeps renewing", i)
			}
			in.clock.Step(every)
		}
		// Once a stops renewing, b gets it.
		for i := 0; ; i++ {
			require.Less(t, i, 300, "b never got the lock a stopped renewing")
			ok, err := in.b.TryLock(ctx, "leader", "b", ttl)
			require.NoError(t, err)
			if ok {
				return
			}
			in.clock.Step(20 * time.Millisecond)
		}
	})
}

func TestLockRejectsMeaninglessLeases(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, in instances) {
		tests := []struct {
			name  string
			owner string
			ttl   time.Duration
		}{
			{"empty owner", "", time.Second},
			{"zero ttl", "a", 0},
			{"negative ttl", "a", -time.Second},
			{"sub-millisecond ttl", "a", time.Microsecond},
		}
		for _, tt := range tests {
			ok, err := in.a.TryLock(t.Context(), "x", tt.owner, tt.ttl)
			if err == nil || ok {
				t.Errorf("%s: got (%v, %v), want (false, error)", tt.name, ok, err)
			}
		}
	})
}
