package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/qhronostest"
)

// completedAttempts counts the attempts the API shows as successful.
func completedAttempts(list []attemptJSON) int {
	n := 0
	for _, a := range list {
		if a.Outcome == "completed" {
			n++
		}
	}
	return n
}

// A process killed while it holds a lease (the receiver has the request but
// has not answered) loses nothing: once the lease expires another instance
// delivers the occurrence with the same webhook-id and it ends completed.
func TestKillAfterClaimIsDeliveredByAnotherInstance(t *testing.T) {
	t.Parallel()
	d := newDeployment(t)
	rc := newReceiver(t)
	rel := newReleaser(t)
	rc.setBehaviour(hang(rel.ch))
	c := d.client()

	a := d.start("a")
	evID, err := c.createEvent(a, "kill-after-claim", time.Now().Add(1500*time.Millisecond), rc.URL())
	require.NoError(t, err)
	occ := c.onlyOccurrence(a, evID)
	rc.waitReceived(t, 1, 15*time.Second)
	a.kill9() // within the attempt timeout: the row is still leased, nothing recorded
	rc.setBehaviour(answer(http.StatusOK))

	b := d.start("b")
	got := c.waitStatus(b, occ.ID, "completed", 20*time.Second)
	if n := len(rc.attempts(occ.ID)); n != 2 {
		t.Errorf("receiver got webhook-id %s %d times, want 2 (the killed attempt and the rescue)", occ.ID, n)
	}
	if got, want := rc.received(), 2; got != want {
		t.Errorf("receiver got %d requests in all, want %d, all with webhook-id %s: %v", got, want, occ.ID, rc.counts())
	}
	if n := completedAttempts(c.attempts(b, occ.ID)); n != 1 {
		t.Errorf("attempts list shows %d completed attempts, want 1", n)
	}
	t.Logf("occurrence %s: attempt_count=%d, receiver attempts %v", occ.ID, got.AttemptCount, rc.attempts(occ.ID))
}

// A process killed after the receiver answered 2xx but before the outcome
// was recorded delivers again after restart: the only allowed duplicate, with
// the same webhook-id. The receiver freezes the server (SIGSTOP) before it
// answers, so the 2xx sits unread in the dead process's socket.
func TestKillAfterSuccessBeforeRecordingDuplicatesWithSameID(t *testing.T) {
	t.Parallel()
	d := newDeployment(t)
	rc := newReceiver(t)
	c := d.client()

	a := d.start("a")
	answered := make(chan struct{}, 1)
	rc.setBehaviour(func(w http.ResponseWriter, _ *http.Request, _ delivery) {
		_ = syscall.Kill(a.pid(), syscall.SIGSTOP)
		w.WriteHeader(http.StatusOK)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		select {
		case answered <- struct{}{}:
		default:
		}
	})
	evID, err := c.createEvent(a, "kill-after-2xx", time.Now().Add(1500*time.Millisecond), rc.URL())
	require.NoError(t, err)
	occ := c.onlyOccurrence(a, evID)
	select {
	case <-answered:
	case <-time.After(60 * time.Second):
		t.Fatal("the receiver never got the delivery")
	}
	a.kill9()
	rc.setBehaviour(answer(http.StatusOK))

	b := d.start("b")
	c.waitStatus(b, occ.ID, "completed", 20*time.Second)
	if got, want := len(rc.attempts(occ.ID)), 2; got != want {
		t.Errorf("receiver got webhook-id %s %d times, want %d (one duplicate after the crash)", occ.ID, got, want)
	}
	if got, want := rc.received(), 2; got != want {
		t.Errorf("receiver got %d requests, want %d, all with webhook-id %s: %v", got, want, occ.ID, rc.counts())
	}
	if n := completedAttempts(c.attempts(b, occ.ID)); n != 1 {
		t.Errorf("attempts list shows %d completed attempts, want 1 (the killed one was never recorded)", n)
	}
}

// A worker frozen past its lease while it holds a row loses it: another
// instance completes the row, and when the frozen worker resumes its late
// write is refused by the fencing check — one final state, no extra success.
func TestStoppedWorkerLateWriteIsRefused(t *testing.T) {
	t.Parallel()
	d := newDeployment(t)
	rc := newReceiver(t)
	rel := newReleaser(t)
	rc.setBehaviour(hang(rel.ch))
	c := d.client()

	a := d.start("a")
	evID, err := c.createEvent(a, "sigstop", time.Now().Add(1500*time.Millisecond), rc.URL())
	require.NoError(t, err)
	occ := c.onlyOccurrence(a, evID)
	rc.waitReceived(t, 1, 15*time.Second)
	a.signal(syscall.SIGSTOP)
	rc.setBehaviour(answer(http.StatusOK))

	b := d.start("b")
	c.waitStatus(b, occ.ID, "completed", 20*time.Second)
	before := c.attempts(b, occ.ID)
	require.Equal(t, 1, completedAttempts(before), "attempts before the stale worker resumes: %+v", before)

	rel.release() // the hung request is answered 200 into the frozen worker's socket
	a.signal(syscall.SIGCONT)
	// Its heartbeat finds the lease lost and the outcome is dropped
	// ("outcome dropped: lease lost"), or, if the attempt ends first, the
	// fenced write is refused ("outcome refused: lease lost").
	a.waitLog(": lease lost", 15*time.Second)

	after := c.attempts(a, occ.ID)
	if got, want := len(after), len(before); got != want {
		t.Errorf("attempts after the stale worker resumed: got %d %+v, want %d (its write refused)", got, after, want)
	}
	if got, want := completedAttempts(after), 1; got != want {
		t.Errorf("completed attempts: got %d, want %d", got, want)
	}
	for _, p := range []*proc{a, b} {
		o, err := c.occurrence(p, occ.ID)
		require.NoError(t, err)
		if o.Status != "completed" {
			t.Errorf("%s shows occurrence %s, want completed", p.name, o.Status)
		}
	}
	if got, want := len(rc.attempts(occ.ID)), 2; got != want {
		t.Errorf("receiver got webhook-id %s %d times, want %d", occ.ID, got, want)
	}
}

// withDefaultLeases drops the deployment's short test leases: the instances
// run with the shipped lease, renewal and rescue interval.
func (d *deployment) withDefaultLeases() {
	for _, k := range []string{"QHRONOS_SCHEDULER_LEASE", "QHRONOS_SCHEDULER_LEASE_RENEW_INTERVAL",
		"QHRONOS_SCHEDULER_RESCUER_INTERVAL"} {
		delete(d.env, k)
	}
}

// kill -9 in the middle of a burst strands what the process had claimed;
// restarted at once, with the shipped lease settings, the deployment
// delivers every stranded occurrence within 30 s of its instant (before
// short renewed leases, they waited out a 2-minute lease). Nothing is lost;
// the only duplicates are occurrences sent before the kill, each with its
// own webhook-id; every event's bookkeeping shows its run in the end.
func TestKillNineMidBurstRecoversWithin30Seconds(t *testing.T) {
	t.Parallel()
	const n = 2000
	d := newDeployment(t)
	d.withDefaultLeases()
	rc := newReceiver(t)
	rc.setBehaviour(slow(40 * time.Millisecond)) // about 800 a second through 32 workers
	c := d.client()

	// A 10 s attempt timeout: a receiver slowed by the catch-up must not
	// turn into failed attempts that muddy the duplicate count.
	d.env["QHRONOS_ACTIONS_ATTEMPT_TIMEOUT"] = "10s"
	d.env["QHRONOS_ACTIONS_MAX_ATTEMPT_TIMEOUT"] = "10s"
	a := d.start("a")
	// The lead follows this machine's pace of creates: a fixed 15 s was
	// too short for 2,000 creates beside a second copy of the suite.
	due := time.Now().Add(creationLead(t, d, c, a, n))
	c.createEvents([]*proc{a}, n, due, time.Second, rc.URL())
	require.True(t, time.Now().Before(due), "creating %d events took past their instant; the test needs a longer lead", n)

	rc.waitReceived(t, n/5, time.Until(due)+40*time.Second)
	a.kill9()
	killed := time.Now()
	a2 := d.start("a2")
	d.waitAllCompleted(n, 60*time.Second)

	// The rows the killed process owned and had not delivered were due
	// before the kill and delivered by its successor.
	var rescued []int
	require.NoError(t, d.db.Select(&rescued, `SELECT a.attempt FROM attempts a JOIN occurrences o ON o.id = a.occurrence_id
		WHERE a.outcome = 'completed' AND o.scheduled_at < $1 AND a.started_at > $1`, killed))
	require.NotEmpty(t, rescued, "the kill stranded nothing: the test did not test recovery")
	var worst float64
	require.NoError(t, d.db.Get(&worst, `SELECT EXTRACT(EPOCH FROM max(a.started_at - o.scheduled_at))
		FROM attempts a JOIN occurrences o ON o.id = a.occurrence_id WHERE a.outcome = 'completed'`))
	t.Logf("killed %s after the first instant; %d occurrences recovered by a later attempt; worst lateness %.1fs",
		killed.Sub(due).Round(time.Millisecond), len(rescued), worst)
	require.Less(t, worst, 30.0, "worst lateness of a delivery, seconds")

	// A duplicate is a send the killed process made but never recorded:
	// the receiver saw the webhook-id once more than the database recorded
	// attempts for it (an attempt that failed, e.g. timed out while the
	// restarted process caught up, is recorded and retried; that is no
	// duplicate).
	counts := rc.counts()
	require.Len(t, counts, n, "every occurrence delivered")
	var recorded []struct {
		ID string `db:"id"`
		N  int    `db:"n"`
	}
	require.NoError(t, d.db.Select(&recorded, `SELECT occurrence_id::text AS id, count(*) AS n FROM attempts
		GROUP BY occurrence_id`))
	inDB := map[string]int{}
	for _, r := range recorded {
		inDB[r.ID] = r.N
	}
	dups := 0
	for id, k := range counts {
		switch extra := k - inDB[id]; {
		case extra == 1:
			dups++
		case extra != 0:
			t.Errorf("occurrence %s: receiver saw attempts %v, database recorded %d; want at most one unrecorded send",
				id, rc.attempts(id), inDB[id])
		}
	}
	t.Logf("%d duplicates, each a send of the killed process delivered again under its webhook-id", dups)

	// A one-time event's end is read from its occurrence, never written:
	// nothing the killed process held back is missing. Through the API,
	// every event reads inactive and shows its run.
	var active, unshown int
	shown := qhronostest.Eventually(2*time.Minute, nil, func() bool {
		evs, err := c.events(a2, "status=active")
		if err != nil {
			return false
		}
		active = len(evs)
		if evs, err = c.events(a2, "status=inactive"); err != nil {
			return false
		}
		unshown = n - len(evs)
		for _, e := range evs {
			if e.LastRunAt == nil {
				unshown++
			}
		}
		return active == 0 && unshown == 0
	})
	require.True(t, shown, "%d events still read active, %d show no run or are not inactive", active, unshown)
}

// The embedded server is alone on its data directory: restarted after
// kill -9, it takes its predecessor's bucket slots at once instead of
// waiting for their leases to expire (here a 10-minute lease, so only the
// takeover at start can deliver within the test).
func TestEmbeddedRestartAfterKillRescuesAtOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := map[string]string{"QHRONOS_SERVER_ADDR": qhronostest.FreeAddr(t), "QHRONOS_SCHEDULER_LEASE": "10m",
		"QHRONOS_ACTIONS_ATTEMPT_TIMEOUT": "5m", "QHRONOS_ACTIONS_MAX_ATTEMPT_TIMEOUT": "5m"}
	rc := newReceiver(t)
	rel := newReleaser(t)
	rc.setBehaviour(hang(rel.ch))

	a := startEmbedded(t, "embedded", dir, env)
	raw, err := os.ReadFile(filepath.Join(dir, "data", "secrets.json"))
	require.NoError(t, err)
	var secrets struct {
		MasterToken string `json:"master_token"`
	}
	require.NoError(t, json.Unmarshal(raw, &secrets))
	c := &client{t: t, token: secrets.MasterToken, http: &http.Client{Timeout: 5 * time.Second}}

	evID, err := c.createEvent(a, "embedded-kill", time.Now().Add(1500*time.Millisecond), rc.URL())
	require.NoError(t, err)
	occ := c.onlyOccurrence(a, evID)
	rc.waitReceived(t, 1, 15*time.Second)
	a.kill9() // mid-attempt: the row is leased for ten minutes
	rc.setBehaviour(answer(http.StatusOK))

	b := startEmbedded(t, "restarted", dir, env)
	got := c.waitStatus(b, occ.ID, "completed", 20*time.Second)
	require.Equal(t, 1, got.AttemptCount, "the killed attempt was never recorded: the restart sends it again as attempt 1")
	if n := len(rc.attempts(occ.ID)); n != 2 {
		t.Errorf("receiver got webhook-id %s %d times, want 2 (the killed attempt and the rescue)", occ.ID, n)
	}
}
