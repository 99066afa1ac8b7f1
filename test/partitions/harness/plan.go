package harness

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Plan is one scenario: the load, when the fault strikes and how long it
// lasts, and the nemesis that causes it.
type Plan struct {
	Name string
	// Burst events fall due together just before the fault strikes, so the
	// fault finds them claimed and under way; Steady events fall due
	// evenly from Before ahead of the fault to After past its heal.
	Burst, Steady        int
	Before, Fault, After time.Duration
	// Nemesis breaks the cluster at once and heals it by until, returning
	// then (a flapping link breaks and heals many times meanwhile).
	Nemesis func(c *Cluster, until time.Time)
	// Takeover, when set, is how soon after a lease lapses with its send
	// unrecorded another instance must send the row (see History).
	Takeover time.Duration
	// Settle bounds the wait, after the heal, until every occurrence is
	// completed; past it what is not is stuck.
	Settle time.Duration
}

// burstLead is how long before the fault the burst falls due: it is being
// claimed and sent when the fault strikes.
const burstLead = 250 * time.Millisecond

// Run creates the load, lets the nemesis loose, waits for the cluster to
// settle, and checks the history. It prints the verdict line and fails the
// test with the violations when the verdict is FAIL.
func Run(t testing.TB, c *Cluster, p Plan) *Result {
	t.Helper()
	n := p.Burst + p.Steady
	// Creating the events takes about a second per 1,000 on a busy machine
	// and over 4 s for 700 beside a second copy of the suite: the lead is
	// generous, since the plan cannot start before the last event exists.
	start := time.Now().Add(10*time.Second + 2*time.Duration(n)*time.Millisecond)
	faultStart := start.Add(p.Before)
	end := faultStart.Add(p.Fault + p.After)
	specs := make([]EventSpec, 0, n)
	for i := range p.Burst {
		specs = append(specs, EventSpec{Key: fmt.Sprintf("b%05d", i), At: faultStart.Add(-burstLead)})
	}
	for i := range p.Steady {
		specs = append(specs, EventSpec{Key: fmt.Sprintf("s%05d", i), At: start.Add(end.Sub(start) * time.Duration(i) / time.Duration(p.Steady))})
	}
	ids := c.Create(c.Instances[0], specs)
	if late := time.Since(start); late > 0 {
		t.Fatalf("creating %d events ended %s after the first instant; the plan needs a longer lead", n, late)
	}
	time.Sleep(time.Until(faultStart)) // the scenario's own schedule, not a wait on the system
	faultStart = time.Now()
	p.Nemesis(c, faultStart.Add(p.Fault))
	healed := time.Now()
	settle := p.Settle
	if settle == 0 {
		settle = 90 * time.Second
	}
	if !c.WaitCompleted(n, maxTime(end, healed).Add(settle)) {
		t.Logf("%s: not all %d occurrences completed %s after the last instant: %v", p.Name, n, settle, c.Counts())
	}
	h := c.History(p.Name, specs, ids, faultStart, healed)
	h.Takeover = p.Takeover
	r := Check(h)
	if dir := os.Getenv("QHRONOS_PARTITIONS_HISTORY"); dir != "" {
		stamp := time.Now().Unix()
		saveHistory(t, filepath.Join(dir, fmt.Sprintf("%s-%d.json", p.Name, stamp)), h)
		// Each instance's log beside it: what a stall or a duplicate was
		// waiting on is in its warnings.
		for _, in := range c.Instances {
			name := filepath.Join(dir, fmt.Sprintf("%s-%d-%s.log", p.Name, stamp, in.Name))
			if err := os.WriteFile(name, []byte(in.Log()), 0o644); err != nil {
				t.Errorf("save %s's log: %v", in.Name, err)
			}
		}
	}
	// The verdict line goes to stdout as well: bench/partitions.sh reads it.
	fmt.Fprintln(os.Stdout, r.Line())
	t.Logf("%s (%d due: burst %d, steady %d; fault %s; %d sends logged, %d receipts)", r.Line(), n, p.Burst, p.Steady,
		p.Fault, len(h.Sends), len(h.Receipts))
	if !r.Pass() {
		t.Errorf("%s:\n  %s", r.Line(), strings.Join(r.Violations, "\n  "))
	}
	return r
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// Until holds the fault until the given time.
func Until(until time.Time) { time.Sleep(time.Until(until)) }

// Flap cuts and heals with period on and off until until, healed at the end.
func Flap(until time.Time, period time.Duration, cut, heal func()) {
	for time.Now().Before(until) {
		cut()
		time.Sleep(min(period, time.Until(until)))
		heal()
		if time.Now().Before(until) {
			time.Sleep(min(period, time.Until(until)))
		}
	}
}

// saveHistory writes the history as JSON, for a look at a run by hand
// (QHRONOS_PARTITIONS_HISTORY names the directory).
func saveHistory(t testing.TB, path string, h *History) {
	b, err := json.Marshal(h)
	if err == nil {
		err = os.WriteFile(path, b, 0o644)
	}
	if err != nil {
		t.Errorf("save history: %v", err)
	}
}
