// Package partitions breaks the network between qhronosd instances and what
// they share, the way it breaks in production: each instance is a host of
// its own (a Linux network namespace), and its links to PostgreSQL, Redis
// and the receivers go through Toxiproxy or a veth that can be taken down.
// Every scenario runs three instances under a burst (due together, just
// before the fault strikes) and a steady load (due evenly from before the
// fault to after its heal), and one checker judges the history of receipts,
// attempt rows and each instance's log of sends (see harness.Check): nothing
// lost or stuck, duplicates only of sends under way at the fault and under
// their webhook-id, no send after its sender's lease lapsed by its own
// clock, ownership never split.
//
// The tests are the short form CI runs: a burst of 500 and 200 steady
// events instead of 5,000 and 1,500, and faults of 8 s instead of 30-60 s
// (the flapping link flaps 2 s on, 2 s off for 12 s instead of a minute).
// Every fault still outlasts the 3 s lease, so each scenario still loses
// leases and hands work over. bench/partitions.sh runs the long form
// (QHRONOS_PARTITIONS=long). The tests need root for the namespaces: they
// skip elsewhere, and fail when CI is set.
package partitions

import (
	"os"
	"testing"
	"time"

	"github.com/qhronos/qhronos/internal/qhronostest"
	"github.com/qhronos/qhronos/test/partitions/harness"
)

func TestMain(m *testing.M) { qhronostest.Main(m) }

// long reports whether the long form runs (bench/partitions.sh).
func long() bool { return os.Getenv("QHRONOS_PARTITIONS") == "long" }

// plan sizes a scenario for the form that runs; fault is the long form's
// fault duration.
func plan(name string, fault time.Duration, nemesis func(c *harness.Cluster, until time.Time)) harness.Plan {
	if long() {
		return harness.Plan{Name: name, Burst: 5000, Steady: 1500, Before: 5 * time.Second, Fault: fault,
			After: 10 * time.Second, Nemesis: nemesis}
	}
	return harness.Plan{Name: name, Burst: 500, Steady: 200, Before: 2 * time.Second, Fault: 8 * time.Second,
		After: 3 * time.Second, Nemesis: nemesis}
}

// victim is the instance a one-instance fault strikes; the load is created
// through the first.
const victim = 2

func run(t *testing.T, p harness.Plan, extra ...string) {
	t.Helper()
	c := harness.NewCluster(t, 3, extra...)
	harness.Run(t, c, p)
}

// 1. One instance cut from PostgreSQL (it still reaches Redis and the
// receivers): what it claimed and sent it cannot record; once its leases
// lapse the others deliver those rows again under the same webhook-id, and
// it sends nothing after the lapse.
func TestPostgresCutFromOneInstance(t *testing.T) {
	t.Parallel()
	run(t, plan("pg-cut-one", 30*time.Second, func(c *harness.Cluster, until time.Time) {
		l := c.Instances[victim].PG
		l.Cut()
		harness.Until(until)
		l.Heal()
	}))
}
