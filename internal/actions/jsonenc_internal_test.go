package actions

import (
	"bytes"
	"encoding/json"
	"testing"
)

// reflectJSON is what encoding/json writes for v, with or without HTML
// escaping, without the encoder's trailing newline.
func reflectJSON(t testing.TB, v any, escapeHTML bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(escapeHTML)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// FuzzJSONStringMatchesEncodingJSON: every string, valid UTF-8 or not,
// is written byte for byte as encoding/json writes it.
func FuzzJSONStringMatchesEncodingJSON(f *testing.F) {
	for _, s := range []string{"", "plain", `quote " and \ backslash`, "tab\tnew\nline\r\b\f\x00\x1f\x7f",
		"<script>&amp;</script>", "é ü 漢字 🎉", "\u2028\u2029", "\xff\xfe bad", "a\xe2\x80", "\xed\xa0\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, html := range []bool{false, true} {
			want := reflectJSON(t, s, html)
			if got := appendJSONString(nil, s, html); !bytes.Equal(got, want) {
				t.Fatalf("escapeHTML %v: %q encoded as %s, encoding/json writes %s", html, s, got, want)
			}
		}
	})
}

// TestPayloadAndRecordedRequestMatchEncodingJSON: the hand-written
// encoders give encoding/json's bytes for what a delivery carries.
func TestPayloadAndRecordedRequestMatchEncodingJSON(t *testing.T) {
	t.Parallel()
	type plainPayload Payload // no Marshal method: encoded by reflection
	payloads := []Payload{
		{EventID: "e1", OccurrenceID: "o1", Attempt: 3, Name: `nightly "export" <b>`, Description: "line\nbreak",
			ScheduledAt: "2026-11-30T09:00:00Z", DispatchedAt: "2026-11-30T09:00:00.001Z",
			Metadata: json.RawMessage(" {\"a\": [1, 2, {\"b\": \"<&>\"}],\n \"c\": null} "), Tags: []string{"x", "y<z"}},
		{EventID: "e2", Metadata: json.RawMessage(`{}`), Tags: []string{}},
		{EventID: "e3"}, // nil metadata and tags: null
	}
	for _, p := range payloads {
		got, err := p.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if want := reflectJSON(t, plainPayload(p), false); !bytes.Equal(got, want) {
			t.Errorf("payload:\n got %s\nwant %s", got, want)
		}
	}
	if _, err := (Payload{Metadata: json.RawMessage(`{"a":`)}).Marshal(); err == nil {
		t.Error("invalid metadata: no error")
	}

	for _, r := range []SentRequest{
		{Method: "POST", URL: "https://example.com/hook?a=1&b=<2>", Headers: map[string]string{
			"Webhook-Id": "o1", "Content-Type": "application/json", "X-Qhronos-Signature": Redacted, "A": "ä\u2028"},
			Body: `{"event_id":"e1"}`, BodyTruncated: true},
		{Method: "PUBLISH", URL: "nats://host", Headers: map[string]string{}},
		{Method: "GET"}, // nil headers: null
	} {
		got := r.JSON()
		if want := reflectJSON(t, r, true); !bytes.Equal(got, want) {
			t.Errorf("recorded request:\n got %s\nwant %s", got, want)
		}
		if s := r.JSONString(); s != string(got) {
			t.Errorf("recorded request as a string:\n got %s\nwant %s", s, got)
		}
	}
}

// A recorded request is encoded into one buffer sized for its escaped body
// (and one list of header names): a body full of quotes once grew it twice.
func TestRecordedRequestEncodesInOneBuffer(t *testing.T) {
	body, err := NewPayload(Request{EventID: "e1", OccurrenceID: "o1", Name: `say "hi"`, Tags: []string{"a", "b"},
		Metadata: json.RawMessage(`{"customer":"c-42","note":"a \"quoted\" \\ path"}`)}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	r := &SentRequest{Method: "POST", URL: "http://127.0.0.1:9/hook", Body: string(body), Headers: map[string]string{
		"Content-Type": "application/json", "Webhook-Id": "o1", "Webhook-Signature": Redacted}}
	if n := testing.AllocsPerRun(100, func() { _ = r.JSONString() }); n > 2 {
		t.Errorf("%v allocations to encode a recorded request, want at most 2", n)
	}
}

// A recorded request's body, the longest string a delivery encodes: JSON
// within JSON, a quote to escape every few bytes.
func BenchmarkAppendJSONString(b *testing.B) {
	body := `{"event_id":"7c9e6679-7425-40de-944b-e07fc1f90ae7","occurrence_id":"0192f1a4-9d2e-7c61-8a7b-5e4f3d2c1b0a",` +
		`"scheduled_at":"2026-11-30T09:00:00Z","dispatched_at":"2026-11-30T09:00:00.001234Z","attempt":1,` +
		`"name":"nightly export for tenant 42","description":"","tags":["billing","nightly"],` +
		`"metadata":{"tenant":"acme","plan":"pro","region":"eu-west-1","batch":17}}`
	dst := make([]byte, 0, 1024)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		dst = appendJSONString(dst[:0], body, true)
	}
}
