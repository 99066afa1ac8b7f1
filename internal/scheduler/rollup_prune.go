package scheduler

import (
	"context"
	"fmt"
	"time"
)

// RollupPruner deletes rollups (the counters /stats reads) older than a
// cutoff, at most limit rows of each table per call.
type RollupPruner interface {
	PruneRollups(ctx context.Context, cutoff time.Time, limit int) (int, error)
}

// pruneRollups deletes the rollups of history that no longer exists: past
// purge_after when archiving (the archive is purged then), past retention
// when archival is off (history is deleted then). It runs in the archiver's
// run, under its lock, in bounded batches; the count joins Purged.
func (a *Archiver) pruneRollups(ctx context.Context, start time.Time) (int, error) {
	if a.deps.Rollups == nil {
		return 0, nil
	}
	keep := a.cfg.PurgeAfter
	if !a.cfg.Enabled {
		keep = a.cfg.Retention
	}
	total := 0
	for range max(a.cfg.MaxBatches, 1) {
		n, err := a.deps.Rollups.PruneRollups(ctx, start.Add(-keep), max(a.cfg.BatchSize, 1))
		if err != nil {
			return total, fmt.Errorf("prune rollups: %w", err)
		}
		total += n
		if n == 0 {
			return total, nil
		}
		if err := a.renew(ctx); err != nil {
			return total, err
		}
	}
	return total, nil
}
