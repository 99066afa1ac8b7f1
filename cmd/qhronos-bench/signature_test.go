package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"testing"
)

func sign(key []byte, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

func TestSignatureVerifier(t *testing.T) {
	t.Parallel()
	body := []byte(`{"event_id":"e1"}`)
	raw := []byte("whsec_" + base64.StdEncoding.EncodeToString([]byte("decoded key")))
	tests := []struct {
		name   string
		secret string
		header string
		want   bool
	}{
		{"hex of HMAC with the secret", "s3cret", sign([]byte("s3cret"), body), true},
		{"surrounding spaces", "s3cret", "  " + sign([]byte("s3cret"), body) + " ", true},
		{"wrong secret", "s3cret", sign([]byte("other"), body), false},
		{"other body", "s3cret", sign([]byte("s3cret"), []byte(`{}`)), false},
		{"missing header", "s3cret", "", false},
		{"not hex", "s3cret", "zz", false},
		{"whsec secret as its bytes", string(raw), sign(raw, body), true},
		{"whsec secret decoded", string(raw), sign([]byte("decoded key"), body), true},
	}
	for _, tt := range tests {
		if got := newSignatureVerifier(tt.secret).Verify(tt.header, body); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}
