package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/client"
	"github.com/qhronos/qhronos/internal/qhronostest"
	"github.com/qhronos/qhronos/receiver"
)

// localReceiver is a developer's receiver: it verifies every request with
// the receiver package and answers with status.
type localReceiver struct {
	URL    string
	status atomic.Int32
	mu     sync.Mutex
	got    map[string][]int // occurrence id -> statuses answered
}

func newLocalReceiver(t *testing.T, secret string) *localReceiver {
	lr := &localReceiver{got: map[string][]int{}}
	lr.status.Store(http.StatusOK)
	h := receiver.NewVerifier([]string{secret}).Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		d, err := receiver.ParseDelivery(b)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		status := int(lr.status.Load())
		lr.mu.Lock()
		lr.got[d.OccurrenceID] = append(lr.got[d.OccurrenceID], status)
		lr.mu.Unlock()
		w.WriteHeader(status)
	}))
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	lr.URL = srv.URL + "/hooks"
	return lr
}

func (lr *localReceiver) answers(id string) []int {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	return append([]int(nil), lr.got[id]...)
}

// runningListen is a `qhronos listen` running in-process.
type runningListen struct {
	stdout, stderr *qhronostest.Buffer
	stop           func() int
}

func startListen(t *testing.T, e env, args ...string) *runningListen {
	t.Helper()
	l := &runningListen{stdout: &qhronostest.Buffer{}, stderr: &qhronostest.Buffer{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	a := &app{stdin: strings.NewReader(""), stdout: l.stdout, stderr: l.stderr, getenv: e.get}
	go func() { done <- run(ctx, append([]string{"listen", "--max-backoff", "300ms"}, args...), a) }()
	var once sync.Once
	code := 0
	l.stop = func() int {
		once.Do(func() { cancel(); code = <-done })
		return code
	}
	t.Cleanup(func() { l.stop() })
	l.waitConnected(t, 1)
	return l
}

// waitConnected waits until listen has subscribed n times in all.
func (l *runningListen) waitConnected(t *testing.T, n int) {
	t.Helper()
	qhronostest.Wait(t, 60*time.Second, fmt.Sprintf("listen subscribed %d times (stderr: %s)", n, l.stderr.String()), func() bool {
		return strings.Count(l.stderr.String(), "listening as") >= n
	})
}

func waitOccurrence(t *testing.T, e env, id string, cond func(client.Occurrence) bool, what string) client.Occurrence {
	t.Helper()
	var occ client.Occurrence
	qhronostest.Wait(t, 60*time.Second, what, func() bool {
		ok(t, e, &occ, "occurrences", "get", id)
		return cond(occ)
	})
	return occ
}

// listen forwards a real occurrence, signed by the server, to a local
// receiver that verifies it; acks it on 2xx; leaves it to retry on a local
// failure; survives a server restart; and while it is away the next
// occurrence waits and arrives once it is back.
func TestListenForwardsAcksAndSurvivesARestart(t *testing.T) {
	t.Parallel()
	onBackends(t, func(t *testing.T, srv *qhronostest.Server) {
		e := serverEnv(t, srv)
		lr := newLocalReceiver(t, srv.DefaultSecret)
		name := "dev-" + qhronostest.RandomHex(t, 4)
		l := startListen(t, e, "--client", name, "--forward-to", lr.URL)

		var ev client.Event
		ok(t, e, &ev, "events", "create", "--name", "hello", "--start", "in 1 hour", "--action",
			fmt.Sprintf(`{"type":"websocket","params":{"client_name":%q,"require_ack":true,"ack_timeout":"1s"}}`, name))
		completed := func(o client.Occurrence) bool { return o.Status == client.OccurrenceStatusCompleted }

		var occ client.Occurrence
		ok(t, e, &occ, "events", "trigger", ev.ID)
		waitOccurrence(t, e, occ.ID, completed, "the first occurrence is acked")
		require.Equal(t, []int{http.StatusOK}, lr.answers(occ.ID), "delivered once, verified by the receiver package")
		require.Contains(t, l.stdout.String(), occ.ID+`  "hello" attempt 1  -> 200`)
		require.Contains(t, l.stdout.String(), "acked")

		// A local failure is not acked: the occurrence is retried.
		lr.status.Store(http.StatusInternalServerError)
		var failing client.Occurrence
		ok(t, e, &failing, "events", "trigger", ev.ID)
		qhronostest.Wait(t, 60*time.Second, "the receiver answers 500", func() bool { return len(lr.answers(failing.ID)) > 0 })
		lr.status.Store(http.StatusOK)
		got := waitOccurrence(t, e, failing.ID, completed, "the failed delivery is retried and acked")
		require.GreaterOrEqual(t, got.AttemptCount, 2)
		require.Equal(t, http.StatusInternalServerError, lr.answers(failing.ID)[0])
		require.Contains(t, l.stdout.String(), "not acked")

		// The server restarts: listen reconnects and the next one arrives.
		srv.Restart()
		l.waitConnected(t, 2)
		var next client.Occurrence
		ok(t, e, &next, "events", "trigger", ev.ID)
		waitOccurrence(t, e, next.ID, completed, "the occurrence after the restart is acked")
		require.Equal(t, []int{http.StatusOK}, lr.answers(next.ID))

		// listen is away: the occurrence waits, and arrives when it is back.
		require.Equal(t, 0, l.stop(), "listen ends cleanly on interrupt")
		var away client.Occurrence
		ok(t, e, &away, "events", "trigger", ev.ID)
		waitOccurrence(t, e, away.ID, func(o client.Occurrence) bool {
			return o.AttemptCount >= 1 && o.Status == client.OccurrenceStatusRetrying
		},
			"an attempt finds no client and the occurrence waits to retry")
		startListen(t, e, "--client", name, "--forward-to", lr.URL)
		waitOccurrence(t, e, away.ID, completed, "the occurrence sent while listen was away arrives")
		require.Equal(t, []int{http.StatusOK}, lr.answers(away.ID))
	})
}

// A tag-listener forwards every occurrence of its tags, signed with the
// developer's --secret.
func TestListenAsTagListenerSignsWithSecret(t *testing.T) {
	t.Parallel()
	srv := qhronostest.Start(t, qhronostest.SQLite)
	e := serverEnv(t, srv)
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	lr := newLocalReceiver(t, secret)
	tag := "tl-" + qhronostest.RandomHex(t, 4)
	l := startListen(t, e, "--tags", tag, "--forward-to", lr.URL, "--secret", secret, "-o", "json")

	var ev client.Event
	ok(t, e, &ev, "events", "create", "--name", "tagged", "--start", "in 1 hour", "--webhook",
		qhronostest.NewReceiver(t).URL, "--tag", tag)
	var occ client.Occurrence
	ok(t, e, &occ, "events", "trigger", ev.ID)
	qhronostest.Wait(t, 60*time.Second, "the tag frame is forwarded and verifies", func() bool {
		return len(lr.answers(occ.ID)) == 1
	})
	require.Equal(t, http.StatusOK, lr.answers(occ.ID)[0])
	var line delivery
	qhronostest.Wait(t, 60*time.Second, "listen prints the delivery as one JSON line", func() bool {
		first, _, _ := strings.Cut(l.stdout.String(), "\n")
		return json.Unmarshal([]byte(first), &line) == nil && line.OccurrenceID == occ.ID
	})
	require.True(t, line.Signed)
	require.Equal(t, http.StatusOK, line.StatusCode)
	require.False(t, line.Acked, "a tag-listener never acks")
}

func TestListenUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"listen", "--client", "x"},
		{"listen", "--forward-to", "localhost:3000"},
		{"listen", "--forward-to", "http://localhost:3000/h"},
		{"listen", "--forward-to", "http://localhost:3000/h", "--client", "x", "--tags", "a"},
	} {
		r := cli(t, env{}, "", args...)
		if r.code != exitUsage {
			t.Errorf("qhronos %s: exit %d (%s), want %d", strings.Join(args, " "), r.code, r.stderr, exitUsage)
		}
	}
}

// A refused subscription (a token that may not hook the client) ends listen
// with exit 1 instead of reconnecting forever.
func TestListenRefusedSubscription(t *testing.T) {
	t.Parallel()
	srv := qhronostest.Start(t, qhronostest.SQLite)
	e := env{"QHRONOS_SERVER": srv.URL, "QHRONOS_TOKEN": "wrong", "QHRONOS_CREDENTIALS": t.TempDir() + "/c.json"}
	r := cli(t, e, "", "listen", "--client", "x", "--forward-to", "http://127.0.0.1:9999/h")
	require.Equal(t, exitError, r.code, r.stderr)
	require.Contains(t, r.stderr, "unauthorized")
}

// With several instances, listen connected to an API-only instance gets the
// signed delivery fired by another one through Redis, verifies it and acks
// it there.
func TestListenAcrossInstances(t *testing.T) {
	t.Parallel()
	a := qhronostest.Start(t, qhronostest.Postgres, qhronostest.WithRedis(t)...)
	b := a.Peer(t, "QHRONOS_SCHEDULER_DISPATCH=false")
	eb := serverEnv(t, b)
	lr := newLocalReceiver(t, a.DefaultSecret)
	name := "multi-" + qhronostest.RandomHex(t, 4)
	startListen(t, eb, "--client", name, "--forward-to", lr.URL)

	var ev client.Event
	ok(t, serverEnv(t, a), &ev, "events", "create", "--name", "across", "--start", "in 1 hour", "--action",
		fmt.Sprintf(`{"type":"websocket","params":{"client_name":%q,"require_ack":true,"ack_timeout":"5s"}}`, name))
	var occ client.Occurrence
	ok(t, eb, &occ, "events", "trigger", ev.ID)
	got := waitOccurrence(t, eb, occ.ID, func(o client.Occurrence) bool { return o.Status == client.OccurrenceStatusCompleted },
		"the occurrence fired by the other instance is forwarded and acked")
	require.Equal(t, 1, got.AttemptCount, "acked on the first attempt")
	require.Equal(t, []int{http.StatusOK}, lr.answers(occ.ID))
}
