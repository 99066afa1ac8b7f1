package lifecycle

import (
	"context"
	"errors"
	"hash/fnv"
	"sync"
	"time"

	"github.com/qhronos/qhronos/internal/auth"
	"github.com/qhronos/qhronos/internal/events"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
)

// keyStripes serializes upserts of one key inside this process before they
// open a transaction: the store's key lock (LockEventKey) orders them across
// instances, but waiting for it holds a connection — and on SQLite a writer
// waiting on BEGIN IMMEDIATE — so a burst on one key would starve the pool
// the lock holder needs. Keys share a stripe by hash; unrelated keys of one
// stripe wait for each other only briefly.
type keyStripes [64]sync.Mutex

var keyLocks keyStripes

func (k *keyStripes) lock(scope, key string) (unlock func()) {
	h := fnv.New32a()
	_, _ = h.Write([]byte(scope))
	_, _ = h.Write([]byte{'\n'})
	_, _ = h.Write([]byte(key))
	m := &k[h.Sum32()%uint32(len(k))]
	m.Lock()
	return m.Unlock
}

// Upsert creates the event named key in the principal's key scope
// (auth.Principal.KeyScope), or replaces the stored one's schedule and
// content with in, validated as a create would be; created tells which.
// Every upsert of one key runs inside a transaction that holds the key's
// lock, so concurrent upserts end with one event, each applied whole in
// turn. A replace keeps the event's id, history and signing secret (unless
// in names one) and re-plans its future occurrences when the schedule
// changed; its status becomes in's (active unless paused), so a fired
// one-time event is armed again. With debounce the event fires once, at
// d.FireAt: each upsert of a burst moves its one pending occurrence.
func (s *Service) Upsert(ctx context.Context, p auth.Principal, via, key string, in *events.Input, d events.Debounce) (
	ev model.Event, created bool, err error) {
	if err := events.CheckKey(key); err != nil {
		return model.Event{}, false, err
	}
	if err := in.KeepsKey(key); err != nil {
		return model.Event{}, false, err
	}
	scope := p.KeyScope()
	unlock := keyLocks.lock(scope, key)
	defer unlock()
	now := s.now()
	err = s.store.WithTx(ctx, func(tx *repository.Store) error {
		if err := tx.LockEventKey(ctx, scope, key); err != nil {
			return err
		}
		stored, err := tx.GetEventByKey(ctx, scope, key)
		switch {
		case errors.Is(err, model.ErrNotFound):
			created = true
			ev, err = s.upsertCreate(ctx, tx, p, via, scope, key, in, d, now)
			return err
		case err != nil:
			return err
		}
		ev, err = s.upsertReplace(ctx, tx, p, via, stored, in, d, now)
		return err
	})
	if errors.Is(err, model.ErrStaleVersion) {
		// An edit by id slipped in between the read and the write.
		return model.Event{}, false, errConcurrent
	}
	if err != nil {
		return model.Event{}, false, err
	}
	s.wake(ctx, ev.NextRunAt)
	return ev, created, nil
}

// debounced sets in's start_time to when a debounced upsert fires and ev's
// debounce members; stored is the event being replaced (nil on create).
func debounced(in *events.Input, ev *model.Event, stored *model.Event, d events.Debounce, now time.Time) {
	ev.Debounce, ev.MaxWait, ev.DebounceSince = d.Window, d.MaxWait, nil
	if d.Window == 0 {
		return
	}
	var since, pending *time.Time
	if stored != nil && stored.Debounce > 0 && stored.Status == model.EventActive {
		since, pending = stored.DebounceSince, stored.NextRunAt
	}
	fire, burst := d.FireAt(since, pending, now)
	text := fire.UTC().Format(time.RFC3339Nano)
	in.StartTime = &text
	burst = burst.UTC()
	ev.DebounceSince = &burst
}

func (s *Service) upsertCreate(ctx context.Context, tx *repository.Store, p auth.Principal, via, scope, key string,
	in *events.Input, d events.Debounce, now time.Time) (model.Event, error) {
	var probe model.Event
	debounced(in, &probe, nil, d, now)
	nc, err := s.prepare(ctx, p, via, in, nil, now)
	if err != nil {
		return model.Event{}, err
	}
	nc.ev.Key, nc.ev.KeyScope = key, scope
	nc.ev.Debounce, nc.ev.MaxWait, nc.ev.DebounceSince = probe.Debounce, probe.MaxWait, probe.DebounceSince
	if err := s.createHeld(ctx, tx, p, nc, now); err != nil {
		return model.Event{}, err
	}
	return nc.ev, nil
}

func (s *Service) upsertReplace(ctx context.Context, tx *repository.Store, p auth.Principal, via string, stored model.Event,
	in *events.Input, d events.Debounce, now time.Time) (model.Event, error) {
	if !p.CanRead(stored.Tags) {
		// Another principal of the same scope tagged it out of sight.
		return model.Event{}, errOutsideScope
	}
	if _, err := changeable[model.Event](p, stored, stored.Tags, nil); err != nil {
		return model.Event{}, err
	}
	var probe model.Event
	debounced(in, &probe, &stored, d, now)
	nc, err := s.prepare(ctx, p, via, in, &stored, now)
	if err != nil {
		return model.Event{}, err
	}
	ev := nc.ev
	ev.Debounce, ev.MaxWait, ev.DebounceSince = probe.Debounce, probe.MaxWait, probe.DebounceSince
	// What the event is stays; what it does and when is the body's.
	ev.ID, ev.Key, ev.KeyScope = stored.ID, stored.Key, stored.KeyScope
	ev.CreatedAt, ev.CreatedBy, ev.CreatedVia, ev.Version = stored.CreatedAt, stored.CreatedBy, stored.CreatedVia, stored.Version
	ev.ExpandedUntil, ev.NextRunAt, ev.LastRunAt, ev.LastStatus = stored.ExpandedUntil, stored.NextRunAt, stored.LastRunAt, stored.LastStatus
	if in.HMACSecret == nil {
		ev.HMACSecret, ev.PreviousSecret, ev.PreviousSecretExpires = stored.HMACSecret, stored.PreviousSecret, stored.PreviousSecretExpires
	}
	target := ev.Status // active, or paused when the body says so
	ev.Status = stored.Status
	if target == model.EventPaused && stored.Status == model.EventPaused {
		ev.PausedAt, ev.PausedUntil, ev.PauseReason, ev.PausedBy, ev.PauseCatchUp =
			stored.PausedAt, stored.PausedUntil, stored.PauseReason, stored.PausedBy, stored.PauseCatchUp
	}
	if target != model.EventPaused {
		// transition clears the pause; until then it is the stored one's.
		ev.PausedAt, ev.PausedUntil, ev.PauseCatchUp = stored.PausedAt, stored.PausedUntil, stored.PauseCatchUp
	}
	rescheduled := !model.SameSchedule(&stored, &ev)
	if err := s.writeUpdate(ctx, tx, p, &stored, &ev, target, rescheduled, nc.rule, now); err != nil {
		return model.Event{}, err
	}
	return ev, nil
}

// DeleteByKey soft-deletes the event named key in the principal's key
// scope, as Delete does; the key is free again afterwards.
func (s *Service) DeleteByKey(ctx context.Context, p auth.Principal, key string) error {
	if err := events.CheckKey(key); err != nil {
		return err
	}
	scope := p.KeyScope()
	unlock := keyLocks.lock(scope, key)
	defer unlock()
	now := s.now()
	return s.store.WithTx(ctx, func(tx *repository.Store) error {
		if err := tx.LockEventKey(ctx, scope, key); err != nil {
			return err
		}
		ev, err := tx.GetEventByKey(ctx, scope, key)
		if err != nil {
			return err
		}
		if !p.CanRead(ev.Tags) {
			return errNotFound
		}
		if _, err := changeable[model.Event](p, ev, ev.Tags, nil); err != nil {
			return err
		}
		return s.deleteIn(ctx, tx, p, &ev, 0, now)
	})
}
