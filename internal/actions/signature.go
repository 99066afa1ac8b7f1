package actions

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
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
	m := hmac.New(sha256.New, SigningKey(secret))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// StandardSignature is the webhook-signature value: one "v1,<base64>" per
// secret, space-separated, each an HMAC-SHA256 over "id.timestamp.body". A
// receiver holding either secret of a rotation verifies one of them.
func StandardSignature(secrets []string, id string, timestamp time.Time, body []byte) string {
	prefix := id + "." + strconv.FormatInt(timestamp.Unix(), 10) + "."
	sigs := make([]string, 0, len(secrets))
	for _, s := range secrets {
		m := hmac.New(sha256.New, SigningKey(s))
		m.Write([]byte(prefix))
		m.Write(body)
		sigs = append(sigs, "v1,"+base64.StdEncoding.EncodeToString(m.Sum(nil)))
	}
	return strings.Join(sigs, " ")
}

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
	h.Set(HeaderWebhookID, id)
	h.Set(HeaderWebhookTimestamp, strconv.FormatInt(timestamp.Unix(), 10))
	if len(secrets) == 0 {
		return
	}
	h.Set(HeaderWebhookSignature, StandardSignature(secrets, id, timestamp, body))
	if len(secrets) == 1 {
		h.Set(HeaderQhronosSignature, QhronosSignature(secrets[0], body))
		return
	}
	h.Set(HeaderQhronosSignature, QhronosSignature(secrets[1], body))
	h.Set(HeaderQhronosSignatureNew, QhronosSignature(secrets[0], body))
}
