package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// LockFileName is the file in the data directory that carries the lock.
const LockFileName = "qhronos.lock"

// errLocked is what the platform lock returns when another holder exists.
var errLocked = errors.New("lock held elsewhere")

// LockDataDir creates dir (0700) if needed and takes an exclusive, advisory
// lock on dir/qhronos.lock, so two embedded servers never share one SQLite
// file. The lock belongs to the open file, not the process: a second
// LockDataDir on the same dir fails even within one process, and the kernel
// drops it when the process dies (no stale lock after kill -9). release
// unlocks; it is safe to call more than once.
func LockDataDir(dir string) (release func() error, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create data directory %s: %w", dir, err)
	}
	path := filepath.Join(dir, LockFileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock file in data directory %s: %w", dir, err)
	}
	if err := lockFile(f); err != nil {
		holder := ""
		if b, rerr := os.ReadFile(path); rerr == nil {
			if pid := strings.TrimSpace(string(b)); pid != "" {
				holder = " (pid " + pid + ")"
			}
		}
		_ = f.Close()
		if errors.Is(err, errLocked) {
			return nil, fmt.Errorf("data directory %s is in use by another qhronosd process%s; stop it or choose another data directory", dir, holder)
		}
		return nil, fmt.Errorf("lock data directory %s: %w", dir, err)
	}
	// The pid is only a hint for the message above; the lock is what counts.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}

	var once sync.Once
	var releaseErr error
	return func() error {
		once.Do(func() {
			uerr := unlockFile(f)
			cerr := f.Close()
			if err := errors.Join(uerr, cerr); err != nil {
				releaseErr = fmt.Errorf("release data directory %s: %w", dir, err)
			}
		})
		return releaseErr
	}, nil
}
