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
	rec := NewRecorder()
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
	rec := NewRecorder()
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
