package coordination

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// ErrInvalidLimit is returned by Allow for a Limit that no bucket can honour.
var ErrInvalidLimit = errors.New("invalid rate limit")

// validateLimit rejects limits GCRA cannot express: the rate must be a
// positive finite number and the burst at least one request.
func validateLimit(limit Limit) error {
	if !(limit.Rate > 0) || math.IsInf(limit.Rate, 0) {
		return fmt.Errorf("rate %v: must be a positive number: %w", limit.Rate, ErrInvalidLimit)
	}
	if limit.Burst < 1 {
		return fmt.Errorf("burst %d: must be at least 1: %w", limit.Burst, ErrInvalidLimit)
	}
	return nil
}

// gcraStep is one GCRA decision, the same arithmetic the Redis script runs
// (gcraScript), so both backends answer identically. Instants are float64
// microseconds since the Unix epoch, as Lua numbers are doubles.
//
// tat is the stored theoretical arrival time (0 when the bucket is absent),
// now the current instant. It returns the tat to store (only meaningful when
// the request is allowed) and the verdict.
func gcraStep(tat, now float64, limit Limit) (float64, LimitResult) {
	interval := 1e6 / limit.Rate // microseconds between two requests at the sustained rate
	burstOffset := interval * float64(limit.Burst)
	if tat < now {
		tat = now
	}
	newTAT := tat + interval
	allowAt := newTAT - burstOffset
	diff := now - allowAt
	remaining := math.Floor(diff / interval)
	if remaining < 0 {
		return tat, LimitResult{
			Allowed:    false,
			Limit:      limit.Burst,
			Remaining:  0,
			RetryAfter: microsToDuration(-diff),
			ResetAfter: microsToDuration(tat - now),
		}
	}
	return newTAT, LimitResult{
		Allowed:    true,
		Limit:      limit.Burst,
		Remaining:  int(remaining),
		ResetAfter: microsToDuration(newTAT - now),
	}
}

// microsToDuration converts float microseconds to a Duration, rounded up to
// a whole microsecond (as the Redis script does) so a client told to retry
// after it never retries early, and saturating instead of overflowing for
// absurdly slow rates.
func microsToDuration(us float64) time.Duration {
	if us <= 0 {
		return 0
	}
	ns := math.Ceil(us) * 1e3
	if ns >= math.MaxInt64 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(ns)
}

// unixMicros is t as float64 microseconds since the epoch, gcraStep's unit.
func unixMicros(t time.Time) float64 {
	return float64(t.UnixMicro())
}
