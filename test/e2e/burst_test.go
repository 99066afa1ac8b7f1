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
	p := d.start("burst")
	c := d.client()

	rcs := make([]*receiver, receivers)
	for i := range rcs {
		rcs[i] = newReceiver(t)
	}
	start := time.Now()
	due := start.Add(25 * time.Second).Truncate(time.Second)
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
	d.waitAllCompleted(n, 90*time.Second)
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
