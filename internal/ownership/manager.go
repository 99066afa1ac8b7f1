package ownership

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
)

// Store is what the manager needs of the repository.
type Store interface {
	RenewMember(ctx context.Context, instance string, now, until time.Time) ([]string, error)
	LeaveMember(ctx context.Context, instance string) error
	BucketSlots(ctx context.Context) ([]repository.SlotLease, error)
	AcquireSlots(ctx context.Context, owner string, slots []int, now, until time.Time, force bool) ([]repository.SlotLease, error)
	RenewSlots(ctx context.Context, owner string, held map[int]int64, until time.Time) ([]int, error)
	ReleaseSlots(ctx context.Context, owner string, held map[int]int64) (int, error)
}

// Config configures a Manager.
type Config struct {
	// InstanceID names this process in the dispatch group and as owner.
	InstanceID string
	// Lease is how long a slot (and a membership) lasts without renewal.
	Lease time.Duration
	// RenewEvery is the period of Run's rounds (default Lease/3).
	RenewEvery time.Duration
	// TakeOver: this process knows no other one can send (the embedded
	// server under its data directory's lock), so its first round takes
	// every slot at once, leases of a killed predecessor included, and it
	// keeps them all.
	TakeOver bool
	// Now is the deployment clock (database time): lease expiries in the
	// database are on it. Default time.Now.
	Now func() time.Time
	// Local is this process's own clock, on which Holds ends a lease
	// early; tests replace it. Default time.Now (monotonic).
	Local func() time.Time
	// Busy reports whether sends of a slot are still under way: a slot
	// handed to another member is released only once they are recorded.
	// nil: never busy.
	Busy   func(slot int) bool
	Logger *zap.Logger
}

// holding is one slot this process holds.
type holding struct {
	epoch int64
	// until is when this process stops sending for the slot, by Local:
	// the start of the last successful renewal plus the lease, minus a
	// margin for the clocks of other hosts.
	until time.Time
	// releasing: the slot goes to another member; nothing new is sent for
	// it while its last sends are recorded.
	releasing bool
}

// Manager keeps this instance's share of the bucket slots. Tick is one
// round; Run repeats it; Stop releases everything for the other members.
type Manager struct {
	cfg   Config
	store Store
	log   *zap.Logger

	// ticking serializes rounds: the heartbeat's and a dispatcher's first
	// read may both ask for one.
	ticking sync.Mutex

	mu      sync.Mutex
	held    map[int]*holding
	members []string
	first   bool
	lastErr error
	lastOK  time.Time
}

// NewManager returns a manager that holds nothing until its first Tick.
func NewManager(cfg Config, store Store) *Manager {
	if cfg.RenewEvery <= 0 {
		cfg.RenewEvery = cfg.Lease / 3
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Local == nil {
		cfg.Local = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	return &Manager{cfg: cfg, store: store, log: cfg.Logger.Named("ownership"), held: map[int]*holding{}, first: true}
}

// margin is how much earlier than its lease this process stops sending: the
// error of the deployment clocks of two hosts (each measured against the
// database) and the time a renewal takes to reach the database.
func (m *Manager) margin() time.Duration { return max(m.cfg.Lease/10, 100*time.Millisecond) }

// Holds reports whether this process may send for bucket now, and the epoch
// its outcome must be written under.
func (m *Manager) Holds(bucket int) (epoch int64, ok bool) {
	epoch, _, ok = m.Lease(bucket)
	return epoch, ok
}

// Lease is Holds with the instant, by this process's clock, until which it
// may send for the bucket (the partition harness checks sends against it).
func (m *Manager) Lease(bucket int) (epoch int64, until time.Time, ok bool) {
	now := m.cfg.Local()
	m.mu.Lock()
	defer m.mu.Unlock()
	h, held := m.held[model.SlotOf(bucket)]
	if !held || h.releasing || !now.Before(h.until) {
		return 0, time.Time{}, false
	}
	return h.epoch, h.until, true
}

// Owned returns the slots this process may send for now, with their epochs.
func (m *Manager) Owned() map[int]int64 {
	now := m.cfg.Local()
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[int]int64, len(m.held))
	for slot, h := range m.held {
		if !h.releasing && now.Before(h.until) {
			out[slot] = h.epoch
		}
	}
	return out
}

// Tick is one round: renew this member and the slots it holds, release the
// slots the balance gives to another member once their sends are recorded,
// and take the free slots the balance gives to this one.
func (m *Manager) Tick(ctx context.Context) error {
	m.ticking.Lock()
	defer m.ticking.Unlock()
	err := m.tick(ctx)
	m.mu.Lock()
	m.lastErr = err
	if err == nil {
		m.lastOK = m.cfg.Local()
	}
	m.mu.Unlock()
	return err
}

func (m *Manager) tick(ctx context.Context) error {
	id := m.cfg.InstanceID
	start, now := m.cfg.Local(), m.cfg.Now()
	until, holdUntil := now.Add(m.cfg.Lease), start.Add(m.cfg.Lease-m.margin())
	live, err := m.store.RenewMember(ctx, id, now, until)
	if err != nil {
		return err
	}
	if m.cfg.TakeOver {
		live = []string{id} // alone by construction: a dead predecessor's registration is no member
	}
	if err := m.renew(ctx, until, holdUntil); err != nil {
		return err
	}
	slots, err := m.store.BucketSlots(ctx)
	if err != nil {
		return err
	}
	want := Assign(live, len(slots))
	m.mu.Lock()
	m.members = live
	m.mu.Unlock()
	if err := m.handOver(ctx, want); err != nil {
		return err
	}
	var take []int
	m.mu.Lock()
	force := m.first && m.cfg.TakeOver
	for _, sl := range slots {
		if _, held := m.held[sl.Slot]; !held && (force || want[sl.Slot] == id && sl.Free(now)) {
			take = append(take, sl.Slot)
		}
	}
	m.mu.Unlock()
	got, err := m.store.AcquireSlots(ctx, id, take, now, until, force)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, l := range got {
		m.held[l.Slot] = &holding{epoch: l.Epoch, until: holdUntil}
	}
	m.first = false
	if len(got) > 0 {
		m.log.Info("bucket slots taken", zap.Ints("slots", slotsOf(got)), zap.Int("held", len(m.held)))
	}
	return nil
}

// renew extends the slots held; a slot missing from the answer was taken
// under a new epoch by another member and is dropped at once.
func (m *Manager) renew(ctx context.Context, until, holdUntil time.Time) error {
	epochs := m.epochs(func(*holding) bool { return true })
	if len(epochs) == 0 {
		return nil
	}
	renewed, err := m.store.RenewSlots(ctx, m.cfg.InstanceID, epochs, until)
	if err != nil {
		return err
	}
	ok := make(map[int]bool, len(renewed))
	for _, sl := range renewed {
		ok[sl] = true
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var lost []int
	for sl := range epochs {
		h, still := m.held[sl]
		if !still {
			continue
		}
		if ok[sl] {
			h.until = holdUntil
			continue
		}
		delete(m.held, sl)
		lost = append(lost, sl)
	}
	if len(lost) > 0 {
		sort.Ints(lost)
		m.log.Warn("bucket slots lost to another instance: nothing more is sent for them", zap.Ints("slots", lost))
	}
	return nil
}

// handOver marks the slots the balance gives to another member and releases
// those whose sends are all recorded.
func (m *Manager) handOver(ctx context.Context, want []string) error {
	m.mu.Lock()
	for sl, h := range m.held {
		if sl < len(want) && want[sl] != m.cfg.InstanceID {
			h.releasing = true
		}
	}
	m.mu.Unlock()
	free := m.epochs(func(h *holding) bool { return h.releasing })
	for sl := range free {
		if m.cfg.Busy != nil && m.cfg.Busy(sl) {
			delete(free, sl)
		}
	}
	return m.release(ctx, free)
}

func (m *Manager) release(ctx context.Context, slots map[int]int64) error {
	if len(slots) == 0 {
		return nil
	}
	if _, err := m.store.ReleaseSlots(ctx, m.cfg.InstanceID, slots); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for sl, epoch := range slots {
		if h, ok := m.held[sl]; ok && h.epoch == epoch {
			delete(m.held, sl)
		}
	}
	return nil
}

// epochs returns the held slots that pass keep, with their epochs.
func (m *Manager) epochs(keep func(*holding) bool) map[int]int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[int]int64{}
	for sl, h := range m.held {
		if keep(h) {
			out[sl] = h.epoch
		}
	}
	return out
}

// Run ticks every RenewEvery until ctx ends. It does not release: the
// caller stops its sends first, then calls Stop.
func (m *Manager) Run(ctx context.Context) {
	t := time.NewTicker(m.cfg.RenewEvery)
	defer t.Stop()
	for {
		// A round that outlives the lease is worthless; bound it.
		tctx, cancel := context.WithTimeout(ctx, m.cfg.Lease)
		if err := m.Tick(tctx); err != nil && ctx.Err() == nil {
			m.log.Warn("bucket ownership round", zap.Error(err))
		}
		cancel()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Stop hands every slot back for the other members to take at once and
// leaves the dispatch group. Call it once this process sends nothing more
// and everything it recorded has its event bookkeeping written.
func (m *Manager) Stop(ctx context.Context) error {
	if err := m.Release(ctx); err != nil {
		return err
	}
	return m.store.LeaveMember(ctx, m.cfg.InstanceID)
}

// Release hands every slot back for the other members to take at once but
// leaves the registration to lapse, as a crash would: the rescuers then
// repair the event bookkeeping this process could not write. Call it once
// this process sends nothing more.
func (m *Manager) Release(ctx context.Context) error {
	m.mu.Lock()
	for _, h := range m.held {
		h.releasing = true
	}
	m.mu.Unlock()
	if err := m.release(ctx, m.epochs(func(*holding) bool { return true })); err != nil {
		return fmt.Errorf("release bucket slots: %w", err)
	}
	return nil
}

// Status is the manager's state for /status.
func (m *Manager) Status() map[string]any {
	now := m.cfg.Local()
	m.mu.Lock()
	defer m.mu.Unlock()
	slots, releasing := make([]int, 0, len(m.held)), 0
	for sl, h := range m.held {
		if now.Before(h.until) {
			slots = append(slots, sl)
		}
		if h.releasing {
			releasing++
		}
	}
	sort.Ints(slots)
	out := map[string]any{"slots_held": len(slots), "slots": slots, "slots_releasing": releasing,
		"members": append([]string(nil), m.members...)}
	if m.lastErr != nil {
		out["last_error"] = m.lastErr.Error()
	}
	if !m.lastOK.IsZero() {
		out["last_renewal_ago"] = now.Sub(m.lastOK).Round(time.Millisecond).String()
	}
	return out
}

func slotsOf(ls []repository.SlotLease) []int {
	out := make([]int, len(ls))
	for i := range ls {
		out[i] = ls[i].Slot
	}
	return out
}
