package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// benchSecret is shaped like the secrets bench/*.sh make (openssl rand -hex 32).
const benchSecret = "5b0c3f8e9a7d41c2b6e0f4a1d8c7e3b29f6a0d5c1e8b7a4f3d2c1b0a9e8f7d6c"

// benchDelivery is one signed webhook request as Qhronos sends it.
type benchDelivery struct {
	id, sig string
	body    []byte
}

// benchDeliveries returns n deliveries of n distinct events created by a run,
// each body laid out like internal/actions.Payload.Marshal writes it.
func benchDeliveries(n int) (events []string, ds []benchDelivery) {
	key := []byte(benchSecret)
	scheduled := time.Date(2026, 11, 30, 12, 0, 0, 123_456_000, time.UTC)
	for i := range n {
		ev := fmt.Sprintf("0193a5c2-7d4e-7f10-8b2a-%012x", i)
		occ := fmt.Sprintf("0193a5c2-9e61-7c3d-a4f5-%012x", i)
		at := scheduled.Add(time.Duration(i) * time.Microsecond)
		body := fmt.Appendf(nil, `{"event_id":%q,"occurrence_id":%q,"attempt":1,`+
			`"name":"qhronos-bench 3f9a0c1d #%d","description":"one-time event created by qhronos-bench",`+
			`"scheduled_at":%q,"dispatched_at":%q,"metadata":{"run":"3f9a0c1d","plan":"burst"},`+
			`"tags":["bench","run-3f9a0c1d"]}`,
			ev, occ, i, at.Format(time.RFC3339Nano), at.Add(3*time.Millisecond).Format(time.RFC3339Nano))
		events = append(events, ev)
		ds = append(ds, benchDelivery{id: occ, sig: sign(key, body), body: body})
	}
	return events, ds
}

// BenchmarkReceiverHandler measures the receiver's own work per delivery
// (read, verify, decode, account), as in a run with --verify-signature: every
// delivery is a first receipt of an expected event. The request is reused so
// that its construction, which net/http does on the real path, stays out.
func BenchmarkReceiverHandler(b *testing.B) {
	events, ds := benchDeliveries(b.N)
	rec := NewRecorder(len(events))
	for _, ev := range events {
		rec.Expect(ev)
	}
	rec.Seal()
	now := time.Date(2026, 11, 30, 12, 0, 1, 0, time.UTC)
	h := &receiverHandler{rec: rec, verifier: newSignatureVerifier(benchSecret), now: func() time.Time { return now }}
	body := new(bytes.Reader)
	req := httptest.NewRequest(http.MethodPost, "/hook", nil)
	req.Body = io.NopCloser(body)
	req.Header = http.Header{
		"Content-Type":        {"application/json"},
		"Webhook-Id":          {""},
		"Webhook-Timestamp":   {"1796040000"},
		"X-Qhronos-Signature": {""},
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		d := &ds[i]
		body.Reset(d.body)
		req.Header["Webhook-Id"][0] = d.id
		req.Header["X-Qhronos-Signature"][0] = d.sig
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("delivery %d: status %d", i, w.Code)
		}
	}
	b.StopTimer()
	if t := rec.Tally(0); t.Occurrences != b.N || t.BadSignatures != 0 || t.Lost != 0 || t.Duplicates != 0 {
		b.Fatalf("occurrences %d of %d, bad signatures %d, lost %d, duplicates %d",
			t.Occurrences, b.N, t.BadSignatures, t.Lost, t.Duplicates)
	}
}
