package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// credentials are what `qhronos login` stores: mode 0600 in the user's
// config directory (QHRONOS_CREDENTIALS names another file).
type credentials struct {
	Server string `json:"server"`
	Token  string `json:"token"`
}

func (a *app) credentialsPath() (string, error) {
	if p := a.getenv("QHRONOS_CREDENTIALS"); p != "" {
		return p, nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("find the user config directory (set QHRONOS_CREDENTIALS): %w", err)
	}
	return filepath.Join(dir, "qhronos", "credentials.json"), nil
}

func (a *app) loadCredentials() (credentials, error) {
	var c credentials
	path, err := a.credentialsPath()
	if err != nil {
		return c, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("read %s: %w", path, err)
	}
	return c, nil
}

// saveCredentials writes the file atomically with mode 0600 (its directory
// 0700), so the token is never readable by other users, not even briefly.
func (a *app) saveCredentials(c credentials) (string, error) {
	path, err := a.credentialsPath()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	b, _ := json.MarshalIndent(c, "", "  ")
	tmp, err := os.CreateTemp(filepath.Dir(path), ".credentials-*")
	if err != nil {
		return "", fmt.Errorf("write credentials: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		_ = tmp.Close()
		return "", fmt.Errorf("write credentials: %w", err)
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		_ = tmp.Close()
		return "", fmt.Errorf("write credentials: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("write credentials: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", fmt.Errorf("write credentials: %w", err)
	}
	return path, nil
}
