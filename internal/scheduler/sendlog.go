package scheduler

import (
	"time"

	"go.uber.org/zap"
)

// logSend writes, at debug, the moment a delivery leaves and the ownership
// its sender held then by its own clock: the claim (lease token) and the
// lease's expiry as of its last successful claim or renewal. The partition
// harness (test/partitions) checks from these lines that no process sends
// after its lease lapsed; instants are written to the nanosecond because
// the check compares them with each other and with other instances'.
func (d *Dispatcher) logSend(jb *job) {
	ce := d.log.Check(zap.DebugLevel, "delivery sending")
	if ce == nil {
		return
	}
	until := d.leases.expiry(jb.token)
	ce.Write(zap.String("occurrence_id", jb.occ.ID), zap.Int("attempt", jb.occ.AttemptCount),
		zap.String("claim", jb.token), zap.String("lease_until", until.UTC().Format(time.RFC3339Nano)),
		zap.String("sent_at", d.clock.Now().UTC().Format(time.RFC3339Nano)))
}

// expiry is the lease of a claim as far as this process knows (zero when
// the claim is no longer held).
func (h *heldLeases) expiry(token string) time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c, ok := h.tokens[token]; ok {
		return c.until
	}
	return time.Time{}
}
