package scheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/qhronos/qhronos/internal/scheduler"
)

// slowStartDB reads its clock (in step with ours) only after a delay, as a
// database does when the query first waits for a pool connection.
type slowStartDB struct{ wait time.Duration }

func (d slowStartDB) DatabaseNow(ctx context.Context) (time.Time, error) {
	select {
	case <-time.After(d.wait):
	case <-ctx.Done():
		return time.Time{}, ctx.Err()
	}
	return time.Now(), nil
}

// A lopsided round trip must not make the corrected clock run ahead of the
// database: a held row would fire early. (A midpoint estimate would read
// +wait/2 here.)
func TestDBClockNeverRunsAheadOfTheDatabase(t *testing.T) {
	const wait = 200 * time.Millisecond
	c := scheduler.NewDBClock(slowStartDB{wait: wait}, zap.NewNop(), time.Minute)
	require.NoError(t, c.Sync(context.Background()))
	require.LessOrEqual(t, c.Offset(), time.Duration(0), "the clocks agree, so any positive offset fires early")
	// Nor does it swing the other way by the lopsided wait (subtracting the
	// whole round trip would read -wait). The bound leaves room for the
	// scheduling delay between the reply and the reading of the local clock:
	// a 5 ms bound failed by chance on a loaded machine.
	require.Greater(t, c.Offset(), -wait/2, "and the correction stays tight")
}
