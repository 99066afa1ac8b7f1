package receiver

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Header names of a signed delivery.
const (
	HeaderWebhookID           = "webhook-id"
	HeaderWebhookTimestamp    = "webhook-timestamp"
	HeaderWebhookSignature    = "webhook-signature"
	HeaderQhronosSignature    = "X-Qhronos-Signature"
	HeaderQhronosSignatureNew = "X-Qhronos-Signature-New"
)

// DefaultTolerance is how far a delivery's timestamp may be from the
// receiver's clock, as the Standard Webhooks specification recommends.
const DefaultTolerance = 5 * time.Minute

// Verification errors; test them with errors.Is. The returned errors wrap
// these with details (never a secret).
var (
	ErrNoSecret          = errors.New("no signing secret configured")
	ErrMissingHeaders    = errors.New("missing signature headers")
	ErrInvalidTimestamp  = errors.New("webhook-timestamp is not a Unix time in seconds")
	ErrTooOld            = errors.New("message timestamp too old (a replay?)")
	ErrTooNew            = errors.New("message timestamp too far in the future")
	ErrSignatureMismatch = errors.New("no signature matches")
)

// Verifier checks deliveries against one or more secrets. It is safe for
// concurrent use.
type Verifier struct {
	keys      [][]byte
	tolerance time.Duration
	now       func() time.Time
	legacy    bool
	maxBody   int64
	// privateKeys open encrypted deliveries (WithDecryptionKeys).
	privateKeys []PrivateKey
}

// Option configures a Verifier.
type Option func(*Verifier)

// WithTolerance sets how far a delivery's timestamp may be from now
// (default DefaultTolerance). A tolerance of zero or less disables the check,
// and with it replay protection: use it only to inspect old captures.
func WithTolerance(d time.Duration) Option { return func(v *Verifier) { v.tolerance = d } }

// WithClock sets the clock the timestamp is compared with (default time.Now).
func WithClock(now func() time.Time) Option { return func(v *Verifier) { v.now = now } }

// WithLegacy accepts requests that carry only X-Qhronos-Signature (clients of
// the original Qhronos). Such a request has no timestamp: a captured one can
// be replayed. Deduplicate on its body's occurrence_id.
func WithLegacy() Option { return func(v *Verifier) { v.legacy = true } }

// WithMaxBody bounds the body the Middleware reads (default 1 MiB, the
// server's own bound).
func WithMaxBody(n int64) Option { return func(v *Verifier) { v.maxBody = n } }

// NewVerifier returns a Verifier accepting a signature made with any of
// secrets (see the package doc for the key rule). Empty secrets are ignored;
// a Verifier without any refuses everything with ErrNoSecret.
func NewVerifier(secrets []string, opts ...Option) *Verifier {
	v := &Verifier{tolerance: DefaultTolerance, now: time.Now, maxBody: 1 << 20}
	for _, s := range secrets {
		if s != "" {
			v.keys = append(v.keys, SigningKey(s))
		}
	}
	for _, o := range opts {
		o(v)
	}
	return v
}

// Verify checks one request with a single secret and the default options.
func Verify(secret string, header http.Header, body []byte) error {
	return NewVerifier([]string{secret}).Verify(header, body)
}

// SigningKey derives the HMAC key of a secret: "whsec_" secrets are
// base64-decoded, any other secret is used as its UTF-8 bytes.
func SigningKey(secret string) []byte {
	if rest, ok := strings.CutPrefix(secret, "whsec_"); ok {
		if key, err := base64.StdEncoding.DecodeString(rest); err == nil {
			return key
		}
	}
	return []byte(secret)
}

// Verify checks the headers and the raw body of one delivery. It returns nil
// when the delivery is authentic and fresh.
func (v *Verifier) Verify(header http.Header, body []byte) error {
	if len(v.keys) == 0 {
		return ErrNoSecret
	}
	id, ts, sigs := header.Get(HeaderWebhookID), header.Get(HeaderWebhookTimestamp), header.Get(HeaderWebhookSignature)
	if id == "" && ts == "" && sigs == "" {
		return v.verifyLegacy(header, body)
	}
	if id == "" || ts == "" || sigs == "" {
		return fmt.Errorf("%w: webhook-id, webhook-timestamp and webhook-signature are all required", ErrMissingHeaders)
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: %q", ErrInvalidTimestamp, ts)
	}
	if v.tolerance > 0 {
		age := v.now().Sub(time.Unix(sec, 0))
		switch {
		case age > v.tolerance:
			return fmt.Errorf("%w: sent %s ago, tolerance %s", ErrTooOld, age.Round(time.Second), v.tolerance)
		case -age > v.tolerance:
			return fmt.Errorf("%w: sent %s ahead of this clock, tolerance %s", ErrTooNew, (-age).Round(time.Second), v.tolerance)
		}
	}
	prefix := id + "." + ts + "."
	for _, key := range v.keys {
		m := hmac.New(sha256.New, key)
		m.Write([]byte(prefix))
		m.Write(body)
		want := m.Sum(nil)
		for _, s := range strings.Fields(sigs) {
			enc, ok := strings.CutPrefix(s, "v1,")
			if !ok {
				continue // another scheme (v1a, …): not ours to check
			}
			got, err := base64.StdEncoding.DecodeString(enc)
			if err == nil && hmac.Equal(got, want) {
				return nil
			}
		}
	}
	return fmt.Errorf("%w: webhook-signature", ErrSignatureMismatch)
}

func (v *Verifier) verifyLegacy(header http.Header, body []byte) error {
	sigs := []string{header.Get(HeaderQhronosSignature), header.Get(HeaderQhronosSignatureNew)}
	if sigs[0] == "" && sigs[1] == "" {
		return fmt.Errorf("%w: expected webhook-id, webhook-timestamp and webhook-signature", ErrMissingHeaders)
	}
	if !v.legacy {
		return fmt.Errorf("%w: only X-Qhronos-Signature, which cannot refuse a replay (see WithLegacy)", ErrMissingHeaders)
	}
	for _, key := range v.keys {
		m := hmac.New(sha256.New, key)
		m.Write(body)
		want := m.Sum(nil)
		for _, s := range sigs {
			got, err := hex.DecodeString(strings.TrimSpace(s))
			if err == nil && hmac.Equal(got, want) {
				return nil
			}
		}
	}
	return fmt.Errorf("%w: X-Qhronos-Signature", ErrSignatureMismatch)
}

// Sign returns the signature headers Qhronos sends for body with secrets
// (newest first: the current secret, then during a rotation's grace the
// previous one) at timestamp: webhook-id, webhook-timestamp,
// webhook-signature with one v1 value per secret, and X-Qhronos-Signature
// with the only secret or, during a rotation, with the previous one (so a
// receiver of the original API keeps working) while X-Qhronos-Signature-New
// carries the current one. Use it to test a receiver, or to sign requests
// that the server did not sign (qhronos listen --secret does for
// tag-listeners).
func Sign(secrets []string, id string, timestamp time.Time, body []byte) http.Header {
	h := http.Header{}
	ts := strconv.FormatInt(timestamp.Unix(), 10)
	h.Set(HeaderWebhookID, id)
	h.Set(HeaderWebhookTimestamp, ts)
	if len(secrets) == 0 {
		return h
	}
	sigs := make([]string, 0, len(secrets))
	for _, s := range secrets {
		m := hmac.New(sha256.New, SigningKey(s))
		m.Write([]byte(id + "." + ts + "."))
		m.Write(body)
		sigs = append(sigs, "v1,"+base64.StdEncoding.EncodeToString(m.Sum(nil)))
	}
	h.Set(HeaderWebhookSignature, strings.Join(sigs, " "))
	legacy := func(secret string) string {
		m := hmac.New(sha256.New, SigningKey(secret))
		m.Write(body)
		return hex.EncodeToString(m.Sum(nil))
	}
	if len(secrets) == 1 {
		h.Set(HeaderQhronosSignature, legacy(secrets[0]))
		return h
	}
	h.Set(HeaderQhronosSignature, legacy(secrets[1]))
	h.Set(HeaderQhronosSignatureNew, legacy(secrets[0]))
	return h
}
