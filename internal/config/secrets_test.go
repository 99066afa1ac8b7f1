package config

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestEnsureSecretsGeneratesOnceAndReloads(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()

	first, created, err := EnsureSecrets(dir)
	require.NoError(t, err)
	require.True(t, created, "first start generates")

	fi, err := os.Stat(filepath.Join(dir, "secrets.json"))
	require.NoError(t, err)
	if got, want := fi.Mode().Perm(), os.FileMode(0o600); got != want {
		t.Errorf("secrets.json mode: got %o, want %o", got, want)
	}

	values := []string{first.MasterToken, first.JWTSecret, first.HMACDefaultSecret, first.EncryptionKey}
	seen := map[string]bool{}
	for i, v := range values {
		if len(v) < MinSecretBytes {
			t.Errorf("secret %d: got %d bytes, want >= %d", i, len(v), MinSecretBytes)
		}
		if seen[v] {
			t.Errorf("secret %d repeats another", i)
		}
		seen[v] = true
	}
	require.True(t, strings.HasPrefix(first.HMACDefaultSecret, "whsec_"))
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(first.HMACDefaultSecret, "whsec_"))
	require.NoError(t, err)
	if got, want := len(key), 32; got != want {
		t.Errorf("hmac key: got %d bytes, want %d", got, want)
	}

	second, created, err := EnsureSecrets(dir)
	require.NoError(t, err)
	require.False(t, created, "a restart reuses the file")
	require.Equal(t, first, second, "secrets must be stable across restarts")

	other, _, err := EnsureSecrets(t.TempDir())
	require.NoError(t, err)
	require.NotEqual(t, first.MasterToken, other.MasterToken, "each data dir gets its own secrets")

	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	if got, want := len(entries), 1; got != want {
		t.Errorf("files in data dir: got %d, want %d (no temp files left behind)", got, want)
	}
}

func TestEnsureSecretsFillsOnlyMissingValues(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mine := strings.Repeat("z", 40)
	require.NoError(t, os.WriteFile(SecretsPath(dir), []byte(`{"master_token":"`+mine+`"}`), 0o644))

	s, created, err := EnsureSecrets(dir)
	require.NoError(t, err)
	require.True(t, created)
	if got, want := s.MasterToken, mine; got != want {
		t.Errorf("master token: got %q, want the existing %q", got, want)
	}
	require.NotEmpty(t, s.EncryptionKey)
	fi, err := os.Stat(SecretsPath(dir))
	require.NoError(t, err)
	if got, want := fi.Mode().Perm(), os.FileMode(0o600); got != want {
		t.Errorf("rewritten secrets.json mode: got %o, want %o", got, want)
	}
}

func TestEnsureSecretsTightensLooseMode(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, _, err := EnsureSecrets(dir)
	require.NoError(t, err)
	require.NoError(t, os.Chmod(SecretsPath(dir), 0o644))

	_, created, err := EnsureSecrets(dir)
	require.NoError(t, err)
	require.False(t, created)
	fi, err := os.Stat(SecretsPath(dir))
	require.NoError(t, err)
	if got, want := fi.Mode().Perm(), os.FileMode(0o600); got != want {
		t.Errorf("secrets.json mode: got %o, want %o", got, want)
	}
}

func TestEnsureSecretsRefusesCorruptFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(SecretsPath(dir), []byte("{not json"), 0o600))

	_, _, err := EnsureSecrets(dir)
	require.Error(t, err)
	if !strings.Contains(err.Error(), SecretsPath(dir)) {
		t.Errorf("got %q, want it to name the file", err)
	}
	data, err := os.ReadFile(SecretsPath(dir))
	require.NoError(t, err)
	if got, want := string(data), "{not json"; got != want {
		t.Errorf("corrupt file was overwritten: got %q, want %q", got, want)
	}
}

func TestApplySecrets(t *testing.T) {
	t.Parallel()
	s, err := GenerateSecrets()
	require.NoError(t, err)

	c := Default()
	c.HMAC.DefaultSecret = "configured-by-operator-0123456789abcdef"
	c.ApplySecrets(s)
	got := []string{c.Auth.MasterToken, c.Auth.JWTSecret, c.HMAC.DefaultSecret, c.Secrets.EncryptionKey}
	want := []string{s.MasterToken, s.JWTSecret, "configured-by-operator-0123456789abcdef", s.EncryptionKey}
	require.Equal(t, want, got, "configured values win, generated ones fill the gaps")

	// Generated secrets satisfy the production rules too.
	p := Default()
	p.Database.URL = "postgres://h/db"
	p.ApplySecrets(s)
	require.NoError(t, p.Validate())
}

func TestSecretsNeverPrint(t *testing.T) {
	t.Parallel()
	s, err := GenerateSecrets()
	require.NoError(t, err)
	for _, out := range []string{fmt.Sprint(s), fmt.Sprintf("%v %+v %#v %s", s, s, s, s)} {
		if strings.Contains(out, s.MasterToken) || strings.Contains(out, s.EncryptionKey) {
			t.Errorf("formatted Secrets leaked a value: %q", out)
		}
	}
}
