package harness

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Receivers is the webhook receivers of a run: one HTTP server in the host
// namespace that records every request it processes under the event key
// of its path (/h/KEY). Instances reach it through their own links.
type Receivers struct {
	Addr string // 127.0.0.1:port

	stall atomic.Bool
	mu    sync.Mutex
	got   []Receipt
	count atomic.Int64
}

// NewReceivers starts the server; it stops at cleanup.
func NewReceivers(t testing.TB) *Receivers {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("receivers: %v", err)
	}
	rc := &Receivers{Addr: ln.Addr().String()}
	srv := &http.Server{Handler: rc, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return rc
}

// Stall makes the receivers process each request, answer 200 with half a
// body and then hang until the sender gives up (on) or answer at once.
func (rc *Receivers) Stall(on bool) { rc.stall.Store(on) }

// Received is how many requests were processed so far.
func (rc *Receivers) Received() int { return int(rc.count.Load()) }

// Receipts returns a copy of what was processed.
func (rc *Receivers) Receipts() []Receipt {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]Receipt(nil), rc.got...)
}

// ServeHTTP records the request, then answers.
func (rc *Receivers) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return // the sender went away before the request was whole: not processed
	}
	var p struct {
		Attempt int `json:"attempt"`
	}
	_ = json.Unmarshal(body, &p)
	rc.mu.Lock()
	rc.got = append(rc.got, Receipt{Key: strings.TrimPrefix(r.URL.Path, "/h/"), WebhookID: r.Header.Get("Webhook-Id"),
		Attempt: p.Attempt, At: time.Now()})
	rc.mu.Unlock()
	rc.count.Add(1)
	if !rc.stall.Load() {
		w.WriteHeader(http.StatusOK)
		return
	}
	w.Header().Set("Content-Length", "64")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, `{"received":`)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	<-r.Context().Done()
}
