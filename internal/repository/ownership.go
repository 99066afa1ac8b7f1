package repository

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Ownership of the buckets (migration 0020). Instances register as members
// of the dispatch group and own the buckets in slots, each through a lease
// with an epoch: an acquisition bumps the epoch, and every outcome is written
// only under the epoch its sender held (the fence), so a process that lost a
// slot — stopped, cut off, killed — can no longer write for it, whatever it
// believes. Which member should own which slot is decided by the members
// themselves (internal/ownership); the database only arbitrates: a slot is
// taken only when it is free or its lease has expired by the deployment's
// clock.

// SlotLease is one ownership slot as the database has it.
type SlotLease struct {
	Slot      int        `db:"slot"`
	Owner     *string    `db:"owner"`
	Epoch     int64      `db:"epoch"`
	ExpiresAt *time.Time `db:"expires_at"`
}

// HeldBy reports whether owner holds the slot at now.
func (l *SlotLease) HeldBy(owner string, now time.Time) bool {
	return l.Owner != nil && *l.Owner == owner && l.ExpiresAt != nil && l.ExpiresAt.After(now)
}

// Free reports whether anyone may take the slot at now: nobody owns it or
// its lease has expired.
func (l *SlotLease) Free(now time.Time) bool {
	return l.Owner == nil || l.ExpiresAt == nil || !l.ExpiresAt.After(now)
}

// RenewMember registers instance as a live member of the dispatch group
// until until (or renews it), forgets members gone for a day (every restart
// is a new instance id), and returns the members live at now, sorted.
func (s *Store) RenewMember(ctx context.Context, instance string, now, until time.Time) ([]string, error) {
	_, err := s.exec(ctx, `INSERT INTO dispatch_members (instance_id, started_at, expires_at) VALUES (?, ?, ?)
		ON CONFLICT (instance_id) DO UPDATE SET expires_at = excluded.expires_at`,
		instance, s.ts(now), s.ts(until))
	if err != nil {
		return nil, fmt.Errorf("renew dispatch member: %w", err)
	}
	if _, err := s.exec(ctx, `DELETE FROM dispatch_members WHERE expires_at < ?`, s.ts(now.Add(-24*time.Hour))); err != nil {
		return nil, fmt.Errorf("forget departed dispatch members: %w", err)
	}
	var live []string
	if err := s.selectAll(ctx, &live, `SELECT instance_id FROM dispatch_members WHERE expires_at > ? ORDER BY instance_id`,
		s.ts(now)); err != nil {
		return nil, fmt.Errorf("read dispatch members: %w", err)
	}
	return live, nil
}

// LeaveMember removes instance from the dispatch group: a clean stop, after
// which nothing it recorded waits for its event bookkeeping. A member whose
// registration lapsed instead stays until a rescuer has repaired what it may
// have forgotten (DepartedMembers, ForgetMember).
func (s *Store) LeaveMember(ctx context.Context, instance string) error {
	if _, err := s.exec(ctx, `DELETE FROM dispatch_members WHERE instance_id = ?`, instance); err != nil {
		return fmt.Errorf("leave dispatch group: %w", err)
	}
	return nil
}

// DepartedMember is a member of the dispatch group whose registration
// lapsed without a clean stop (killed, cut off, stopped with bookkeeping
// unwritten).
type DepartedMember struct {
	InstanceID string    `db:"instance_id"`
	ExpiresAt  time.Time `db:"expires_at"`
}

// DepartedMembers returns the members whose registration expired by now,
// oldest first.
func (s *Store) DepartedMembers(ctx context.Context, now time.Time) ([]DepartedMember, error) {
	var out []DepartedMember
	if err := s.selectAll(ctx, &out, `SELECT instance_id, expires_at FROM dispatch_members
		WHERE expires_at <= ? ORDER BY expires_at, instance_id`, s.ts(now)); err != nil {
		return nil, fmt.Errorf("read departed dispatch members: %w", err)
	}
	for i := range out {
		out[i].ExpiresAt = out[i].ExpiresAt.UTC()
	}
	return out, nil
}

// ForgetMember removes a departed member once its bookkeeping was repaired,
// unless it came back meanwhile (a stopped process that resumed renews its
// registration: a later expires_at).
func (s *Store) ForgetMember(ctx context.Context, m DepartedMember) error {
	if _, err := s.exec(ctx, `DELETE FROM dispatch_members WHERE instance_id = ? AND expires_at <= ?`,
		m.InstanceID, s.ts(m.ExpiresAt)); err != nil {
		return fmt.Errorf("forget departed dispatch member: %w", err)
	}
	return nil
}

// BucketSlots reads every ownership slot, in slot order.
func (s *Store) BucketSlots(ctx context.Context) ([]SlotLease, error) {
	var out []SlotLease
	if err := s.selectAll(ctx, &out, `SELECT slot, owner, epoch, expires_at FROM bucket_slots ORDER BY slot`); err != nil {
		return nil, fmt.Errorf("read bucket slots: %w", err)
	}
	for i := range out {
		if out[i].ExpiresAt != nil {
			t := out[i].ExpiresAt.UTC()
			out[i].ExpiresAt = &t
		}
	}
	return out, nil
}

// AcquireSlots takes the given slots for owner until until, each only if it
// is free or its lease expired by now, and bumps each one's epoch. force
// takes them whatever their state: only a process that knows no other one
// can send (the embedded server under its data directory's lock, finding
// the slots of its own killed predecessor) may use it. It returns the slots
// taken with their new epochs.
func (s *Store) AcquireSlots(ctx context.Context, owner string, slots []int, now, until time.Time, force bool) ([]SlotLease, error) {
	if len(slots) == 0 {
		return nil, nil
	}
	args := []any{owner, s.ts(until)}
	for _, sl := range slots {
		args = append(args, sl)
	}
	q := `UPDATE bucket_slots SET owner = ?, epoch = epoch + 1, expires_at = ?
		WHERE slot IN (` + placeholders(len(slots)) + `)`
	if !force {
		q += ` AND (owner IS NULL OR expires_at IS NULL OR expires_at <= ?)`
		args = append(args, s.ts(now))
	}
	var got []SlotLease
	if err := s.selectAll(ctx, &got, q+` RETURNING slot, owner, epoch, expires_at`, args...); err != nil {
		return nil, fmt.Errorf("acquire bucket slots: %w", err)
	}
	sort.Slice(got, func(i, j int) bool { return got[i].Slot < got[j].Slot })
	return got, nil
}

// RenewSlots extends to until every slot owner still holds under the given
// epoch and returns those slots. A slot missing from the answer was taken by
// another instance (a new epoch): its holder must not send for it again. A
// slot whose lease lapsed but which nobody took is renewed: nobody else can
// have sent under its epoch.
func (s *Store) RenewSlots(ctx context.Context, owner string, held map[int]int64, until time.Time) ([]int, error) {
	if len(held) == 0 {
		return nil, nil
	}
	where, args := slotEpochs(held)
	var got []int
	err := s.selectAll(ctx, &got, `UPDATE bucket_slots SET expires_at = ? WHERE owner = ? AND (`+where+`) RETURNING slot`,
		append([]any{s.ts(until), owner}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("renew bucket slots: %w", err)
	}
	sort.Ints(got)
	return got, nil
}

// ReleaseSlots frees the slots owner holds under the given epochs, for
// another member to take at once (a handover, or a clean stop). It returns
// how many were freed.
func (s *Store) ReleaseSlots(ctx context.Context, owner string, held map[int]int64) (int, error) {
	if len(held) == 0 {
		return 0, nil
	}
	where, args := slotEpochs(held)
	res, err := s.exec(ctx, `UPDATE bucket_slots SET owner = NULL, expires_at = NULL WHERE owner = ? AND (`+where+`)`,
		append([]any{owner}, args...)...)
	if err != nil {
		return 0, fmt.Errorf("release bucket slots: %w", err)
	}
	return affected(res), nil
}

// slotEpochs is "(slot = ? AND epoch = ?) OR …" for a set of held slots, in
// slot order.
func slotEpochs(held map[int]int64) (string, []any) {
	slots := make([]int, 0, len(held))
	for sl := range held {
		slots = append(slots, sl)
	}
	sort.Ints(slots)
	terms := make([]string, len(slots))
	args := make([]any, 0, 2*len(slots))
	for i, sl := range slots {
		terms[i] = "(slot = ? AND epoch = ?)"
		args = append(args, sl, held[sl])
	}
	return strings.Join(terms, " OR "), args
}
