package scheduler

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/qhronos/qhronos/internal/coordination"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/startstop"
)

// ArchiveStore is what the archiver needs from the repository; each call is
// one bounded batch in one transaction.
type ArchiveStore interface {
	ArchiveOccurrences(ctx context.Context, b repository.ArchiveBatch) (repository.ArchiveCounts, error)
	ArchiveEvents(ctx context.Context, b repository.ArchiveBatch) (repository.ArchiveCounts, error)
	PurgeArchive(ctx context.Context, cutoff time.Time, limit int) (repository.ArchiveCounts, error)
}

// ArchiveObserver receives each run's figures (metrics.Metrics implements it).
type ArchiveObserver interface {
	ObserveArchival(d time.Duration, moved, purged int, err error)
}

// ArchiverConfig is archival.* of the configuration.
type ArchiverConfig struct {
	// Enabled moves old history to the archive tables; false deletes it.
	Enabled    bool
	Retention  time.Duration // default 30 d
	PurgeAfter time.Duration // default 365 d
	BatchSize  int           // rows per transaction, default 1000
	// MaxBatches bounds the batches of each phase in one run (default
	// 1000); the rest waits for the next run.
	MaxBatches int
	// LockTTL is the lease on the "archiver" lock, renewed every batch
	// (default 1 min).
	LockTTL time.Duration
	// Interval is the period of the runs Start makes.
	Interval time.Duration
}

// ArchiverDeps are the archiver's collaborators.
type ArchiverDeps struct {
	Store ArchiveStore
	// Now is the deployment clock; default time.Now.
	Now    func() time.Time
	Logger *zap.Logger
	// Locker, when set, lets one instance at a time run (lock "archiver");
	// without it, or when it errors, every instance runs, which is safe: a
	// batch is picked with FOR UPDATE SKIP LOCKED and moved once.
	Locker   coordination.Locker
	Owner    string // this instance's id, the lock owner
	Observer ArchiveObserver
	// Rollups, when set, has its rollups pruned with the history (see
	// pruneRollups).
	Rollups RollupPruner
}

// ArchiveResult is what one run did.
type ArchiveResult struct {
	// Skipped is set when another instance holds the lock.
	Skipped bool `json:"skipped,omitempty"`
	// Deleted is set when archiving is off and old history was deleted.
	Deleted bool `json:"deleted,omitempty"`
	// Moved counts rows moved to the archive (or deleted).
	Moved repository.ArchiveCounts `json:"moved"`
	// Purged counts archive rows removed after purge_after.
	Purged repository.ArchiveCounts `json:"purged"`
	// PrunedRollups counts rollup rows deleted with the history.
	PrunedRollups int           `json:"pruned_rollups"`
	Duration      time.Duration `json:"-"`
}

// Archiver moves terminal history past retention out of the live tables and
// purges the archive after a second retention.
type Archiver struct {
	startstop.Base

	cfg  ArchiverConfig
	deps ArchiverDeps
	log  *zap.Logger

	mu      sync.Mutex
	runs    int64
	lastRun time.Time
	last    ArchiveResult
	lastErr string
}

// archiverLock names the leader lock of the archiver.
const archiverLock = "archiver"

var _ startstop.Service = (*Archiver)(nil)

// NewArchiver builds an archiver; it does nothing until RunOnce or Start.
func NewArchiver(cfg ArchiverConfig, deps ArchiverDeps) *Archiver {
	if deps.Now == nil {
		deps.Now = time.Now
	}
	if deps.Logger == nil {
		deps.Logger = zap.NewNop()
	}
	return &Archiver{cfg: cfg, deps: deps, log: deps.Logger.Named("archiver")}
}

// errLockLost stops a run whose lock another instance took over.
var errLockLost = errors.New("archiver lock lost")

// RunOnce archives (or deletes) what is past retention, then purges the
// archive, in bounded batches of one transaction each.
func (a *Archiver) RunOnce(ctx context.Context) (ArchiveResult, error) {
	start := a.deps.Now()
	res := ArchiveResult{Deleted: !a.cfg.Enabled}
	locked, err := a.lock(ctx)
	if err != nil {
		return res, err
	}
	if !locked {
		res.Skipped = true
		a.record(start, res, nil)
		return res, nil
	}
	if a.deps.Locker != nil {
		defer func() {
			// Release with a fresh context: the run's may be cancelled.
			uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if err := a.deps.Locker.Unlock(uctx, archiverLock, a.deps.Owner); err != nil {
				a.log.Warn("release archiver lock", zap.Error(err))
			}
		}()
	}
	err = a.run(ctx, start, &res)
	if err == nil {
		res.PrunedRollups, err = a.pruneRollups(ctx, start)
	}
	res.Duration = a.deps.Now().Sub(start)
	if errors.Is(err, errLockLost) {
		a.log.Info("archiver lock lost, stopping this run")
		err = nil
	}
	a.record(start, res, err)
	if a.deps.Observer != nil {
		a.deps.Observer.ObserveArchival(res.Duration, res.Moved.Total(), res.Purged.Total(), err)
	}
	if err != nil {
		return res, err
	}
	if res.Moved.Total() > 0 || res.Purged.Total() > 0 {
		a.log.Info("archived", zap.Bool("deleted", res.Deleted), zap.Int("occurrences", res.Moved.Occurrences),
			zap.Int("attempts", res.Moved.Attempts), zap.Int("events", res.Moved.Events),
			zap.Int("purged", res.Purged.Total()), zap.Duration("duration", res.Duration))
	}
	return res, nil
}

// lock takes or renews the archiver lock. Without a locker, or when the
// locker is unreachable, the run goes ahead: it is safe concurrently.
func (a *Archiver) lock(ctx context.Context) (bool, error) {
	if a.deps.Locker == nil {
		return true, nil
	}
	ok, err := a.deps.Locker.TryLock(ctx, archiverLock, a.deps.Owner, a.cfg.LockTTL)
	if err != nil {
		if ctx.Err() != nil {
			return false, fmt.Errorf("take archiver lock: %w", err)
		}
		a.log.Warn("archiver lock unavailable, running unlocked", zap.Error(err))
		return true, nil
	}
	return ok, nil
}

func (a *Archiver) run(ctx context.Context, start time.Time, res *ArchiveResult) error {
	b := repository.ArchiveBatch{Cutoff: start.Add(-a.cfg.Retention), Now: start, Limit: a.cfg.BatchSize,
		Delete: !a.cfg.Enabled}
	phases := []struct {
		name string
		step func() (repository.ArchiveCounts, error)
		into *repository.ArchiveCounts
		full func(repository.ArchiveCounts) bool
	}{
		{"archive occurrences", func() (repository.ArchiveCounts, error) { return a.deps.Store.ArchiveOccurrences(ctx, b) },
			&res.Moved, func(c repository.ArchiveCounts) bool { return c.Occurrences >= b.Limit }},
		{"archive events", func() (repository.ArchiveCounts, error) { return a.deps.Store.ArchiveEvents(ctx, b) },
			&res.Moved, func(c repository.ArchiveCounts) bool { return c.Events >= b.Limit }},
		{"purge archive", func() (repository.ArchiveCounts, error) {
			return a.deps.Store.PurgeArchive(ctx, start.Add(-a.cfg.PurgeAfter), a.cfg.BatchSize)
		}, &res.Purged, func(c repository.ArchiveCounts) bool {
			return c.Occurrences >= b.Limit || c.Attempts >= b.Limit || c.Events >= b.Limit
		}},
	}
	for _, p := range phases {
		for range a.cfg.MaxBatches {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("%s: %w", p.name, err)
			}
			n, err := p.step()
			if err != nil {
				return fmt.Errorf("%s: %w", p.name, err)
			}
			*p.into = p.into.Add(n)
			if !p.full(n) {
				break
			}
			if err := a.renew(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// renew extends the lock between batches; losing it ends the run.
func (a *Archiver) renew(ctx context.Context) error {
	if a.deps.Locker == nil {
		return nil
	}
	ok, err := a.deps.Locker.TryLock(ctx, archiverLock, a.deps.Owner, a.cfg.LockTTL)
	if err != nil {
		return nil // coordination away: carry on, the moves are safe unlocked
	}
	if !ok {
		return errLockLost
	}
	return nil
}

func (a *Archiver) record(start time.Time, res ArchiveResult, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.runs++
	a.lastRun, a.last, a.lastErr = start.UTC(), res, ""
	if err != nil {
		a.lastErr = err.Error()
	}
}

// Start calls RunOnce now and then every interval until ctx ends or Stop
// is called. Errors are logged and shown by Status; the next tick tries
// again.
func (a *Archiver) Start(ctx context.Context) error {
	ctx, shouldStart, stopped := a.StartInit(ctx)
	if !shouldStart {
		return nil
	}
	go func() {
		defer stopped()
		startstop.Every(ctx, a.cfg.Interval, true, func(ctx context.Context) {
			if _, err := a.RunOnce(ctx); err != nil && ctx.Err() == nil {
				a.log.Error("archiver run", zap.Error(err))
			}
		})
	}()
	return nil
}

// Status is a snapshot for /status: counts, timing and error text only.
func (a *Archiver) Status() map[string]any {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := map[string]any{"runs": a.runs, "mode": "archive", "retention": a.cfg.Retention.String(),
		"purge_after": a.cfg.PurgeAfter.String(), "healthy": a.lastErr == ""}
	if !a.cfg.Enabled {
		out["mode"] = "delete"
	}
	if a.runs == 0 {
		return out
	}
	out["last_run"] = a.lastRun.Format(time.RFC3339Nano)
	out["duration_ms"] = a.last.Duration.Milliseconds()
	out["skipped"] = a.last.Skipped
	out["moved"] = a.last.Moved
	out["purged"] = a.last.Purged
	if a.lastErr != "" {
		out["error"] = a.lastErr
	}
	return out
}
