package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestReceiverRecordsDeliveries(t *testing.T) {
	t.Parallel()
	rec := NewRecorder(0)
	rec.Expect("e1")
	rec.Expect("e2")
	rec.Seal()
	at := time.Date(2026, 11, 21, 12, 0, 0, 250_000_000, time.UTC)
	h := &receiverHandler{rec: rec, now: func() time.Time { return at }, verifier: newSignatureVerifier("k")}
	post := func(body string, header http.Header) int {
		req := httptest.NewRequest(http.MethodPost, "/hook", strings.NewReader(body))
		for k, v := range header {
			req.Header[k] = v
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Code
	}
	b1 := `{"event_id":"e1","occurrence_id":"o1","attempt":1,"scheduled_at":"2026-11-21T12:00:00Z"}`
	signed := http.Header{"Webhook-Id": {"o1"}, "X-Qhronos-Signature": {sign([]byte("k"), []byte(b1))}}
	if got := post(b1, signed); got != http.StatusOK {
		t.Fatalf("signed delivery: got status %d, want 200", got)
	}
	// A retry with attempt 2 but the same webhook-id, and a bad signature.
	b1retry := strings.Replace(b1, `"attempt":1`, `"attempt":2`, 1)
	if got := post(b1retry, http.Header{"Webhook-Id": {"o1"}, "X-Qhronos-Signature": {"00"}}); got != http.StatusOK {
		t.Fatalf("bad signature: got status %d, want 200 (counted, not refused)", got)
	}
	// The original Qhronos sends no webhook-id and no occurrence_id.
	if got := post(`{"event_id":"e2","scheduled_at":"2026-11-21T12:00:00Z"}`, nil); got != http.StatusOK {
		t.Fatalf("original body: got status %d, want 200", got)
	}
	if got := post(`not json`, nil); got != http.StatusBadRequest {
		t.Errorf("malformed body: got status %d, want 400", got)
	}

	tally := rec.Tally(0)
	if tally.Duplicates != 1 || tally.Lost != 0 || tally.BadSignatures != 2 {
		t.Errorf("duplicates, lost, bad signatures: got %d, %d, %d, want 1, 0, 2",
			tally.Duplicates, tally.Lost, tally.BadSignatures)
	}
	if want := 250 * time.Millisecond; tally.Lateness.Max != want {
		t.Errorf("lateness: got %v, want %v (receive time − body scheduled_at)", tally.Lateness.Max, want)
	}
	if got := h.malformed.Load(); got != 1 {
		t.Errorf("malformed: got %d, want 1", got)
	}
}

func TestReceiverWritesReceipts(t *testing.T) {
	t.Parallel()
	rec := NewRecorder(0)
	at := time.Date(2026, 11, 21, 12, 0, 0, 250_000_000, time.UTC)
	path := filepath.Join(t.TempDir(), "receipts.csv")
	l, err := openReceiptLog(path)
	if err != nil {
		t.Fatal(err)
	}
	h := &receiverHandler{rec: rec, now: func() time.Time { return at }, receipts: l}
	for _, attempt := range []string{"1", "2"} {
		req := httptest.NewRequest(http.MethodPost, "/hook", strings.NewReader(
			`{"event_id":"e1","occurrence_id":"o1","attempt":`+attempt+`,"scheduled_at":"2026-11-21T12:00:00Z"}`))
		req.Header.Set("Webhook-Id", "o1")
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	if err := l.close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "delivery_id,event_id,attempt,scheduled_at,received_at\n" +
		"o1,e1,1,2026-11-21T12:00:00Z,2026-11-21T12:00:00.25Z\n" +
		"o1,e1,2,2026-11-21T12:00:00Z,2026-11-21T12:00:00.25Z\n"
	if string(got) != want {
		t.Errorf("receipts file:\n%s\nwant:\n%s", got, want)
	}
}

// TestReceiverRejectsMalformed holds each way a body can be refused to its
// status, including a valid body read after a refused one into a reused
// buffer.
func TestReceiverRejectsMalformed(t *testing.T) {
	t.Parallel()
	rec := NewRecorder(0)
	h := &receiverHandler{rec: rec, now: time.Now, verifier: newSignatureVerifier("k")}
	tests := []struct {
		name string
		body string
		want int
	}{
		{"scheduled_at missing", `{"event_id":"e1","occurrence_id":"o1"}`, http.StatusBadRequest},
		{"scheduled_at not a time", `{"event_id":"e1","scheduled_at":"yesterday"}`, http.StatusBadRequest},
		{"scheduled_at not a string", `{"event_id":"e1","scheduled_at":1796040000}`, http.StatusBadRequest},
		{"scheduled_at null", `{"event_id":"e1","scheduled_at":null}`, http.StatusBadRequest},
		{"scheduled_at zero", `{"event_id":"e1","scheduled_at":"0001-01-01T00:00:00Z"}`, http.StatusBadRequest},
		{"event_id missing", `{"scheduled_at":"2026-11-21T12:00:00Z"}`, http.StatusBadRequest},
		{"trailing data", `{"event_id":"e1","scheduled_at":"2026-11-21T12:00:00Z"} {}`, http.StatusBadRequest},
		{"too large", `{"event_id":"e1","name":"` + strings.Repeat("x", maxDeliveryBody) + `"}`,
			http.StatusRequestEntityTooLarge},
		{"well-formed", `{"event_id":"e1","scheduled_at":"2026-11-21T12:00:00Z"}`, http.StatusOK},
	}
	for _, tt := range tests {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/hook", strings.NewReader(tt.body)))
		if w.Code != tt.want {
			t.Errorf("%s: got status %d, want %d", tt.name, w.Code, tt.want)
		}
	}
	if got, want := h.malformed.Load(), int64(len(tests)-1); got != want {
		t.Errorf("malformed: got %d, want %d", got, want)
	}
	if got := rec.Tally(0).Receipts; got != 1 {
		t.Errorf("receipts: got %d, want 1", got)
	}
}
