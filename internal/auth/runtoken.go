package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strings"
)

// RunTokenPrefix starts every run token, so the API tells one from a JWT
// without trying to parse it.
const RunTokenPrefix = "qrun_"

// RunToken is the bearer token that completes the run of one occurrence
// (POST /occurrences/{id}/complete and /heartbeat) and nothing else. It is
// stateless: an HMAC of the occurrence id under a key derived from the
// current JWT key, so every instance sharing the secrets mints the same
// token for every re-send of the occurrence, and nothing is stored.
func (k Keyring) RunToken(occurrenceID string) string {
	key, err := k.signingKey()
	if err != nil {
		return ""
	}
	return runToken(key, occurrenceID)
}

// ValidRunToken reports whether token is the run token of occurrenceID
// under any key of the ring (a rotated-out key keeps its runs completable
// until it is removed).
func (k Keyring) ValidRunToken(occurrenceID, token string) bool {
	if !strings.HasPrefix(token, RunTokenPrefix) {
		return false
	}
	ok := false
	for _, key := range k.Keys {
		if len(key) >= MinKeyBytes && hmac.Equal([]byte(runToken(key, occurrenceID)), []byte(token)) {
			ok = true
		}
	}
	return ok
}

func runToken(key []byte, occurrenceID string) string {
	derived := hmac.New(sha256.New, key)
	derived.Write([]byte("qhronos run token key"))
	m := hmac.New(sha256.New, derived.Sum(nil))
	m.Write([]byte(occurrenceID))
	return RunTokenPrefix + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// ValidRunToken reports whether token completes the run of occurrenceID.
func (a *Authenticator) ValidRunToken(occurrenceID, token string) bool {
	return a.cfg.Keys.ValidRunToken(occurrenceID, token)
}
