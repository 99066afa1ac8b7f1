package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"hash"
	"strings"
	"sync"
)

// signatureVerifier checks X-Qhronos-Signature: lowercase hex of
// HMAC-SHA256(secret, raw body), as the original Qhronos defined it.
type signatureVerifier struct {
	// macs holds, per accepted key, HMAC states for reuse: hmac.New hashes
	// the key's pads and allocates, a cost paid on every delivery otherwise.
	macs []*sync.Pool // of *keyedMAC
}

// keyedMAC is an HMAC with room for its sum, so that summing allocates
// nothing.
type keyedMAC struct {
	h   hash.Hash
	sum [sha256.Size]byte
}

// newSignatureVerifier accepts the secret as its bytes and, for a
// Standard Webhooks "whsec_<base64>" secret, also as the decoded key, so the
// same flag works whichever convention the server applies.
func newSignatureVerifier(secret string) *signatureVerifier {
	keys := [][]byte{[]byte(secret)}
	if rest, ok := strings.CutPrefix(secret, "whsec_"); ok {
		if key, err := base64.StdEncoding.DecodeString(rest); err == nil {
			keys = append(keys, key)
		}
	}
	v := &signatureVerifier{}
	for _, k := range keys {
		v.macs = append(v.macs, &sync.Pool{New: func() any { return &keyedMAC{h: hmac.New(sha256.New, k)} }})
	}
	return v
}

// Verify reports whether header is a valid signature of body.
func (v *signatureVerifier) Verify(header string, body []byte) bool {
	var got [sha256.Size]byte
	if !decodeHexSignature(&got, strings.TrimSpace(header)) {
		return false
	}
	for _, pool := range v.macs {
		m := pool.Get().(*keyedMAC)
		m.h.Reset()
		m.h.Write(body)
		ok := hmac.Equal(got[:], m.h.Sum(m.sum[:0]))
		pool.Put(m)
		if ok {
			return true
		}
	}
	return false
}

// decodeHexSignature decodes s, hex of exactly len(sig) bytes, into sig. It
// accepts what hex.DecodeString does, without the allocations: the copy to a
// stack array stands in for a []byte(s) conversion too long to stay off the
// heap.
func decodeHexSignature(sig *[sha256.Size]byte, s string) bool {
	var src [2 * sha256.Size]byte
	if len(s) != len(src) {
		return false
	}
	copy(src[:], s)
	_, err := hex.Decode(sig[:], src[:])
	return err == nil
}
