package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
)

// signatureVerifier checks X-Qhronos-Signature: lowercase hex of
// HMAC-SHA256(secret, raw body), as the original Qhronos defined it.
type signatureVerifier struct {
	keys [][]byte
}

// newSignatureVerifier accepts the secret as its bytes and, for a
// Standard Webhooks "whsec_<base64>" secret, also as the decoded key, so the
// same flag works whichever convention the server applies.
func newSignatureVerifier(secret string) *signatureVerifier {
	v := &signatureVerifier{keys: [][]byte{[]byte(secret)}}
	if rest, ok := strings.CutPrefix(secret, "whsec_"); ok {
		if key, err := base64.StdEncoding.DecodeString(rest); err == nil {
			v.keys = append(v.keys, key)
		}
	}
	return v
}

// Verify reports whether header is a valid signature of body.
func (v *signatureVerifier) Verify(header string, body []byte) bool {
	got, err := hex.DecodeString(strings.TrimSpace(header))
	if err != nil || len(got) != sha256.Size {
		return false
	}
	for _, k := range v.keys {
		m := hmac.New(sha256.New, k)
		m.Write(body)
		if hmac.Equal(got, m.Sum(nil)) {
			return true
		}
	}
	return false
}
