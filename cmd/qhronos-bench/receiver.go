package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// maxDeliveryBody bounds what a receiver reads of one delivery.
const maxDeliveryBody = 1 << 20

// bodyBuffers recycles the buffers deliveries are read into, so that a body
// is not read into a freshly grown one every time.
var bodyBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledBody bounds the buffers kept for reuse: one grown by an odd large
// body is left to the collector rather than held.
const maxPooledBody = 64 << 10

// receiverHandler answers webhook deliveries with 200 and records them.
// It answers 200 even to a bad signature, so that a signing bug shows up as
// a figure in the report rather than as retries that distort the others.
type receiverHandler struct {
	rec       *Recorder
	verifier  *signatureVerifier // nil: signatures not checked
	receipts  *receiptLog        // nil: receipts not written out
	now       func() time.Time
	malformed atomic.Int64
	received  atomic.Int64 // well-formed receipts, for the progress line
}

// deliveryBody is the part of a Qhronos webhook body the bench needs.
// ScheduledAt stays a time.Time: decoding it as a string to parse apart
// measured no faster, and would loosen what counts as malformed (escapes).
type deliveryBody struct {
	EventID      string    `json:"event_id"`
	OccurrenceID string    `json:"occurrence_id"`
	ScheduledAt  time.Time `json:"scheduled_at"`
	Attempt      int       `json:"attempt"`
	// SubscriptionID is set in a fan-out delivery: one firing reaches
	// each subscription under the same webhook-id.
	SubscriptionID string `json:"subscription_id"`
}

func (h *receiverHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	at := h.now()
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	buf := bodyBuffers.Get().(*bytes.Buffer)
	defer releaseBodyBuffer(buf)
	_, err := buf.ReadFrom(io.LimitReader(r.Body, maxDeliveryBody+1))
	body := buf.Bytes()
	if err != nil || len(body) > maxDeliveryBody {
		h.malformed.Add(1)
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		return
	}
	var b deliveryBody
	if err := json.Unmarshal(body, &b); err != nil || b.EventID == "" || b.ScheduledAt.IsZero() {
		h.malformed.Add(1)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	rc := Receipt{DeliveryID: deliveryID(r.Header, b), EventID: b.EventID, ScheduledAt: b.ScheduledAt,
		ReceivedAt: at}
	if h.verifier != nil {
		rc.SignatureChecked = true
		rc.SignatureOK = h.verifier.Verify(r.Header.Get("X-Qhronos-Signature"), body)
	}
	h.rec.Record(rc)
	if h.receipts != nil {
		h.receipts.add(rc, b.Attempt)
	}
	h.received.Add(1)
	w.WriteHeader(http.StatusOK)
}

// releaseBodyBuffer returns buf to bodyBuffers, emptied, unless it grew past
// maxPooledBody. Nothing may use the body once it is released: the strings
// a receipt keeps are copies made by the JSON decoder.
func releaseBodyBuffer(buf *bytes.Buffer) {
	if buf.Cap() > maxPooledBody {
		return
	}
	buf.Reset()
	bodyBuffers.Put(buf)
}

// deliveryID is the identity used to find duplicates: the Standard Webhooks
// webhook-id header (stable across retries), else the body's occurrence_id,
// else event and instant, which is all the original Qhronos sends.
func deliveryID(h http.Header, b deliveryBody) string {
	// Spelled canonically: Get would otherwise allocate the canonical key.
	if id := h.Get("Webhook-Id"); id != "" {
		if b.SubscriptionID != "" {
			return id + "#" + b.SubscriptionID
		}
		return id
	}
	if b.OccurrenceID != "" {
		return b.OccurrenceID
	}
	return b.EventID + "|" + b.ScheduledAt.UTC().Format(time.RFC3339Nano)
}

// receivers is a set of loopback HTTP servers sharing one handler; each has
// its own port, so a server that limits concurrency per destination host:port
// sees several destinations.
type receivers struct {
	servers []*http.Server
	urls    []string
	errs    chan error
}

// startReceivers listens on n ephemeral ports of host, which must be loopback.
func startReceivers(host netip.Addr, n int, h http.Handler) (*receivers, error) {
	if !isLoopback(host) {
		return nil, fmt.Errorf("receiver host %s is not loopback", host)
	}
	rs := &receivers{errs: make(chan error, n)}
	for i := range n {
		ln, err := net.Listen("tcp", net.JoinHostPort(host.String(), "0"))
		if err != nil {
			rs.close(context.Background())
			return nil, fmt.Errorf("listen receiver %d: %w", i, err)
		}
		srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
		rs.servers = append(rs.servers, srv)
		port := ln.Addr().(*net.TCPAddr).Port
		rs.urls = append(rs.urls, "http://"+net.JoinHostPort(host.String(), strconv.Itoa(port))+"/hook")
		go func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				rs.errs <- fmt.Errorf("receiver %d: %w", i, err)
			}
		}()
	}
	return rs, nil
}

// close shuts every receiver down, waiting for handlers in flight until ctx
// ends.
func (rs *receivers) close(ctx context.Context) {
	for _, s := range rs.servers {
		if err := s.Shutdown(ctx); err != nil {
			_ = s.Close()
		}
	}
}
