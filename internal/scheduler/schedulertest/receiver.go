package schedulertest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Reply is what the receiver answers to one delivery.
type Reply struct {
	Status  int
	Headers map[string]string
}

// Delivery is one request the receiver got.
type Delivery struct {
	WebhookID string // the occurrence id
	Header    http.Header
	Body      []byte
}

// Receiver is a loopback webhook receiver. It counts deliveries per
// webhook-id and answers with Respond (200 by default).
type Receiver struct {
	URL string

	mu         sync.Mutex
	deliveries []Delivery
	respond    func(d Delivery, n int) Reply
	changed    chan struct{}
}

// NewReceiver starts a receiver on 127.0.0.1, closed at test cleanup.
func NewReceiver(t testing.TB) *Receiver {
	r := &Receiver{changed: make(chan struct{})}
	srv := httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

// Respond sets the answer; n is the 1-based count of deliveries so far with
// the same webhook-id.
func (r *Receiver) Respond(fn func(d Delivery, n int) Reply) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.respond = fn
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	d := Delivery{WebhookID: req.Header.Get("webhook-id"), Header: req.Header.Clone(), Body: body}
	r.mu.Lock()
	r.deliveries = append(r.deliveries, d)
	n := 0
	for _, x := range r.deliveries {
		if x.WebhookID == d.WebhookID {
			n++
		}
	}
	respond := r.respond
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
	reply := Reply{Status: http.StatusOK}
	if respond != nil {
		reply = respond(d, n)
	}
	for k, v := range reply.Headers {
		w.Header().Set(k, v)
	}
	w.WriteHeader(reply.Status)
	_, _ = w.Write([]byte("ok"))
}

// Deliveries returns every delivery so far.
func (r *Receiver) Deliveries() []Delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Delivery(nil), r.deliveries...)
}

// Count returns deliveries per webhook-id.
func (r *Receiver) Count() map[string]int {
	out := map[string]int{}
	for _, d := range r.Deliveries() {
		out[d.WebhookID]++
	}
	return out
}

// WaitFor blocks until at least n deliveries arrived or ctx ends.
func (r *Receiver) WaitFor(ctx context.Context, n int) error {
	for {
		r.mu.Lock()
		got, changed := len(r.deliveries), r.changed
		r.mu.Unlock()
		if got >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %d deliveries, have %d: %w", n, got, ctx.Err())
		case <-changed:
		}
	}
}
