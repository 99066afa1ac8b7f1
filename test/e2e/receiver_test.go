package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// delivery is one webhook request as the receiver saw it.
type delivery struct {
	ID      string // webhook-id header: the occurrence id, stable across attempts
	Attempt int    // "attempt" of the JSON body
	EventID string
}

// behaviour decides how the receiver answers one delivery.
type behaviour func(w http.ResponseWriter, r *http.Request, d delivery)

// receiver is a loopback webhook endpoint that counts deliveries per
// webhook-id and answers as the test tells it.
type receiver struct {
	srv *httptest.Server

	mu     sync.Mutex
	got    map[string][]int // webhook-id → attempt numbers, in arrival order
	total  int
	behave behaviour
}

func newReceiver(t testing.TB) *receiver {
	t.Helper()
	rc := &receiver{got: map[string][]int{}, behave: answer(http.StatusOK)}
	rc.srv = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.srv.Close)
	return rc
}

// URL is where events send their webhooks.
func (rc *receiver) URL() string { return rc.srv.URL + "/hook" }

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var p struct {
		Attempt int    `json:"attempt"`
		EventID string `json:"event_id"`
	}
	_ = json.Unmarshal(body, &p)
	d := delivery{ID: r.Header.Get("webhook-id"), Attempt: p.Attempt, EventID: p.EventID}
	rc.mu.Lock()
	rc.got[d.ID] = append(rc.got[d.ID], d.Attempt)
	rc.total++
	behave := rc.behave
	rc.mu.Unlock()
	behave(w, r, d)
}

// setBehaviour changes how later deliveries are answered.
func (rc *receiver) setBehaviour(b behaviour) {
	rc.mu.Lock()
	rc.behave = b
	rc.mu.Unlock()
}

// attempts returns the attempt numbers seen for a webhook-id.
func (rc *receiver) attempts(id string) []int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]int(nil), rc.got[id]...)
}

// counts returns deliveries per webhook-id.
func (rc *receiver) counts() map[string]int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := make(map[string]int, len(rc.got))
	for id, a := range rc.got {
		out[id] = len(a)
	}
	return out
}

// received returns how many requests arrived in all.
func (rc *receiver) received() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.total
}

// waitReceived waits until at least n requests arrived.
func (rc *receiver) waitReceived(t testing.TB, n int, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, "the receiver got deliveries", func() bool { return rc.received() >= n })
}

// answer replies status at once.
func answer(status int) behaviour {
	return func(w http.ResponseWriter, _ *http.Request, _ delivery) { w.WriteHeader(status) }
}

// hang holds the request until release is closed or the sender gives up,
// then answers 200.
func hang(release <-chan struct{}) behaviour {
	return func(w http.ResponseWriter, r *http.Request, _ delivery) {
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		w.WriteHeader(http.StatusOK)
	}
}

// slow answers 200 after d (or when the sender gives up).
func slow(d time.Duration) behaviour {
	return func(w http.ResponseWriter, r *http.Request, _ delivery) {
		select {
		case <-time.After(d):
		case <-r.Context().Done():
			return
		}
		w.WriteHeader(http.StatusOK)
	}
}

// releaser is a release channel closed at most once.
type releaser struct {
	ch   chan struct{}
	once sync.Once
}

func newReleaser(t testing.TB) *releaser {
	r := &releaser{ch: make(chan struct{})}
	t.Cleanup(r.release) // never leave a handler hanging past the test
	return r
}

func (r *releaser) release() { r.once.Do(func() { close(r.ch) }) }
