package repository

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/qhronos/qhronos/internal/model"
)

// FuzzDecodeActionMatchesEncodingJSON: an action column decodes as
// encoding/json decodes it, whatever its text, and fails where it fails.
func FuzzDecodeActionMatchesEncodingJSON(f *testing.F) {
	for _, a := range []model.Action{
		{Type: "webhook", Params: json.RawMessage(`{"url":"https://example.com/hook?a=1&b=2"}`)},
		{Type: "apicall", Params: json.RawMessage(`{"method":"POST","url":"http://x","headers":{"A":"b"},"body":"\u003c"}`)},
		{Type: "websocket"},
		{Type: `we"ird\type`, Params: json.RawMessage(`[1,2]`)},
	} {
		raw, err := json.Marshal(a)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	for _, raw := range []string{`{"type": "webhook", "params": {"url": "x"}}`, `{"params":{},"type":"x"}`,
		`{"type":"x","params":{"a":1},"type":"y"}`, `{"type":"x","params":1,"b":2}`, `{"type":"x\n","params":1}`,
		`{"type":"x","params":null}`, `{"type":"\xff","params":{}}`, `{"type":"x","params":}`, `null`, `{}`,
		`{"type":"","params":{} }`, `{"type":"x","params": [1]}`, "{\"type\":\"x\",\"params\":1\n}"} {
		f.Add([]byte(raw))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var want, got model.Action
		wantErr := json.Unmarshal(raw, &want)
		gotErr := decodeAction(raw, &got)
		if (wantErr == nil) != (gotErr == nil) {
			t.Fatalf("%q: decodeAction error %v, encoding/json's %v", raw, gotErr, wantErr)
		}
		if wantErr == nil && (got.Type != want.Type || !bytes.Equal(got.Params, want.Params)) {
			t.Fatalf("%q: decodeAction gives %q %q, encoding/json %q %q", raw, got.Type, got.Params, want.Type, want.Params)
		}
	})
}

// BenchmarkDecodeAction: a webhook's action column, as every due event's
// read decodes it.
func BenchmarkDecodeAction(b *testing.B) {
	raw := []byte(`{"type":"webhook","params":{"url":"http://127.0.0.1:18089/hook"}}`)
	for b.Loop() {
		var a model.Action
		if err := decodeAction(raw, &a); err != nil {
			b.Fatal(err)
		}
	}
}
