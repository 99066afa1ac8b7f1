package config

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// SecretsFileName is the file in the data directory holding the secrets the
// embedded deployment generates on first start.
const SecretsFileName = "secrets.json"

// Secrets are the four values production must be given and the embedded
// deployment generates for itself.
type Secrets struct {
	// MasterToken is "qhr_" + 32 random bytes, base64url.
	MasterToken string `json:"master_token"`
	// JWTSecret is 32 random bytes, hex.
	JWTSecret string `json:"jwt_secret"`
	// HMACDefaultSecret is a Standard Webhooks "whsec_" + base64 key of 32
	// random bytes, so receivers can paste it into stock verifiers.
	HMACDefaultSecret string `json:"hmac_default_secret"`
	// EncryptionKey is 32 random bytes, hex (64 digits).
	EncryptionKey string `json:"encryption_key"`
}

// String keeps secrets out of logs and error messages printed with %v.
func (Secrets) String() string { return "config.Secrets{redacted}" }

// GoString keeps secrets out of %#v output.
func (Secrets) GoString() string { return "config.Secrets{redacted}" }

// SecretsPath is where EnsureSecrets keeps the secrets of dir; main prints
// it on first start.
func SecretsPath(dir string) string { return filepath.Join(dir, SecretsFileName) }

// EnsureSecrets loads dir/secrets.json, or on first start generates the
// secrets and writes them there atomically with mode 0600. A file missing
// some values (older versions, hand edits) gets only those filled in; values
// present are never replaced, since losing the encryption key would make
// stored secrets unreadable. created reports whether anything was generated,
// so the caller prints the master token once. The caller should hold
// LockDataDir(dir).
func EnsureSecrets(dir string) (s Secrets, created bool, err error) {
	path := SecretsPath(dir)
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return Secrets{}, false, fmt.Errorf("read secrets file %s: %w", path, err)
	default:
		if err := json.Unmarshal(data, &s); err != nil {
			// Never overwrite: the old key may still be needed to decrypt.
			return Secrets{}, false, fmt.Errorf("parse secrets file %s (fix or remove it): %w", path, err)
		}
		if err := tightenMode(path); err != nil {
			return Secrets{}, false, err
		}
	}

	created, err = s.fillMissing()
	if err != nil {
		return Secrets{}, false, err
	}
	if !created {
		return s, false, nil
	}
	out, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return Secrets{}, false, fmt.Errorf("encode secrets: %w", err)
	}
	if err := writeFileAtomic(path, append(out, '\n'), 0o600); err != nil {
		return Secrets{}, false, err
	}
	return s, true, nil
}

// GenerateSecrets returns a fresh set of random secrets.
func GenerateSecrets() (Secrets, error) {
	var s Secrets
	if _, err := s.fillMissing(); err != nil {
		return Secrets{}, err
	}
	return s, nil
}

// fillMissing generates every empty value and reports whether it did.
func (s *Secrets) fillMissing() (bool, error) {
	fields := []struct {
		v   *string
		gen func([]byte) string
	}{
		{&s.MasterToken, func(b []byte) string { return "qhr_" + base64.RawURLEncoding.EncodeToString(b) }},
		{&s.JWTSecret, hex.EncodeToString},
		{&s.HMACDefaultSecret, func(b []byte) string { return "whsec_" + base64.StdEncoding.EncodeToString(b) }},
		{&s.EncryptionKey, hex.EncodeToString},
	}
	changed := false
	for _, f := range fields {
		if *f.v != "" {
			continue
		}
		b := make([]byte, 32)
		if _, err := rand.Read(b); err != nil {
			return false, fmt.Errorf("generate secret: %w", err)
		}
		*f.v = f.gen(b)
		changed = true
	}
	return changed, nil
}

// ApplySecrets fills the secret settings still empty after Load; values from
// the file, environment or flags win over generated ones.
func (c *Config) ApplySecrets(s Secrets) {
	fill := func(dst *string, v string) {
		if *dst == "" {
			*dst = v
		}
	}
	fill(&c.Auth.MasterToken, s.MasterToken)
	fill(&c.Auth.JWTSecret, s.JWTSecret)
	fill(&c.HMAC.DefaultSecret, s.HMACDefaultSecret)
	fill(&c.Secrets.EncryptionKey, s.EncryptionKey)
}

// tightenMode makes a secrets file readable by its owner only, repairing a
// copy made with a loose umask instead of leaving it exposed.
func tightenMode(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("stat secrets file %s: %w", path, err)
	}
	if fi.Mode().Perm()&0o077 == 0 {
		return nil
	}
	if err := os.Chmod(path, 0o600); err != nil {
		return fmt.Errorf("restrict secrets file %s to 0600: %w", path, err)
	}
	return nil
}

// writeFileAtomic writes data to a temporary file in the same directory,
// syncs it and renames it over path, so a crash leaves the old file or the
// new one, never half of one.
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create directory %s: %w", dir, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }() // no-op after a successful rename
	if err := tmp.Chmod(perm); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // make the rename durable where the platform allows
		_ = d.Close()
	}
	return nil
}
