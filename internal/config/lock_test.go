package config

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLockDataDirIsExclusive(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "nested", "data")

	release, err := LockDataDir(dir)
	require.NoError(t, err)
	fi, err := os.Stat(dir)
	require.NoError(t, err)
	if got, want := fi.Mode().Perm(), os.FileMode(0o700); got != want {
		t.Errorf("data dir mode: got %o, want %o", got, want)
	}

	// A second holder, even in this process (fresh file descriptor), is refused.
	_, err = LockDataDir(dir)
	require.Error(t, err)
	if !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "in use by another qhronosd process") {
		t.Errorf("second lock: got %q, want it to name %s and say it is in use", err, dir)
	}

	// Another directory is independent.
	releaseOther, err := LockDataDir(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, releaseOther())

	require.NoError(t, release())
	require.NoError(t, release(), "release is idempotent")

	again, err := LockDataDir(dir)
	require.NoError(t, err, "the lock is free after release")
	require.NoError(t, again())
}

func TestLockDataDirUnwritable(t *testing.T) {
	t.Parallel()
	// A path below a regular file can never be created, even by root.
	file := filepath.Join(t.TempDir(), "not-a-dir")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	dir := filepath.Join(file, "data")

	_, err := LockDataDir(dir)
	require.Error(t, err)
	if !strings.Contains(err.Error(), dir) {
		t.Errorf("got %q, want it to name %s", err, dir)
	}
}

func TestLockDataDirReadOnly(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		t.Skip("root ignores directory permissions; TestLockDataDirUnwritable covers the error path")
	}
	dir := filepath.Join(t.TempDir(), "ro")
	require.NoError(t, os.Mkdir(dir, 0o500))
	t.Cleanup(func() { _ = os.Chmod(dir, 0o700) })

	_, err := LockDataDir(dir)
	require.Error(t, err)
	if !strings.Contains(err.Error(), dir) {
		t.Errorf("got %q, want it to name %s", err, dir)
	}
}

// lockHelperEnv makes the test binary act as a second qhronosd process.
const lockHelperEnv = "QHRONOS_TEST_LOCK_HELPER_DIR"

func TestLockHelperProcess(t *testing.T) {
	dir := os.Getenv(lockHelperEnv)
	if dir == "" {
		t.Skip("helper for TestLockDataDirAcrossProcesses")
	}
	release, err := LockDataDir(dir)
	if err != nil {
		fmt.Print("LOCK ERROR: ", err)
		return
	}
	_ = release()
	fmt.Print("LOCKED")
}

func TestLockDataDirAcrossProcesses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tryFromOtherProcess := func() string {
		cmd := exec.Command(os.Args[0], "-test.run=^TestLockHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), lockHelperEnv+"="+dir)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
		return string(out)
	}

	release, err := LockDataDir(dir)
	require.NoError(t, err)
	out := tryFromOtherProcess()
	if !strings.Contains(out, "LOCK ERROR") || !strings.Contains(out, "(pid "+strconv.Itoa(os.Getpid())+")") {
		t.Errorf("second process: got %q, want a lock error naming our pid", out)
	}

	require.NoError(t, release())
	if out := tryFromOtherProcess(); !strings.Contains(out, "LOCKED") {
		t.Errorf("after release: got %q, want the other process to get the lock", out)
	}
}
