package scheduler

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/qhronos/qhronos/internal/coordination"
	"github.com/qhronos/qhronos/internal/repository"
)

// PartitionStore is what the partitioner needs from the repository.
type PartitionStore interface {
	Partitioned() bool
	EnsurePartitions(ctx context.Context, from, to time.Time) (int, error)
	SummarizePartitions(ctx context.Context, now time.Time) (repository.PartitionSummary, error)
}

// Partitioner keeps the weekly partitions of history (PostgreSQL) created
// ahead of now: one instance at a time (lock "partitions") makes sure every
// week from now's to now+ahead has its partition, splitting a coarse
// far-future partition the window reached. The insert path creates what
// lies beyond on demand, so a missed run delays nothing; the loop keeps
// that rare and keeps DDL off the hot path. Every instance remembers the
// window it saw covered, so its inserts need no extra round trip.
type Partitioner struct {
	store  PartitionStore
	clock  Clock
	locker coordination.Locker
	owner  string
	ahead  time.Duration
	ttl    time.Duration

	mu      sync.Mutex
	summary repository.PartitionSummary
	leader  bool
}

// partitionsLock names the leader lock of the partitioner.
const partitionsLock = "partitions"

// DefaultPartitionsAhead is how far ahead weekly partitions are kept.
const DefaultPartitionsAhead = 28 * 24 * time.Hour

// NewPartitioner builds the maintenance loop's step; ahead <= 0 takes
// DefaultPartitionsAhead.
func NewPartitioner(store PartitionStore, clock Clock, locker coordination.Locker, owner string,
	ahead, lockTTL time.Duration) *Partitioner {
	if ahead <= 0 {
		ahead = DefaultPartitionsAhead
	}
	return &Partitioner{store: store, clock: clock, locker: locker, owner: owner, ahead: ahead, ttl: lockTTL}
}

// RunOnce makes sure of the weeks ahead (the leader) and reads the layout
// for /status; it returns how many weeks it went over.
func (p *Partitioner) RunOnce(ctx context.Context) (int, error) {
	if !p.store.Partitioned() {
		return 0, nil
	}
	now := p.clock.Now()
	leader := true
	if p.locker != nil {
		// Coordination away: run anyway, qhronos_ensure_partitions
		// serializes its callers on an advisory lock.
		if ok, err := p.locker.TryLock(ctx, partitionsLock, p.owner, p.ttl); err == nil && !ok {
			leader = false
		}
	}
	n := 0
	if leader {
		var err error
		// The week before now's too: a row due a moment ago may still be
		// inserted (catch-up) and must not pay for a partition then.
		if n, err = p.store.EnsurePartitions(ctx, now.Add(-7*24*time.Hour), now.Add(p.ahead)); err != nil {
			return 0, err
		}
	}
	sum, err := p.store.SummarizePartitions(ctx, now)
	if err != nil {
		return n, fmt.Errorf("summarize partitions: %w", err)
	}
	p.mu.Lock()
	p.summary, p.leader = sum, leader
	p.mu.Unlock()
	return n, nil
}

// Details is the layout for the partitioner's /status entry.
func (p *Partitioner) Details() map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]any{"leader": p.leader, "live_partitions": p.summary.Live,
		"archive_partitions": p.summary.Archive, "ahead": p.ahead.String()}
	if !p.summary.Oldest.IsZero() {
		out["oldest"] = p.summary.Oldest.Format(time.RFC3339)
	}
	if !p.summary.AheadUntil.IsZero() {
		out["ahead_until"] = p.summary.AheadUntil.Format(time.RFC3339)
	}
	return out
}
