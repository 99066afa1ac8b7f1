package secrets

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
)

// SecretPrefix marks a Standard Webhooks secret: the rest is the base64 key.
const SecretPrefix = "whsec_"

// GenerateSecret returns a fresh per-event signing secret,
// "whsec_" + base64(32 random bytes), the Standard Webhooks form that
// receivers' libraries decode to the raw key.
func GenerateSecret() (string, error) {
	var key [32]byte
	if _, err := rand.Read(key[:]); err != nil {
		return "", fmt.Errorf("generate secret: %w", err)
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(key[:]), nil
}
