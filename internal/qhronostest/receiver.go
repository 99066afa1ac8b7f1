package qhronostest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// Request is one request a Receiver got.
type Request struct {
	Header http.Header
	Body   []byte
	At     time.Time // when it arrived
}

// Receiver is a real HTTP server on loopback that records every request and
// answers with the status its handler decides (200 by default).
type Receiver struct {
	URL string

	mu     sync.Mutex
	got    []Request
	status func(Request) int
	srv    *httptest.Server
}

// NewReceiver starts a receiver, closed at cleanup.
func NewReceiver(t testing.TB) *Receiver {
	rc := &Receiver{status: func(Request) int { return http.StatusOK }}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		req := Request{Header: r.Header.Clone(), Body: b, At: time.Now()}
		rc.mu.Lock()
		rc.got = append(rc.got, req)
		status := rc.status
		rc.mu.Unlock()
		w.WriteHeader(status(req))
	}))
	rc.URL = rc.srv.URL + "/hooks"
	t.Cleanup(rc.srv.Close)
	return rc
}

// Answer sets how the receiver answers.
func (rc *Receiver) Answer(status func(Request) int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.status = status
}

// Requests returns a copy of what was received so far.
func (rc *Receiver) Requests() []Request {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]Request(nil), rc.got...)
}
