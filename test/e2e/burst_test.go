package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// RELIABILITY #18: 10,000 occurrences due in the same second across many
// receivers all fire, none twice, and the server keeps serving meanwhile.
func TestTenThousandDueInOneSecond(t *testing.T) {
	const n, receivers = 10000, 4
	d := newDeployment(t)
	d.withSharedRedis()
	// The shipped lease settings, not the deployment's short fault-test
	// ones: nothing crashes here, and a lease of 3 s renewed every second
	// can lapse on a starved 2-core machine while 10,000 rows are held.
	p := d.start("burst", "QHRONOS_SCHEDULER_LEASE", "10s", "QHRONOS_SCHEDULER_LEASE_RENEW_INTERVAL", "3s",
		"QHRONOS_SCHEDULER_RESCUER_INTERVAL", "5s")
	c := d.client()

	rcs := make([]*receiver, receivers)
	for i := range rcs {
		rcs[i] = newReceiver(t)
	}
	lead := creationLead(t, d, c, p, n)
	start := time.Now()
	due := start.Add(lead).Truncate(time.Second)
	var wg sync.WaitGroup
	for _, rc := range rcs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.createEvents([]*proc{p}, n/receivers, due, time.Second, rc.URL())
		}()
	}
	wg.Wait()
	require.True(t, time.Now().Before(due), "creating %d events took past their instant; the test needs a longer lead", n)
	t.Logf("created %d events in %s", n, time.Since(start).Round(time.Millisecond))

	// The API keeps answering while the burst is dispatched.
	stopProbe := make(chan struct{})
	probeFailures := make(chan string, 100)
	go func() {
		for {
			select {
			case <-stopProbe:
				close(probeFailures)
				return
			case <-time.After(200 * time.Millisecond):
			}
			if code, _, err := readyBody(p); err != nil || code != http.StatusOK {
				probeFailures <- fmt.Sprintf("code %d err %v", code, err)
			}
		}
	}()
	d.waitAllCompleted(n, time.Until(due)+90*time.Second)
	t.Logf("all %d completed %s after their second began", n, time.Since(due).Round(time.Millisecond))
	close(stopProbe)
	for f := range probeFailures {
		t.Errorf("/ready during the burst: %s", f)
	}

	delivered := map[string]int{}
	for _, rc := range rcs {
		for id, k := range rc.counts() {
			delivered[id] += k
		}
	}
	var dup []string
	for id, k := range delivered {
		if k > 1 {
			dup = append(dup, fmt.Sprintf("%s×%d", id, k))
		}
	}
	require.Len(t, delivered, n, "every occurrence reached a receiver")
	require.Empty(t, dup, "no occurrence delivered twice")
	require.True(t, p.running(), "the server is still up")
	require.NotContains(t, strings.ToLower(p.stderr.String()), "too many connections")
}

// creationLead is how far ahead the burst's instant must lie for n creates
// to finish before it on this machine now: three times the time n creates
// take at the rate a warm-up of 300 measures, at least 15 s, at most 3 min.
// A fixed lead fails on a loaded machine. The warm-up rows are removed
// (the schema is the test's own), so the burst is all that is left.
func creationLead(t *testing.T, d *deployment, c *client, p *proc, n int) time.Duration {
	t.Helper()
	const warmUp = 300
	sink := newReceiver(t)
	began := time.Now()
	c.createEvents([]*proc{p}, warmUp, time.Now().Add(time.Hour), time.Second, sink.URL())
	perEvent := time.Since(began) / warmUp
	_, err := d.db.Exec(`DELETE FROM occurrences; DELETE FROM events`)
	require.NoError(t, err)
	lead := min(max(3*perEvent*time.Duration(n), 15*time.Second), 3*time.Minute)
	t.Logf("warm-up: %s per create; lead %s", perEvent, lead.Round(time.Second))
	return lead
}
