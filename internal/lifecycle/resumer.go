package lifecycle

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/qhronos/qhronos/internal/coordination"
	"github.com/qhronos/qhronos/internal/startstop"
)

// resumerLock is the leader lock of the resumer.
const resumerLock = "resumer"

// Resumer resumes events whose pause ends (POST /events/{id}/pause with
// until) on whichever instance leads; a resume is fenced by the event's
// version, so two instances resuming at once resume it once.
type Resumer struct {
	startstop.Base
	service  *Service
	locker   coordination.Locker // nil: a single instance
	owner    string
	interval time.Duration
	log      *zap.Logger
}

// resumeBatch bounds the events one pass resumes.
const resumeBatch = 100

// NewResumer returns the resumer; it checks every interval.
func NewResumer(s *Service, locker coordination.Locker, owner string, interval time.Duration, log *zap.Logger) *Resumer {
	if log == nil {
		log = zap.NewNop()
	}
	return &Resumer{service: s, locker: locker, owner: owner, interval: interval, log: log.Named("resumer")}
}

// Start runs the resumer until Stop or ctx ends.
func (r *Resumer) Start(ctx context.Context) error {
	ctx, shouldStart, stopped := r.StartInit(ctx)
	if !shouldStart {
		return nil
	}
	go func() {
		defer stopped()
		startstop.Every(ctx, r.interval, true, func(ctx context.Context) {
			if _, err := r.RunOnce(ctx); err != nil && ctx.Err() == nil {
				r.log.Warn("resume ended pauses", zap.Error(err))
			}
		})
	}()
	return nil
}

// RunOnce resumes every event whose pause has ended, in batches, when this
// instance leads (or the lock is unavailable: resuming is idempotent).
func (r *Resumer) RunOnce(ctx context.Context) (int, error) {
	if r.locker != nil {
		ok, err := r.locker.TryLock(ctx, resumerLock, r.owner, 3*r.interval)
		if err == nil && !ok {
			return 0, nil
		}
	}
	total := 0
	for {
		n, err := r.service.ResumeDue(ctx, resumeBatch)
		total += n
		if err != nil || n < resumeBatch {
			return total, err
		}
	}
}
