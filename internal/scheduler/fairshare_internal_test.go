package scheduler

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
)

var shareT0 = time.Date(2031, 3, 4, 10, 0, 0, 0, time.UTC)

func TestShareCap(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		workers int
		share   float64
		want    int
	}{
		{64, 0.5, 32}, {64, 0.25, 16}, {8, 0.25, 2}, {3, 0.25, 1}, {1, 0.5, 1},
		{64, 1, 64}, {64, 0, 64}, // no share configured: the whole pool
	} {
		if got := shareCap(tc.workers, tc.share); got != tc.want {
			t.Errorf("shareCap(%d, %v) = %d, want %d", tc.workers, tc.share, got, tc.want)
		}
	}
}

func TestScopeOf(t *testing.T) {
	t.Parallel()
	require.Equal(t, "tags:a,b", ScopeOf(&model.Event{KeyScope: "tags:a,b", CreatedBy: "alice"}))
	require.Equal(t, "*", ScopeOf(&model.Event{KeyScope: "*"}), "the master token's events are one scope")
	require.Equal(t, "created_by:alice", ScopeOf(&model.Event{CreatedBy: "alice"}), "older events: their creator")
}

// The scenario in numbers: one tenant spread over five hosts takes
// at most its share of a 64-worker pool, each host at most a quarter, and
// another tenant still gets a worker at once.
func TestSharesBoundOneTenantOverManyHosts(t *testing.T) {
	t.Parallel()
	s := newShares(32, 16)
	deadline := shareT0.Add(10 * time.Second)
	admitted := map[string]int{}
	total := 0
	for i := range 85 {
		host := []string{"127.0.0.2:1", "127.0.0.3:1", "127.0.0.4:1", "127.0.0.5:1", "127.0.0.6:1"}[i%5]
		if _, ok := s.take("tags:hog", host, shareT0, deadline); ok {
			admitted[host]++
			total++
		}
	}
	require.Equal(t, 32, total, "the tenant holds half the pool, no more")
	for host, n := range admitted {
		require.LessOrEqual(t, n, 16, "host %s", host)
	}
	_, ok := s.take("tags:other", "127.0.0.1:8080", shareT0, deadline)
	require.True(t, ok, "another tenant is admitted while the first holds its share")

	// One host cannot take more than its quarter, whoever asks.
	s = newShares(32, 16)
	for i := range 16 {
		_, ok := s.take([]string{"tags:a", "tags:b"}[i%2], "dead:1", shareT0, deadline)
		require.True(t, ok)
	}
	_, ok = s.take("tags:c", "dead:1", shareT0, deadline)
	require.False(t, ok, "the host holds its share: a third tenant waits for it")
	_, ok = s.take("tags:c", "", shareT0, deadline)
	require.True(t, ok, "an attempt without a destination only counts against its scope")
}

func TestSharesFreeAndForget(t *testing.T) {
	t.Parallel()
	s := newShares(2, 1)
	id, ok := s.take("a", "h:1", shareT0, shareT0.Add(time.Second))
	require.True(t, ok)
	_, ok = s.take("a", "h:1", shareT0, shareT0.Add(time.Second))
	require.False(t, ok, "the destination is full")
	s.give(id, shareT0)
	s.give(id, shareT0) // a second give changes nothing
	_, ok = s.take("a", "h:1", shareT0, shareT0.Add(time.Second))
	require.True(t, ok, "a freed slot is taken again")
	st := s.snapshot(shareT0)
	require.Equal(t, 1, st.Busy)
	require.Len(t, s.runs, 1)
	for id := range s.runs {
		s.give(id, shareT0)
	}
	require.Empty(t, s.scopes, "idle scopes are forgotten")
	require.Empty(t, s.dests, "idle destinations are forgotten")
}

func TestSharesStalled(t *testing.T) {
	t.Parallel()
	s := newShares(4, 2)
	deadline := shareT0.Add(10 * time.Second)
	a, _ := s.take("tags:hog", "dead:1", shareT0, deadline)
	_, _ = s.take("tags:hog", "dead:1", shareT0.Add(100*time.Millisecond), deadline.Add(100*time.Millisecond))
	stalled, _ := s.stalled("tags:hog", "dead:1", shareT0.Add(500*time.Millisecond), time.Second)
	require.False(t, stalled, "a share that just filled is not stalled yet")
	stalled, at := s.stalled("tags:hog", "dead:1", shareT0.Add(time.Second), time.Second)
	require.True(t, stalled, "full and no slot freed for a second")
	require.Equal(t, deadline, at, "try again when the first running attempt reaches its deadline")
	stalled, _ = s.stalled("tags:other", "alive:1", shareT0.Add(time.Second), time.Second)
	require.False(t, stalled, "other scopes and destinations are not held back")

	// A freed slot is progress: the share is busy, not stalled.
	s.give(a, shareT0.Add(2*time.Second))
	_, _ = s.take("tags:hog", "dead:1", shareT0.Add(2*time.Second), deadline.Add(2*time.Second))
	stalled, _ = s.stalled("tags:hog", "dead:1", shareT0.Add(2500*time.Millisecond), time.Second)
	require.False(t, stalled)

	// Attempts running past their deadline: try again no sooner than the
	// stall from now.
	now := deadline.Add(time.Minute)
	stalled, at = s.stalled("tags:hog", "dead:1", now, time.Second)
	require.True(t, stalled)
	require.Equal(t, now.Add(time.Second), at)
}

func TestSharesSnapshotNamesStuckDestinations(t *testing.T) {
	t.Parallel()
	s := newShares(3, 2)
	deadline := shareT0.Add(10 * time.Second)
	_, _ = s.take("tags:hog", "dead:1", shareT0, deadline)
	_, _ = s.take("tags:hog", "dead:1", shareT0, deadline)
	_, _ = s.take("tags:hog", "slow:1", shareT0, deadline)
	_, _ = s.take("tags:other", "", shareT0.Add(4*time.Second), deadline)

	st := s.snapshot(shareT0.Add(4 * time.Second))
	require.Equal(t, 4, st.Busy)
	require.Equal(t, 3, st.LargestScope)
	require.Equal(t, 4*time.Second, st.OldestAttempt)
	require.Equal(t, []DestinationLoad{
		{Destination: "dead:1", Workers: 2, OldestAttempt: 4 * time.Second},
		{Destination: "slow:1", Workers: 1, OldestAttempt: 4 * time.Second},
	}, st.Destinations, "busiest first; not stuck before stuckAfter")

	st = s.snapshot(shareT0.Add(stuckAfter))
	require.True(t, st.Destinations[0].Stuck, "no attempt ended for %s", stuckAfter)
	require.True(t, st.Destinations[1].Stuck, "below its share, but nothing ended either")
	require.Equal(t, 2, st.Stuck())
	require.Equal(t, 1, st.ScopesAtShare, "the hog holds its three")

	// An attempt that ends is progress: its destination is not stuck.
	for id, r := range s.runs {
		if r.dest == "slow:1" {
			s.give(id, shareT0.Add(stuckAfter))
		}
	}
	_, _ = s.take("tags:hog", "slow:1", shareT0.Add(stuckAfter), deadline)
	st = s.snapshot(shareT0.Add(stuckAfter + time.Second))
	require.Equal(t, 1, st.Stuck())
	require.Equal(t, "dead:1", st.Destinations[0].Destination)

	st = s.snapshot(deadline.Add(time.Millisecond))
	require.Equal(t, 2, st.Stuck(), "attempts past their deadline make a destination stuck")
	require.Equal(t, 1, st.Destinations[1].Overdue)
	require.Equal(t, 2, st.Destinations[0].Overdue)
}

// acquire waits for a freed slot without spinning, and gives up on a
// stalled share with the instant to try again.
func TestFairShareAcquire(t *testing.T) {
	t.Parallel()
	clock := &manualClock{now: shareT0, after: make(chan time.Time)}
	stopping := make(chan struct{})
	f := newFairShareOf(clock, 2, newShares(1, 1), stopping)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	release, _, err := f.acquire(ctx, "a", "h:1", crowded)
	require.NoError(t, err)

	got := make(chan error, 1)
	go func() {
		r, _, err := f.acquire(ctx, "a", "h:1", crowded)
		if err == nil {
			r()
		}
		got <- err
	}()
	release() // frees the slot the waiter takes
	require.NoError(t, <-got)

	release, _, err = f.acquire(ctx, "a", "h:1", crowded)
	require.NoError(t, err)
	defer release()
	clock.set(shareT0.Add(shareStall))
	short, cancelShort := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancelShort()
	_, _, err = f.acquire(short, "a", "h:1", func() bool { return false })
	require.ErrorIs(t, err, context.DeadlineExceeded, "with room to claim, a row waits for its stalled share")
	_, at, err := f.acquire(ctx, "a", "h:1", crowded)
	require.ErrorIs(t, err, errShareStalled)
	// Due again when the attempt holding the share reaches its deadline
	// (ctx's minute, read onto the deployment clock).
	require.WithinDuration(t, shareT0.Add(time.Minute), at, 5*time.Second)
	st := f.status()
	require.Equal(t, 2, st.Workers)
	require.Equal(t, 1, st.Busy)

	close(stopping)
	_, _, err = f.acquire(ctx, "a", "h:1", func() bool { return false })
	require.ErrorIs(t, err, errStopping, "a stopping dispatcher hands waiting rows back")
}

func crowded() bool { return true }

// manualClock's After never fires: waiters wake on freed slots only.
type manualClock struct {
	now   time.Time
	after chan time.Time
}

func (c *manualClock) Now() time.Time                       { return c.now }
func (c *manualClock) After(time.Duration) <-chan time.Time { return c.after }
func (c *manualClock) set(at time.Time)                     { c.now = at }

// A freed slot goes to the first waiter that fits, in arrival order, through
// the queue of the scope or the destination it freed; waiters it cannot
// admit stay queued without being woken.
func TestFairShareAdmitsWaitersInOrder(t *testing.T) {
	t.Parallel()
	clock := &manualClock{now: shareT0, after: make(chan time.Time)}
	f := newFairShareOf(clock, 4, newShares(2, 1), make(chan struct{}))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	first, _, err := f.acquire(ctx, "a", "h:1", crowded)
	require.NoError(t, err)
	second, _, err := f.acquire(ctx, "a", "h:2", crowded)
	require.NoError(t, err)

	admitted := make(chan string, 3)
	wait := func(name, scope, dest string) {
		f.mu.Lock()
		queued := 0
		if l := f.waitScope[scope]; l != nil {
			queued = l.Len()
		}
		f.mu.Unlock()
		go func() {
			r, _, err := f.acquire(ctx, scope, dest, func() bool { return false })
			if err != nil {
				admitted <- name + ": " + err.Error()
				return
			}
			admitted <- name
			_ = r // held until the test ends
		}()
		require.Eventually(t, func() bool { // queued before the next one
			f.mu.Lock()
			defer f.mu.Unlock()
			return f.waitScope[scope] != nil && f.waitScope[scope].Len() > queued
		}, 30*time.Second, time.Millisecond)
	}
	wait("x", "a", "h:1") // scope a is full
	wait("y", "a", "h:3")
	wait("z", "b", "h:1") // h:1 is full
	none := func() {
		select {
		case got := <-admitted:
			t.Fatalf("%s was admitted with no room", got)
		default:
		}
	}
	none()

	second() // frees a slot of scope a: x comes first but h:1 is full, so y
	require.Equal(t, "y", <-admitted)
	none()
	first() // frees h:1 and a slot of a: x, the first of a's queue; z's scope b has room, but h:1 is x's now
	require.Equal(t, "x", <-admitted)
	none()
	f.mu.Lock()
	require.Nil(t, f.waitScope["a"], "an emptied queue is dropped")
	require.Equal(t, 1, f.waitDest["h:1"].Len())
	f.mu.Unlock()
}

// A scope at its share borrows idle workers while its attempts end quickly
// and no other scope waits, up to all but a quarter of the pool; a scope
// whose attempts never ended, or ended long ago, or run long, does not.
func TestSharesLendIdleWorkersToAFastLoneTenant(t *testing.T) {
	t.Parallel()
	s := newShares(2, 8)
	s.lendBelow = 8 - lendReserve(8) // 6
	deadline := shareT0.Add(10 * time.Second)
	first, ok := s.take("a", "h:1", shareT0, deadline)
	require.True(t, ok)
	_, ok = s.take("a", "h:1", shareT0, deadline)
	require.True(t, ok)
	_, ok = s.take("a", "h:1", shareT0, deadline)
	require.False(t, ok, "no attempt of it has ended yet: nothing is lent (a receiver that hangs from the start)")

	at := shareT0.Add(10 * time.Millisecond)
	s.give(first, at)
	var lent []uint64
	for range 5 {
		id, ok := s.take("a", "h:1", at, deadline)
		require.True(t, ok, "its attempts end quickly: it borrows idle workers")
		lent = append(lent, id)
	}
	require.Len(t, s.runs, 6)
	_, ok = s.take("a", "h:1", at, deadline)
	require.False(t, ok, "a quarter of the pool stays free for others")
	other, ok := s.take("b", "h:2", at, deadline)
	require.True(t, ok, "another tenant takes one of them at once")
	st := s.snapshot(at)
	require.Equal(t, 6, st.LargestScope)
	require.Equal(t, 1, st.ScopesAtShare)

	// Room in the pool again: lent while its attempts are young and one
	// ended lately, not once one has run lendAge or none ended for that.
	s.give(other, at)
	for _, id := range lent[:3] {
		s.give(id, at)
	}
	require.Len(t, s.runs, 3)
	_, ok = s.take("a", "h:1", at.Add(lendAge/2), deadline)
	require.True(t, ok, "room in the pool, fast turnover")
	_, ok = s.take("a", "h:1", shareT0.Add(lendAge), deadline)
	require.False(t, ok, "an attempt of it has run lendAge: its receivers are slow")

	s.othersWait = func(scope string) bool { return scope != "b" }
	_, ok = s.take("a", "h:1", at, deadline)
	require.False(t, ok, "another tenant waits for its share: nothing is lent")
}

// A waiter of another scope stops the lending; a scope's own waiters are
// admitted by borrowing as its attempts end.
func TestFairShareLendsOnlyWhileNoOtherScopeWaits(t *testing.T) {
	t.Parallel()
	clock := &manualClock{now: shareT0, after: make(chan time.Time)}
	s := newShares(2, 8)
	s.lendBelow = 4
	f := newFairShareOf(clock, 5, s, make(chan struct{}))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	first, ok := f.tryAcquire("a", "h:1", time.Minute)
	require.True(t, ok)
	_, ok = f.tryAcquire("a", "h:1", time.Minute)
	require.True(t, ok)
	_, ok = f.tryAcquire("a", "h:1", time.Minute)
	require.False(t, ok, "at its share, none of its attempts ended")

	admitted := make(chan func(), 1)
	go func() {
		r, _, err := f.acquire(ctx, "a", "h:1", func() bool { return false })
		if err == nil {
			admitted <- r
		}
	}()
	require.Eventually(t, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.waitScope["a"] != nil
	}, 30*time.Second, time.Millisecond)
	first() // ends quickly: its own waiter takes the freed worker
	second := <-admitted
	defer second()
	_, ok = f.tryAcquire("a", "h:1", time.Minute)
	require.True(t, ok, "it borrows an idle worker")

	f.mu.Lock()
	f.enqueue("b", "h:2", shareT0.Add(time.Minute)) // b waits for its share
	f.mu.Unlock()
	_, ok = f.tryAcquire("a", "h:1", time.Minute)
	require.False(t, ok, "another tenant waits: nothing more is lent")
}

// mayLend reads a scope's oldest running attempt from its ordered starts
// instead of scanning every run: checked against that scan over random
// takes and gives, with start instants a little out of order as
// concurrent attempts read the clock before the lock.
func TestSharesMayLendMatchesAScanOfTheRuns(t *testing.T) {
	t.Parallel()
	scanned := func(s *shares, scope string, now time.Time) bool {
		if len(s.runs) >= s.lendBelow || (s.othersWait != nil && s.othersWait(scope)) {
			return false
		}
		if h := s.scopes[scope]; h == nil || h.ended.IsZero() || now.Sub(h.ended) >= lendAge {
			return false
		}
		for _, r := range s.runs {
			if r.scope == scope && now.Sub(r.started) >= lendAge {
				return false
			}
		}
		return true
	}
	rng := rand.New(rand.NewPCG(1, 2))
	s := newShares(4, 64)
	s.lendBelow = 48
	now := shareT0
	var ids []uint64
	for step := range 20000 {
		now = now.Add(time.Duration(rng.IntN(40)) * time.Millisecond)
		scope := []string{"a", "b", "c"}[rng.IntN(3)]
		// a start read up to 5 ms before the lock, as a concurrent take may
		at := now.Add(-time.Duration(rng.IntN(5)) * time.Millisecond)
		require.Equal(t, scanned(s, scope, at), s.mayLend(scope, at), "step %d", step)
		if len(ids) > 0 && rng.IntN(2) == 0 {
			k := rng.IntN(len(ids))
			s.give(ids[k], now)
			ids = append(ids[:k], ids[k+1:]...)
			continue
		}
		if id, ok := s.take(scope, "h:1", at, at.Add(10*time.Second)); ok {
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		s.give(id, now)
	}
	require.Empty(t, s.scopes, "every slot given back")
}

// A lone tenant's burst: a 64- and a 512-worker pool at the tenant's
// share, each freed slot taken again at once (allocs and ns an attempt).
func BenchmarkSharesLoneTenantAtItsShare(b *testing.B) {
	for _, workers := range []int{64, 512} {
		b.Run(fmt.Sprint(workers), func(b *testing.B) {
			s := newShares(workers/2, workers)
			s.lendBelow = workers - lendReserve(workers)
			now := shareT0
			first, _ := s.take("a", "h:1", now, now.Add(time.Minute))
			s.give(first, now)
			var ids []uint64
			lending := false
			for { // to its share, then an ended attempt lets it borrow up to lendBelow
				id, ok := s.take("a", "h:1", now, now.Add(time.Minute))
				if !ok {
					break
				}
				ids = append(ids, id)
				if len(ids) == workers/2 && !lending {
					s.give(ids[0], now)
					ids, lending = ids[1:], true
				}
			}
			if len(ids) != s.lendBelow {
				b.Fatalf("%d attempts run, want %d", len(ids), s.lendBelow)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				now = now.Add(time.Microsecond)
				k := i % len(ids)
				s.give(ids[k], now)
				id, ok := s.take("a", "h:1", now, now.Add(time.Minute))
				if !ok {
					b.Fatal("the freed slot was not taken again")
				}
				ids[k] = id
			}
		})
	}
}

// A lone tenant's burst through the shell: 64 attempters on a 64-worker
// pool, of which the tenant may use 48 (lendReserve), each taking a slot as
// execute does (tryAcquire, else the wait) and giving it back after a
// short sleep standing in for the send. The
// 16 beyond the tenant's reach wait for freed slots, as in a burst.
func BenchmarkFairShareLoneTenantWaits(b *testing.B) {
	const workers = 64
	f := newFairShare(Config{Workers: workers, ScopeShare: 0.5, DestinationShare: 0.25}, SystemClock{},
		make(chan struct{}))
	// One ended attempt lets the tenant borrow beyond its share (mayLend).
	release, _, err := f.acquire(context.Background(), "a", "h:0", func() bool { return false })
	require.NoError(b, err)
	release()
	var dest, waited atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(workers / runtime.GOMAXPROCS(0))
	b.RunParallel(func(pb *testing.PB) {
		d := fmt.Sprintf("h:%d", dest.Add(1)%8)
		for pb.Next() {
			release, ok := f.tryAcquire("a", d, 30*time.Second)
			if !ok {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				var err error
				release, _, err = f.acquire(ctx, "a", d, func() bool { return false })
				cancel()
				if err != nil {
					b.Error(err)
					return
				}
				waited.Add(1)
			}
			time.Sleep(20 * time.Microsecond) // the send
			release()
		}
	})
	b.ReportMetric(float64(waited.Load())/float64(b.N), "waits/op")
}
