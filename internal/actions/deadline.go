package actions

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// deadlineGrace is how long past its deadline an attempt may take to
// return: time for an action that honours its context to report its own
// failure, short enough that no worker waits on a destination.
const deadlineGrace = 200 * time.Millisecond

// deadlined makes every attempt end at its deadline whatever the
// destination or a client library does. Each action honours its context,
// but it takes one library that does not (amqp091-go waited minutes for a
// silent broker's handshake) for one tenant's destinations to hold every
// dispatch worker. So Execute runs the attempt aside and, deadlineGrace
// after the deadline, returns a retryable timeout without it. The abandoned
// call sees its context cancelled: the HTTP client then closes its
// connection, and a broker action drops and closes its pooled one
// (brokerDelivery.execute), which ends the call's blocked reads, so no
// goroutine outlives its attempt by more than the library's own timeouts.
type deadlined struct{ Delivery }

// contextBound marks a delivery whose every wait ends with its context: it
// sends to its own URL with net/http alone, whose dial, TLS handshake,
// request and response reads all watch the context. deadlined runs it
// inline: a goroutine and a channel per attempt bought nothing for it.
// Endpoint deliveries are not marked: their client comes with the
// endpoint's resolution.
type contextBound interface{ boundByContext() }

func (*webhookDelivery) boundByContext() {}
func (*apiCallDelivery) boundByContext() {}

// EndpointID keeps the endpoint of a delivery that names one visible
// through the wrapper ("" otherwise, as for an inline URL).
func (d *deadlined) EndpointID() string { return EndpointOf(d.Delivery) }

// Execute implements Delivery.
func (d *deadlined) Execute(ctx context.Context, req Request) Outcome {
	timeout := req.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if _, ok := d.Delivery.(contextBound); ok {
		ctx, cancel := withinTimeout(ctx, timeout)
		defer cancel()
		return d.Delivery.Execute(ctx, req)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	done := make(chan Outcome, 1) // an abandoned call's send never blocks
	go func() { done <- d.Delivery.Execute(ctx, req) }()
	select {
	case out := <-done:
		return out
	case <-ctx.Done():
	}
	grace := time.NewTimer(deadlineGrace)
	defer grace.Stop()
	select {
	case out := <-done:
		return out
	case <-grace.C:
	}
	err := fmt.Errorf("timed out after %s (the attempt did not end at its deadline and was abandoned): %w",
		timeout, context.DeadlineExceeded)
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("attempt abandoned: %w", ctx.Err())
	}
	return Outcome{Err: err, Retryable: true, Duration: time.Since(start)}
}

// withinTimeout is context.WithTimeout(ctx, timeout), or ctx itself when
// its deadline already comes no later: the dispatcher gives each attempt
// its deadline, and a context, timer and registration with the parent per
// layer again was 2 % of qhronosd's CPU in a burst (BENCHMARKS.md, "#36:
// eleventh step").
func withinTimeout(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if dl, ok := ctx.Deadline(); ok && !dl.After(time.Now().Add(timeout)) {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, timeout)
}

// timedOut reports whether an attempt failed for its deadline: the context
// ended with it, or it has passed (a connection deadline set from the
// context fires a moment before the context's own timer).
func timedOut(ctx context.Context, err error) bool {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	dl, ok := ctx.Deadline()
	return ok && !time.Now().Before(dl)
}
