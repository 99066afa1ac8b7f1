package coordination

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"go.uber.org/zap"
)

// WakeupChannel is the Bus channel wake-ups travel on.
const WakeupChannel = "wakeup"

// Resubscribe back-off of Wakeups while the Bus refuses to subscribe.
const (
	wakeupRetryMin = 100 * time.Millisecond
	wakeupRetryMax = 5 * time.Second
)

// wakeupPublishTimeout bounds one publish; Notify never waits for it.
const wakeupPublishTimeout = 2 * time.Second

// Wakeups tells dispatchers on every instance that an occurrence is due at
// a given instant, so one created on instance A fires on time even when B
// would otherwise sleep until its next poll. Best effort: a lost wake-up
// only delays the occurrence to the next poll.
type Wakeups struct {
	bus    Bus
	logger *zap.Logger

	mu       sync.Mutex
	pending  *time.Time // earliest instant announced but not yet published
	inFlight bool       // a publisher goroutine is running
}

// NewWakeups returns wake-ups carried by bus.
func NewWakeups(bus Bus, logger *zap.Logger) *Wakeups {
	if logger == nil {
		logger = zap.NewNop()
	}
	return &Wakeups{bus: bus, logger: logger.Named("wakeups")}
}

// Notify announces an occurrence due at at (microsecond precision). It never
// waits on the bus, so an unreachable Redis slows no request: at most one
// publish is in flight, and instants announced meanwhile coalesce to the
// earliest — all a dispatcher needs, since once awake it reads what is due
// from the database. It returns nil; the error result is kept for callers
// that may announce synchronously.
func (w *Wakeups) Notify(_ context.Context, at time.Time) error {
	w.mu.Lock()
	if w.pending == nil || at.Before(*w.pending) {
		w.pending = &at
	}
	start := !w.inFlight
	w.inFlight = true
	w.mu.Unlock()
	if start {
		go w.publish()
	}
	return nil
}

// publish sends pending instants until none is left. A failed publish is
// dropped: the dispatchers' polling covers it (Redis trouble shows in
// /ready and /status).
func (w *Wakeups) publish() {
	for {
		w.mu.Lock()
		if w.pending == nil {
			w.inFlight = false
			w.mu.Unlock()
			return
		}
		at := *w.pending
		w.pending = nil
		w.mu.Unlock()
		// A failure is not logged: it changes nothing a poll does not
		// repair, and this goroutine may outlive whoever owns the logger.
		ctx, cancel := context.WithTimeout(context.Background(), wakeupPublishTimeout)
		_ = w.bus.Publish(ctx, WakeupChannel, strconv.AppendInt(nil, at.UnixMicro(), 10))
		cancel()
	}
}

// Subscribe delivers announced instants until ctx ends, then closes the
// channel. Instants not yet received are coalesced to the earliest, which
// is all a dispatcher needs to decide when to wake, so a busy dispatcher
// never blocks the bus. While the Bus refuses to subscribe (Redis away) it
// retries with back-off; the dispatcher polls meanwhile. The channel also
// closes when the Bus is closed.
func (w *Wakeups) Subscribe(ctx context.Context) <-chan time.Time {
	out := make(chan time.Time)
	go func() {
		defer close(out)
		var pending *time.Time
		backoff := wakeupRetryMin
		for ctx.Err() == nil {
			msgs, err := w.bus.Subscribe(ctx, WakeupChannel)
			if errors.Is(err, ErrClosed) {
				return
			}
			if err != nil {
				w.logger.Warn("subscribe to wakeups", zap.Error(err), zap.Duration("retry_in", backoff))
				if !waitFor(ctx, backoff) {
					return
				}
				backoff = min(2*backoff, wakeupRetryMax)
				continue
			}
			backoff = wakeupRetryMin
			pending = w.forward(ctx, msgs, out, pending)
		}
	}()
	return out
}

// forward relays msgs to out, keeping the earliest undelivered instant,
// until msgs closes or ctx ends. It returns what is still undelivered.
func (w *Wakeups) forward(ctx context.Context, msgs <-chan []byte, out chan<- time.Time, pending *time.Time) *time.Time {
	for {
		var send chan<- time.Time // nil blocks: nothing to send
		var next time.Time
		if pending != nil {
			send, next = out, *pending
		}
		select {
		case <-ctx.Done():
			return pending
		case send <- next:
			pending = nil
		case msg, ok := <-msgs:
			if !ok {
				return pending
			}
			micros, err := strconv.ParseInt(string(msg), 10, 64)
			if err != nil {
				w.logger.Warn("ignore malformed wakeup", zap.Int("bytes", len(msg)))
				continue
			}
			at := time.UnixMicro(micros).UTC()
			if pending == nil || at.Before(*pending) {
				pending = &at
			}
		}
	}
}

// waitFor waits d or until ctx ends; it reports whether ctx is still live.
func waitFor(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
