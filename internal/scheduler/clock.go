// Package scheduler turns events into fired occurrences: the expander
// materializes occurrence rows ahead of time, the dispatcher claims due rows
// and runs their actions, and the rescuer returns expired leases to retry.
// Every due decision reads one injected Clock, so tests advance time instead
// of sleeping and production follows the database's clock.
package scheduler

import (
	"context"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/qhronos/qhronos/internal/startstop"
)

// Clock is the deployment clock every due decision uses.
type Clock interface {
	Now() time.Time
	// After delivers once the clock has advanced by d.
	After(d time.Duration) <-chan time.Time
}

// SystemClock is this host's clock.
type SystemClock struct{}

// Now returns the local time.
func (SystemClock) Now() time.Time { return time.Now() }

// After waits d of local time.
func (SystemClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// DatabaseTimer reads the database's clock.
type DatabaseTimer interface {
	DatabaseNow(ctx context.Context) (time.Time, error)
}

// DBClock is the local monotonic clock corrected by its measured offset to
// the database clock, so that an instance whose clock is minutes off still
// holds rows until their instant by the database's time (no early fire) and
// claims what the database considers due.
type DBClock struct {
	startstop.Base
	db       DatabaseTimer
	log      *zap.Logger
	interval time.Duration
	offset   atomic.Int64 // nanoseconds to add to the local clock
}

var _ startstop.Service = (*DBClock)(nil)

// NewDBClock returns a clock that follows db; call Sync once before use and
// Start to keep it measured.
func NewDBClock(db DatabaseTimer, log *zap.Logger, interval time.Duration) *DBClock {
	if interval <= 0 {
		interval = time.Minute
	}
	return &DBClock{db: db, log: log.Named("clock"), interval: interval}
}

// Now returns the local time shifted by the last measured offset.
func (c *DBClock) Now() time.Time { return time.Now().Add(c.Offset()) }

// After waits d; the offset only shifts instants, not durations.
func (c *DBClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Offset is the last measured database-minus-local difference.
func (c *DBClock) Offset() time.Duration { return time.Duration(c.offset.Load()) }

// syncSamples is how many round trips one Sync takes.
const syncSamples = 3

// Sync measures the offset. The database read its clock somewhere inside
// each round trip, so database time minus the local time after the reply is
// a lower bound of the offset; the largest of a few such bounds is kept.
// Erring low means a held row may fire a moment late, never early — a
// midpoint estimate fired early whenever the round trip was lopsided (a
// wait for a pool connection, say).
func (c *DBClock) Sync(ctx context.Context) error {
	var best time.Duration
	for i := range syncSamples {
		dbNow, err := c.db.DatabaseNow(ctx)
		if err != nil {
			return err
		}
		if bound := time.Until(dbNow); i == 0 || bound > best {
			best = bound
		}
	}
	if old := c.Offset(); absDuration(best-old) > time.Second {
		c.log.Info("database clock offset changed", zap.Duration("offset", best), zap.Duration("previous", old))
	}
	c.offset.Store(int64(best))
	return nil
}

// Start re-measures the offset every interval until ctx ends or Stop is
// called.
func (c *DBClock) Start(ctx context.Context) error {
	ctx, shouldStart, stopped := c.StartInit(ctx)
	if !shouldStart {
		return nil
	}
	go func() {
		defer stopped()
		startstop.Every(ctx, c.interval, false, func(ctx context.Context) {
			if err := c.Sync(ctx); err != nil && ctx.Err() == nil {
				c.log.Warn("measure database clock offset", zap.Error(err))
			}
		})
	}()
	return nil
}

func absDuration(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
