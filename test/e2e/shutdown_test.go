package e2e

import (
	"net"
	"syscall"
	"testing"
	"time"
)

// SIGTERM under load: the process stops accepting connections, lets its
// in-flight attempts finish (or releases them), exits 0 within the drain
// timeout, and a second instance delivers everything else — each occurrence
// exactly once.
func TestSIGTERMUnderLoadDrainsAndHandsOver(t *testing.T) {
	t.Parallel()
	const (
		n     = 30
		drain = 5 * time.Second // QHRONOS_SCHEDULER_DRAIN_TIMEOUT of newDeployment
	)
	d := newDeployment(t)
	rc := newReceiver(t)
	rc.setBehaviour(slow(time.Second))
	c := d.client()
	a := d.start("a")
	c.createEvents([]*proc{a}, n, time.Now().Add(2*time.Second), 3*time.Second, rc.URL())
	rc.waitReceived(t, 8, 15*time.Second)

	sent := time.Now()
	a.signal(syscall.SIGTERM)
	addr := a.url[len("http://"):]
	eventually(t, drain, "a stops accepting connections", func() bool {
		conn, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			return true
		}
		_ = conn.Close()
		return false
	})
	if code := a.waitExit(drain + 5*time.Second); code != 0 {
		t.Errorf("exit code after SIGTERM: got %d, want 0", code)
	}
	if took, limit := time.Since(sent), drain+3*time.Second; took > limit {
		t.Errorf("exit took %s after SIGTERM, want within the drain timeout (%s) plus slack", took, limit)
	}
	t.Logf("a exited %s after SIGTERM with %d of %d delivered", time.Since(sent).Round(time.Millisecond),
		len(rc.counts()), n)

	rc.setBehaviour(answer(200))
	d.start("b")
	d.waitAllCompleted(n, 40*time.Second)
	assertDeliveredOnce(t, d, rc)
}
