package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
)

// MinKeyBytes is the shortest HMAC key the keyring will sign or verify with.
// A short (or empty) key would let anyone forge tokens, so it fails closed.
const MinKeyBytes = 32

// Keyring holds the JWT signing keys by key id. Current signs new tokens;
// every key present verifies, so a key rotated out of Current keeps its
// tokens valid until it is removed.
type Keyring struct {
	Current string
	Keys    map[string][]byte // kid → HMAC key
}

// NewKeyring builds a keyring from secrets, the first signing. Each key id is
// derived from its key, so every instance sharing the same secrets agrees on
// the ids without configuring them, and rotating is "add the new secret in
// front, keep the old one behind it".
func NewKeyring(current []byte, previous ...[]byte) Keyring {
	k := Keyring{Current: KeyID(current), Keys: map[string][]byte{KeyID(current): current}}
	for _, p := range previous {
		k.Keys[KeyID(p)] = p
	}
	return k
}

// KeyID derives a short public identifier for an HMAC key. It is a PRF output
// under the key itself, so publishing it in the JWT header reveals nothing.
func KeyID(key []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("qhronos jwt key id"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:9])
}

// Validate reports a keyring that cannot sign safely; main calls it at start
// so a misconfiguration stops the server instead of failing every request.
func (k Keyring) Validate() error {
	if _, err := k.signingKey(); err != nil {
		return err
	}
	for kid, key := range k.Keys {
		if len(key) < MinKeyBytes {
			return fmt.Errorf("auth.jwt_secret: key %q must be at least %d bytes", kid, MinKeyBytes)
		}
	}
	return nil
}

// signingKey returns the current key.
func (k Keyring) signingKey() ([]byte, error) {
	key, ok := k.Keys[k.Current]
	if !ok {
		return nil, fmt.Errorf("auth.jwt_secret: current key %q is not in the keyring", k.Current)
	}
	if len(key) < MinKeyBytes {
		return nil, fmt.Errorf("auth.jwt_secret: must be at least %d bytes", MinKeyBytes)
	}
	return key, nil
}

// verifyingKey returns the key for kid, or false when it is unknown or too
// short to trust.
func (k Keyring) verifyingKey(kid string) ([]byte, bool) {
	key, ok := k.Keys[kid]
	if !ok || len(key) < MinKeyBytes {
		return nil, false
	}
	return key, true
}
