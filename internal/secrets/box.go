// Package secrets encrypts per-event HMAC secrets at rest, so a database dump
// alone does not let anyone forge deliveries.
package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/qhronos/qhronos/internal/redact"
)

// MinKeyBytes is the shortest accepted secrets.encryption_key.
const MinKeyBytes = 32

// version1 marks AES-256-GCM under an HKDF-SHA256-derived key. The first
// byte of every ciphertext names its version so a later key or algorithm can
// be introduced while old rows still open.
const version1 byte = 1

// hkdfInfo is the fixed context label binding the derived key to this use.
const hkdfInfo = "qhronos secrets v1 aes-256-gcm"

// Errors from Open. Neither says which byte was wrong.
var (
	ErrInvalidCiphertext  = errors.New("secrets: ciphertext is corrupt or was sealed with another key")
	ErrUnsupportedVersion = errors.New("secrets: unsupported ciphertext version")
)

// Box seals and opens small secrets with AES-256-GCM. It is safe for
// concurrent use.
type Box struct {
	aead cipher.AEAD
	fp   []byte
}

// NewBox derives the AES key from the configured key (≥ 32 bytes) with
// HKDF-SHA256, so the configured string may be any high-entropy text.
func NewBox(key string) (*Box, error) {
	if len(key) < MinKeyBytes {
		return nil, fmt.Errorf("secrets.encryption_key: must be at least %d bytes", MinKeyBytes)
	}
	aesKey, err := hkdf.Key(sha256.New, []byte(key), nil, hkdfInfo, 32)
	if err != nil {
		return nil, fmt.Errorf("derive encryption key: %w", err)
	}
	block, err := aes.NewCipher(aesKey)
	if err != nil {
		return nil, fmt.Errorf("create cipher: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("create gcm: %w", err)
	}
	fp, err := hkdf.Key(sha256.New, []byte(key), nil, fingerprintInfo, 32)
	if err != nil {
		return nil, fmt.Errorf("derive fingerprint key: %w", err)
	}
	return &Box{aead: aead, fp: fp}, nil
}

// fingerprintInfo binds the fingerprint key (see internal/redact) to its use.
const fingerprintInfo = "qhronos fingerprint v1 hmac-sha256"

// Redactor shows sensitive values as fingerprints keyed from the encryption
// key, so every instance shows the same fingerprint for the same value. A
// nil Box (tests without secrets) gives an unkeyed one.
func (b *Box) Redactor() *redact.Redactor {
	if b == nil {
		return redact.New(nil)
	}
	return redact.New(b.fp)
}

// Seal encrypts plaintext as version ‖ random nonce ‖ ciphertext+tag. The
// version byte is authenticated too, so it cannot be swapped undetected.
func (b *Box) Seal(plaintext []byte) ([]byte, error) {
	ns := b.aead.NonceSize()
	out := make([]byte, 1+ns, 1+ns+len(plaintext)+b.aead.Overhead())
	out[0] = version1
	if _, err := rand.Read(out[1:]); err != nil {
		return nil, fmt.Errorf("read nonce: %w", err)
	}
	return b.aead.Seal(out, out[1:], plaintext, out[:1]), nil
}

// Open decrypts what Seal produced; any change to any byte, or a different
// key, yields ErrInvalidCiphertext.
func (b *Box) Open(ciphertext []byte) ([]byte, error) {
	if len(ciphertext) == 0 {
		return nil, ErrInvalidCiphertext
	}
	if ciphertext[0] != version1 {
		return nil, ErrUnsupportedVersion
	}
	ns := b.aead.NonceSize()
	if len(ciphertext) < 1+ns+b.aead.Overhead() {
		return nil, ErrInvalidCiphertext
	}
	pt, err := b.aead.Open(nil, ciphertext[1:1+ns], ciphertext[1+ns:], ciphertext[:1])
	if err != nil {
		return nil, ErrInvalidCiphertext
	}
	return pt, nil
}
