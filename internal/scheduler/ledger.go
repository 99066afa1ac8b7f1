package scheduler

import (
	"context"
	"sync"
	"time"

	"github.com/qhronos/qhronos/internal/coordination"
	"github.com/qhronos/qhronos/internal/repository"
)

// ledgerLock is the leader lock of the ledger tally.
const ledgerLock = "ledger"

// Ledger counts, for qhronos_occurrences_ended_total, the instants decided
// ahead of their time — skipped by hand, by a calendar, a DST gap or a
// pause, or cancelled by an edit or a delete — once their instant passes,
// so that a decision later undone (unskip, resume) is never counted. Rows
// the dispatcher ends at their instant (missed, or skipped and cancelled
// at fire time) are counted by the dispatcher itself. Only the leader
// tallies; a new leader starts from its own start.
type Ledger struct {
	store  *repository.Store
	clock  Clock
	locker coordination.Locker
	owner  string
	ttl    time.Duration
	obs    Observer

	mu   sync.Mutex
	last time.Time // instants up to it are tallied
}

// NewLedger returns the tally; obs nil counts nothing.
func NewLedger(store *repository.Store, clock Clock, locker coordination.Locker, owner string, interval time.Duration, obs Observer) *Ledger {
	return &Ledger{store: store, clock: clock, locker: locker, owner: owner, ttl: 3 * interval, obs: obs,
		last: clock.Now()}
}

// RunOnce tallies the instants that passed since the last run; it returns
// how many it counted.
func (l *Ledger) RunOnce(ctx context.Context) (int, error) {
	if l.obs == nil {
		return 0, nil
	}
	if l.locker != nil {
		if ok, err := l.locker.TryLock(ctx, ledgerLock, l.owner, l.ttl); err == nil && !ok {
			l.mu.Lock()
			l.last = l.clock.Now() // another instance counts; resume from here when leading
			l.mu.Unlock()
			return 0, nil
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clock.Now()
	counts, err := l.store.EndedAhead(ctx, l.last, now)
	if err != nil {
		return 0, err
	}
	l.last = now
	total := 0
	for _, c := range counts {
		l.obs.ObserveEnded(c.Status, c.Reason, c.N)
		total += c.N
	}
	return total, nil
}
