package scheduler

import (
	"time"

	"go.uber.org/zap"

	"github.com/qhronos/qhronos/internal/model"
)

// logSend writes, at debug, the moment a delivery leaves and the ownership
// its sender held then by its own clock: the slot, the epoch it read the
// row under, and until when this process may send for the slot as of its
// last successful renewal. The partition harness (test/partitions) checks
// from these lines that no process sends after its ownership lapsed;
// instants are written to the nanosecond because the check compares them
// with each other and with other instances'.
func (d *Dispatcher) logSend(jb *job) {
	ce := d.log.Check(zap.DebugLevel, "delivery sending")
	if ce == nil {
		return
	}
	_, until, _ := d.own.Lease(model.BucketOf(jb.occ.EventID))
	ce.Write(zap.String("occurrence_id", jb.occ.ID), zap.Int("attempt", jb.occ.AttemptCount),
		zap.Int("slot", jb.custody.slot), zap.Int64("epoch", jb.custody.epoch),
		zap.String("lease_until", until.UTC().Format(time.RFC3339Nano)),
		zap.String("sent_at", d.clock.Now().UTC().Format(time.RFC3339Nano)))
}
