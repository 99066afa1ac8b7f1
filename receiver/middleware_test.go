package receiver_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/qhronos/qhronos/receiver"
)

func TestMiddleware(t *testing.T) {
	t.Parallel()
	var got []byte
	calls := 0
	h := receiver.NewVerifier([]string{"s3cret"}, receiver.WithMaxBody(64)).Middleware(
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			calls++
			got, _ = io.ReadAll(r.Body)
			w.WriteHeader(http.StatusNoContent)
		}))
	send := func(b []byte, hdr http.Header) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "/hooks", bytes.NewReader(b))
		for k, v := range hdr {
			r.Header[k] = v
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	now := time.Now()

	w := send(body, receiver.Sign([]string{"s3cret"}, "o1", now, body))
	if w.Code != http.StatusNoContent || !bytes.Equal(got, body) || calls != 1 {
		t.Fatalf("signed request: status %d, handler saw %q (%d calls); want 204 and the body", w.Code, got, calls)
	}
	w = send(body, receiver.Sign([]string{"wrong"}, "o1", now, body))
	if w.Code != http.StatusUnauthorized || calls != 1 || !strings.Contains(w.Body.String(), "no signature matches") {
		t.Errorf("forged request: status %d body %q, %d calls; want 401 naming the reason and no call", w.Code, w.Body.String(), calls)
	}
	w = send(body, receiver.Sign([]string{"s3cret"}, "o1", now.Add(-time.Hour), body))
	if w.Code != http.StatusUnauthorized || calls != 1 || !strings.Contains(w.Body.String(), "too old") {
		t.Errorf("replayed request: status %d body %q; want 401 too old", w.Code, w.Body.String())
	}
	big := bytes.Repeat([]byte("x"), 65)
	w = send(big, receiver.Sign([]string{"s3cret"}, "o1", now, big))
	if w.Code != http.StatusRequestEntityTooLarge || calls != 1 {
		t.Errorf("oversized body: status %d; want 413", w.Code)
	}
}

func TestParseDelivery(t *testing.T) {
	t.Parallel()
	d, err := receiver.ParseDelivery([]byte(`{"event_id":"e","occurrence_id":"o","attempt":2,"name":"n","description":"",
		"scheduled_at":"2030-01-02T03:04:05Z","dispatched_at":"2030-01-02T03:04:06.5Z","metadata":{"a":[1]},"tags":["x"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if d.OccurrenceID != "o" || d.Attempt != 2 || string(d.Metadata) != `{"a":[1]}` || !d.ScheduledAt.Equal(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Errorf("ParseDelivery = %+v", d)
	}
	if _, err := receiver.ParseDelivery([]byte(`[`)); err == nil {
		t.Error("ParseDelivery accepted invalid JSON")
	}
}
