package sdk_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/qhronostest"
	"github.com/qhronos/qhronos/internal/repository/repositorytest"
)

func TestMain(m *testing.M) { qhronostest.Main(m) }

// need finds a tool; a missing one fails the run in CI and skips elsewhere.
func need(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is required in CI (.ci/run installs it): %v", tool, err)
			}
			t.Skipf("%s not installed, skipping (set CI=1 to make this a failure): %v", tool, err)
		}
	}
}

// baseEnv is this process's environment without a backend switch of its own,
// plus the qhronosd binary the suites start (built once for this package).
func baseEnv(t *testing.T) []string {
	env := []string{"QHRONOS_BIN=" + qhronostest.Binary(t)}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "QHRONOS_SDK_") && !strings.HasPrefix(kv, "QHRONOS_BIN=") {
			env = append(env, kv)
		}
	}
	return env
}

// postgresEnv switches a suite's server to a fresh PostgreSQL schema and a
// unique Redis key prefix, both removed at cleanup.
func postgresEnv(t *testing.T) []string {
	env := []string{"QHRONOS_SDK_DATABASE_URL=" + repositorytest.MigratedPostgresSchema(t)}
	for _, kv := range qhronostest.WithRedis(t) {
		env = append(env, strings.Replace(kv, "QHRONOS_REDIS_", "QHRONOS_SDK_REDIS_", 1))
	}
	return env
}

// run runs a command in dir and fails the test with its output when it fails.
func run(t *testing.T, dir string, env []string, timeout time.Duration, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s (in sdk/%s): %v\n%s", name, strings.Join(args, " "), dir, err, qhronostest.Tail(string(out), 24<<10))
	}
	t.Logf("%s %s: %s", name, strings.Join(args, " "), lastLines(string(out), 8))
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// The TypeScript SDK's suite (contract, the client against qhronosd on
// SQLite, the README's examples from a packed tarball), then its server
// tests once more on PostgreSQL + Redis.
func TestTypeScript(t *testing.T) {
	t.Parallel()
	need(t, "node", "npm")
	env := baseEnv(t)
	run(t, "typescript", env, 5*time.Minute, "npm", "ci", "--no-audit", "--no-fund", "--prefer-offline")
	run(t, "typescript", env, 8*time.Minute, "npm", "test")
	run(t, "typescript", append(env, postgresEnv(t)...), 5*time.Minute, "npm", "run", "test:server")
}

// The Python SDK's suite on SQLite, then its server tests on PostgreSQL +
// Redis.
func TestPython(t *testing.T) {
	t.Parallel()
	need(t, "python3")
	env := append(baseEnv(t), "PYTHONDONTWRITEBYTECODE=1")
	run(t, "python", env, 8*time.Minute, "python3", "-m", "unittest")
	run(t, "python", append(env, postgresEnv(t)...), 5*time.Minute, "python3", "-m", "unittest", "tests.test_server")
}

// The Python SDK installs with no package index: its README's pip line, run
// as written (from the directory that holds the clone, named qhronos) in a
// fresh virtual environment with --no-index, must build it with the standard
// library alone, and the installed package must import from elsewhere.
func TestPythonInstallsWithoutIndex(t *testing.T) {
	t.Parallel()
	need(t, "python3")
	readme, err := os.ReadFile("python/README.md")
	require.NoError(t, err)
	line := regexp.MustCompile(`(?m)^pip install [^\n#]*`).FindString(string(readme))
	require.Contains(t, line, "--no-index", "the README's install line needs no index")

	work := t.TempDir()
	repo, err := filepath.Abs("..")
	require.NoError(t, err)
	require.NoError(t, os.Symlink(repo, filepath.Join(work, "qhronos")))
	venv := filepath.Join(work, "venv")
	run(t, ".", os.Environ(), 2*time.Minute, "python3", "-m", "venv", venv)
	env := append(os.Environ(), "PATH="+filepath.Join(venv, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"),
		"PIP_DISABLE_PIP_VERSION_CHECK=1", "PIP_NO_CACHE_DIR=1", "PYTHONDONTWRITEBYTECODE=1")
	run(t, work, env, 3*time.Minute, "bash", "-c", "set -eu; "+line)

	out, err := exec.Command(filepath.Join(venv, "bin", "python"), "-c",
		"import qhronos, importlib.metadata as m; print(qhronos.__file__); print(m.version('qhronos')); print(callable(qhronos.verify_delivery))").
		CombinedOutput()
	require.NoError(t, err, "%s", out)
	lines := strings.Fields(string(out))
	require.Len(t, lines, 3, "%s", out)
	require.True(t, strings.HasPrefix(lines[0], venv), "qhronos is imported from the virtual environment, not the clone: %s", lines[0])
	require.Equal(t, []string{"0.1.0", "True"}, lines[1:])
}
