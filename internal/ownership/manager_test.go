package ownership_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/ownership"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/repository/repositorytest"
)

var t0 = time.Date(2031, 3, 4, 10, 0, 0, 0, time.UTC)

// clock is one instant that the test moves: the deployment clock and every
// process's local clock at once.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

const lease = 10 * time.Second

func eachBackend(t *testing.T, fn func(t *testing.T, s *repository.Store)) {
	for _, b := range repositorytest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			fn(t, b.Open(t))
		})
	}
}

func manager(s *repository.Store, c *clock, id string, busy func(int) bool) *ownership.Manager {
	return ownership.NewManager(ownership.Config{InstanceID: id, Lease: lease, Now: c.Now, Local: c.Now, Busy: busy}, s)
}

func tick(t *testing.T, ms ...*ownership.Manager) {
	t.Helper()
	for _, m := range ms {
		require.NoError(t, m.Tick(context.Background()))
	}
}

// held returns the buckets' slots a manager may send for.
func held(m *ownership.Manager) map[int]int64 { return m.Owned() }

// Every slot has exactly one sender among the managers, as far as each
// process's own view goes.
func requireOneSenderEach(t *testing.T, ms ...*ownership.Manager) {
	t.Helper()
	for slot := range model.Slots {
		senders := 0
		for _, m := range ms {
			if _, ok := m.Holds(slot * model.SlotBuckets); ok {
				senders++
			}
		}
		require.Equal(t, 1, senders, "slot %d", slot)
	}
}

func TestTwoInstancesSplitTheSlotsAndEachSendsOnlyItsOwn(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		c := &clock{t: t0}
		a, b := manager(s, c, "a", nil), manager(s, c, "b", nil)
		tick(t, a)
		require.Len(t, held(a), model.Slots, "alone, a owns every slot")
		tick(t, b)
		require.Empty(t, held(b), "b joins: a's slots are not b's until a hands them over")
		c.Add(time.Second)
		tick(t, a, b)
		require.Len(t, held(a), model.Slots/2)
		require.Len(t, held(b), model.Slots/2)
		requireOneSenderEach(t, a, b)
		for slot, epoch := range held(b) {
			require.Equal(t, int64(2), epoch, "slot %d changed hands once: its epoch is 2", slot)
		}
	})
}

// A slot goes to its new owner only once the sends under way for it are
// recorded; meanwhile neither instance sends anything new for it.
func TestHandoverWaitsForSendsUnderWay(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		c := &clock{t: t0}
		var mu sync.Mutex
		busy := map[int]bool{}
		a := manager(s, c, "a", func(slot int) bool { mu.Lock(); defer mu.Unlock(); return busy[slot] })
		b := manager(s, c, "b", nil)
		tick(t, a)
		mu.Lock()
		for slot := range model.Slots {
			busy[slot] = true
		}
		mu.Unlock()
		tick(t, b, a, b)
		require.Empty(t, held(b))
		require.Len(t, held(a), model.Slots/2, "a sends nothing new for the slots it hands over")

		mu.Lock()
		clear(busy)
		mu.Unlock()
		tick(t, a, b)
		require.Len(t, held(b), model.Slots/2)
		requireOneSenderEach(t, a, b)
	})
}

// An instance that stops renewing (killed, stopped, cut off) stops sending
// by its own clock before its leases expire; the other takes its slots once
// they have, under new epochs, and the first, back, finds them gone.
func TestSlotsOfAStalledInstanceMoveOnlyAfterItStoppedSending(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		c := &clock{t: t0}
		a, b := manager(s, c, "a", nil), manager(s, c, "b", nil)
		tick(t, a, b, a, b)
		aSlots := held(a)
		require.Len(t, aSlots, model.Slots/2)

		// a stalls. Before its leases expire, b cannot take its slots, and
		// a, by its own clock, has stopped sending a moment before.
		c.Add(lease - time.Second/2)
		tick(t, b)
		require.Len(t, held(b), model.Slots/2)
		require.Empty(t, held(a), "a stops sending before its lease can have expired anywhere")

		c.Add(time.Second)
		tick(t, b)
		require.Len(t, held(b), model.Slots, "b takes a's slots once their leases expired")
		for slot, epoch := range aSlots {
			require.Greater(t, held(b)[slot], epoch, "slot %d: taken under a new epoch", slot)
		}

		// a resumes: its renewal finds the slots taken, it joins again and
		// gets its share back through a handover.
		tick(t, a)
		require.Empty(t, held(a))
		tick(t, b, a)
		requireOneSenderEach(t, a, b)
		require.Len(t, held(a), model.Slots/2)
	})
}

// A clean stop hands every slot to the others at once, not after a lease.
func TestStopHandsTheSlotsOverAtOnce(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		c := &clock{t: t0}
		a, b := manager(s, c, "a", nil), manager(s, c, "b", nil)
		tick(t, a, b, a, b)
		require.NoError(t, a.Stop(context.Background()))
		require.Empty(t, held(a))
		tick(t, b)
		require.Len(t, held(b), model.Slots)
	})
}

// The embedded server, alone by its data directory's lock, takes the slots
// of its killed predecessor without waiting for their leases.
func TestTakeOverIgnoresTheLeasesOfAKilledPredecessor(t *testing.T) {
	eachBackend(t, func(t *testing.T, s *repository.Store) {
		c := &clock{t: t0}
		old := manager(s, c, "old", nil)
		tick(t, old)
		next := ownership.NewManager(ownership.Config{InstanceID: "next", Lease: lease, Now: c.Now, Local: c.Now,
			TakeOver: true}, s)
		tick(t, next)
		require.Len(t, held(next), model.Slots)
		tick(t, next)
		require.Len(t, held(next), model.Slots, "and keeps them: the predecessor's registration is no member")
		tick(t, old)
		require.Empty(t, held(old), "the predecessor, were it alive, would find every slot gone")
	})
}
