package coordination

import (
	"context"
	"errors"
	"time"
)

// ErrClosed is returned by a Coordinator used after Close.
var ErrClosed = errors.New("coordinator closed")

// Local is the in-process Coordinator of the embedded, single-instance
// deployment: the bus fans out to subscribers in this process, locks and
// rate-limit buckets live in memory and follow the injected clock.
type Local struct {
	*localBus
	*localLocker
	*memoryLimiter
	*memorySemaphore
}

var _ Coordinator = (*Local)(nil)

// NewLocal returns an in-process Coordinator whose lock expiry and rate
// limits follow now.
func NewLocal(now func() time.Time) *Local {
	return &Local{
		localBus:        newLocalBus(),
		localLocker:     newLocalLocker(now),
		memoryLimiter:   newMemoryLimiter(now),
		memorySemaphore: newMemorySemaphore(now),
	}
}

// Ping reports nil: there is no backend to lose.
func (l *Local) Ping(context.Context) error { return nil }

// Name is "in-process", for /status.
func (l *Local) Name() string { return "in-process" }

// Close ends every subscription (their channels close); later Publish and
// Subscribe calls return ErrClosed.
func (l *Local) Close() error {
	l.localBus.close()
	return nil
}
