package readme

import (
	"context"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/config"
	"github.com/qhronos/qhronos/internal/qhronostest"
)

const productionPage = "docs/production.md"

// shBlocks returns every ```sh block of a page, indented ones (inside a
// list item) included, with the fence's indentation removed as a markdown
// renderer does.
func shBlocks(t *testing.T, page string) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, page))
	require.NoError(t, err)
	var out []string
	var cur *strings.Builder
	indent := ""
	for _, line := range strings.Split(string(raw), "\n") {
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case cur == nil && trimmed == "```sh":
			cur, indent = &strings.Builder{}, line[:len(line)-len(trimmed)]
		case cur != nil && trimmed == "```":
			out = append(out, cur.String())
			cur = nil
		case cur != nil:
			cur.WriteString(strings.TrimPrefix(line, indent) + "\n")
		}
	}
	return out
}

// blockWith is the one sh block of the page that contains marker.
func blockWith(t *testing.T, page, marker string) string {
	t.Helper()
	var found []string
	for _, b := range shBlocks(t, page) {
		if strings.Contains(b, marker) {
			found = append(found, b)
		}
	}
	require.Len(t, found, 1, "%s has one sh block with %q", page, marker)
	return found[0]
}

// runAsRoot runs a documented block with bash in dir, sudo being a no-op
// and /etc/qhronos being etc; it returns the output and the error.
func runAsRoot(t *testing.T, dir, etc, text string, env ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	script := "set -euo pipefail\nsudo() { \"$@\"; }\n" + strings.ReplaceAll(text, "/etc/qhronos", etc)
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// readEnvFile reads a systemd EnvironmentFile of KEY=VALUE lines.
func readEnvFile(t *testing.T, path string) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		k, v, ok := strings.Cut(line, "=")
		require.True(t, ok, "%s: %q is not KEY=VALUE", path, line)
		out[k] = v
	}
	return out
}

var secretNames = []string{"QHRONOS_AUTH_MASTER_TOKEN", "QHRONOS_AUTH_JWT_SECRET", "QHRONOS_HMAC_DEFAULT_SECRET",
	"QHRONOS_SECRETS_ENCRYPTION_KEY"}

// The production page's plain-binary recipe, run as written (sudo a no-op,
// /etc/qhronos a temporary directory): its settings and secrets files are
// readable by their owner only, the secrets command makes the four secrets a
// production server requires and refuses to replace them, the two files
// together are a valid production configuration whose proxy is trusted, the
// systemd unit reads exactly these two files and runs the binary where the
// recipe installs it, and a real server started with the generated secrets
// takes the generated master token.
func TestProductionRecipeWithoutDocker(t *testing.T) {
	t.Parallel()
	etc := filepath.Join(t.TempDir(), "qhronos")
	for _, marker := range []string{"QHRONOS_DATABASE_URL=", "openssl rand"} {
		out, err := runAsRoot(t, t.TempDir(), etc, blockWith(t, productionPage, marker))
		require.NoError(t, err, "the block with %q:\n%s", marker, out)
	}
	dir, err := os.Stat(etc)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), dir.Mode().Perm(), "/etc/qhronos")
	for _, f := range []string{"qhronos.env", "secrets.env"} {
		st, err := os.Stat(filepath.Join(etc, f))
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "%s is readable by its owner only", f)
	}

	settings, secrets := readEnvFile(t, filepath.Join(etc, "qhronos.env")), readEnvFile(t, filepath.Join(etc, "secrets.env"))
	require.Len(t, secrets, len(secretNames), "secrets.env: %v", secrets)
	seen := map[string]bool{}
	for _, name := range secretNames {
		require.Regexp(t, `^[0-9a-f]{64}$`, secrets[name], "%s: 32 random bytes in hex", name)
		require.False(t, seen[secrets[name]], "%s repeats another secret", name)
		seen[secrets[name]] = true
	}
	before, err := os.ReadFile(filepath.Join(etc, "secrets.env"))
	require.NoError(t, err)
	out, err := runAsRoot(t, t.TempDir(), etc, blockWith(t, productionPage, "openssl rand"))
	require.Error(t, err, "running the secrets command again must fail, not replace the secrets:\n%s", out)
	after, err := os.ReadFile(filepath.Join(etc, "secrets.env"))
	require.NoError(t, err)
	require.Equal(t, string(before), string(after), "the secrets survive a second run")

	known := map[string]bool{}
	for _, k := range config.Keys() {
		known[k.Env] = true
	}
	all := map[string]string{}
	for _, m := range []map[string]string{settings, secrets} {
		for k, v := range m {
			require.True(t, known[k], "%s is not a setting (docs/configuration.md lists them)", k)
			all[k] = v
		}
	}
	cfg, _, err := config.Load(nil, func(k string) string { return all[k] })
	require.NoError(t, err, "the two files are a valid configuration")
	require.True(t, cfg.Production(), "database.url is set")
	require.Contains(t, cfg.Server.TrustedProxies, netip.MustParsePrefix("127.0.0.1/32"), "the local proxy is trusted")

	unit, err := os.ReadFile(filepath.Join(root, "deploy", "systemd", "qhronos.service"))
	require.NoError(t, err)
	var files []string
	for _, m := range regexp.MustCompile(`(?m)^EnvironmentFile=(.*)$`).FindAllStringSubmatch(string(unit), -1) {
		files = append(files, m[1])
	}
	require.Equal(t, []string{"/etc/qhronos/qhronos.env", "/etc/qhronos/secrets.env"}, files,
		"the unit reads the files the recipe writes")
	require.Regexp(t, `(?m)^ExecStart=/usr/local/bin/qhronosd serve$`, string(unit))
	require.Contains(t, blockWith(t, productionPage, "make build"), "install -m 0755 bin/qhronosd /usr/local/bin/qhronosd",
		"the recipe installs the binary where the unit runs it")

	// The test's own database and Redis stand in for the recipe's URLs.
	extra := qhronostest.WithRedis(t)
	for _, name := range secretNames {
		extra = append(extra, name+"="+secrets[name])
	}
	srv := qhronostest.Start(t, qhronostest.Postgres, append(extra,
		"QHRONOS_SERVER_TRUSTED_PROXIES="+settings["QHRONOS_SERVER_TRUSTED_PROXIES"])...)
	srv.Token = secrets["QHRONOS_AUTH_MASTER_TOKEN"]
	require.Equal(t, 200, srv.Call(t, "GET", "/events", nil, nil), "the generated master token signs in")
}

// The production page's image commands, run as written with a docker that
// only records its arguments: the image is built under the registry's name
// and that same name is pushed, for the Helm chart's image.repository.
func TestProductionImageBuildAndPush(t *testing.T) {
	t.Parallel()
	bin := t.TempDir()
	log := filepath.Join(bin, "docker.log")
	require.NoError(t, os.WriteFile(filepath.Join(bin, "docker"),
		[]byte("#!/bin/sh\necho \"$*\" >> "+log+"\n"), 0o755))
	out, err := runAsRoot(t, root, t.TempDir(), blockWith(t, productionPage, "docker push"),
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	require.NoError(t, err, out)
	raw, err := os.ReadFile(log)
	require.NoError(t, err)
	calls := strings.Split(strings.TrimSpace(string(raw)), "\n")
	require.Len(t, calls, 2, "docker build, then docker push: %q", calls)
	build := regexp.MustCompile(`^build .*-t (\S+) \.$`).FindStringSubmatch(calls[0])
	require.NotNil(t, build, "docker %s", calls[0])
	require.Contains(t, calls[0], "--build-arg VERSION=v1.2.0", "the image is stamped with its version")
	require.Equal(t, "push "+build[1], calls[1], "the image pushed is the one built")
	require.True(t, strings.HasPrefix(build[1], "registry.example.com/qhronos:"), build[1])
}
