package actions

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"hash"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Signature header names. X-Qhronos-Signature is the original Qhronos header
// (X-Qhronos-Signature-New joins it during a rotation, see SignHeaders); the
// webhook-* headers follow the Standard Webhooks specification so
// off-the-shelf verifiers work and receivers get replay protection.
const (
	HeaderQhronosSignature    = "X-Qhronos-Signature"
	HeaderQhronosSignatureNew = "X-Qhronos-Signature-New"
	HeaderWebhookID           = "webhook-id"
	HeaderWebhookTimestamp    = "webhook-timestamp"
	HeaderWebhookSignature    = "webhook-signature"
)

// SigningKey derives the HMAC key of a secret: a "whsec_" secret is the
// base64 of its key (the Standard Webhooks convention); any other secret —
// and a "whsec_" one that is not valid base64 — is used as its UTF-8 bytes.
func SigningKey(secret string) []byte {
	if rest, ok := strings.CutPrefix(secret, "whsec_"); ok {
		if key, err := base64.StdEncoding.DecodeString(rest); err == nil {
			return key
		}
	}
	return []byte(secret)
}

// QhronosSignature is the X-Qhronos-Signature value: lowercase hex of
// HMAC-SHA256 over the raw body.
func QhronosSignature(secret string, body []byte) string {
	m := macs.get(secret)
	m.Write(body)
	var sum [sha256.Size]byte
	sig := hex.EncodeToString(m.Sum(sum[:0]))
	macs.put(secret, m)
	return sig
}

// StandardSignature is the webhook-signature value: one "v1,<base64>" per
// secret, space-separated, each an HMAC-SHA256 over "id.timestamp.body". A
// receiver holding either secret of a rotation verifies one of them.
func StandardSignature(secrets []string, id string, timestamp time.Time, body []byte) string {
	var prefix [96]byte
	p := append(strconv.AppendInt(append(append(prefix[:0], id...), '.'), timestamp.Unix(), 10), '.')
	out := make([]byte, 0, len(secrets)*48)
	for i, s := range secrets {
		if i > 0 {
			out = append(out, ' ')
		}
		m := macs.get(s)
		m.Write(p)
		m.Write(body)
		var sum [sha256.Size]byte
		out = base64.StdEncoding.AppendEncode(append(out, "v1,"...), m.Sum(sum[:0]))
		macs.put(s, m)
	}
	return string(out)
}

// The signature headers' names as net/http writes them, derived once (Set
// would canonicalize the lower-case Standard Webhooks names again on every
// call).
var (
	canonicalWebhookID        = http.CanonicalHeaderKey(HeaderWebhookID)
	canonicalWebhookTimestamp = http.CanonicalHeaderKey(HeaderWebhookTimestamp)
	canonicalWebhookSignature = http.CanonicalHeaderKey(HeaderWebhookSignature)
)

// SignHeaders sets the delivery id, the timestamp and, when there is at least
// one secret, the signature headers. secrets are newest first: the current
// one, then during a rotation's grace period the one in force before it.
//
// webhook-signature carries one v1 value per secret. X-Qhronos-Signature
// carries the previous secret's signature during the grace, so a receiver of
// the original API that still holds the old secret keeps working, and the
// current secret's otherwise; X-Qhronos-Signature-New carries the current
// secret's signature during the grace only.
func SignHeaders(h http.Header, secrets []string, id string, timestamp time.Time, body []byte) {
	h[canonicalWebhookID] = []string{id}
	h[canonicalWebhookTimestamp] = []string{strconv.FormatInt(timestamp.Unix(), 10)}
	if len(secrets) == 0 {
		return
	}
	h[canonicalWebhookSignature] = []string{StandardSignature(secrets, id, timestamp, body)}
	if len(secrets) == 1 {
		h[HeaderQhronosSignature] = []string{QhronosSignature(secrets[0], body)}
		return
	}
	h[HeaderQhronosSignature] = []string{QhronosSignature(secrets[1], body)}
	h[HeaderQhronosSignatureNew] = []string{QhronosSignature(secrets[0], body)}
}

// macs keeps HMAC-SHA256 states keyed by each signing secret, ready to
// Reset: a new one costs a key schedule and a dozen allocations, and a
// delivery signs two or three times (BENCHMARKS.md, "#36: twenty-seventh
// step"). A process signs with few secrets (the default one and the
// events' own); when more than maxCachedSecrets have been seen the cache
// starts over, so it stays bounded.
var macs = &macCache{pools: map[string]*sync.Pool{}}

const maxCachedSecrets = 1024

type macCache struct {
	mu    sync.RWMutex
	pools map[string]*sync.Pool
}

// get returns an HMAC-SHA256 keyed by secret, reset.
func (c *macCache) get(secret string) hash.Hash {
	c.mu.RLock()
	p := c.pools[secret]
	c.mu.RUnlock()
	if p != nil {
		if m, ok := p.Get().(hash.Hash); ok {
			return m
		}
	}
	return hmac.New(sha256.New, SigningKey(secret))
}

// put keeps m, used, for the next signature with secret.
func (c *macCache) put(secret string, m hash.Hash) {
	m.Reset()
	c.mu.RLock()
	p := c.pools[secret]
	c.mu.RUnlock()
	if p == nil {
		c.mu.Lock()
		if p = c.pools[secret]; p == nil {
			if len(c.pools) >= maxCachedSecrets {
				c.pools = map[string]*sync.Pool{}
			}
			p = &sync.Pool{}
			c.pools[secret] = p
		}
		c.mu.Unlock()
	}
	p.Put(m)
}
