package harness

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// PrivatePostgres starts a PostgreSQL cluster of the scenarios' own on an
// ephemeral loopback port and returns its URL and how to stop it. Each
// scenario runs three instances with pools of their own, and scenarios run
// side by side: with a second copy of the suite beside this one, the
// shared server ran out of connections ("too many clients") and an instance
// failed to start. The cluster is disposable, so it runs without fsync.
//
// It needs PostgreSQL's server binaries (initdb, pg_ctl) and, when run as
// root as CI does, the postgres user to run them as.
func PrivatePostgres() (url string, stop func(), err error) {
	bin, err := postgresBin()
	if err != nil {
		return "", nil, err
	}
	dir, err := os.MkdirTemp("", "qhronos-partitions-pg-")
	if err != nil {
		return "", nil, err
	}
	run := func(args ...string) error {
		cmd := exec.Command(args[0], args[1:]...)
		if os.Geteuid() == 0 {
			// initdb and the server refuse to run as root.
			cmd = exec.Command("runuser", append([]string{"-u", "postgres", "--"}, args...)...)
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	cleanup := func() { _ = os.RemoveAll(dir) }
	if os.Geteuid() == 0 {
		if err := chownToPostgres(dir); err != nil {
			cleanup()
			return "", nil, err
		}
	}
	data := filepath.Join(dir, "data")
	if err := run(filepath.Join(bin, "initdb"), "-D", data, "-A", "trust", "-U", "postgres", "--no-sync"); err != nil {
		cleanup()
		return "", nil, err
	}
	port, err := freePort()
	if err != nil {
		cleanup()
		return "", nil, err
	}
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=off "+
		"-c synchronous_commit=off -c full_page_writes=off -c shared_buffers=64MB", port, dir)
	if err := run(filepath.Join(bin, "pg_ctl"), "-D", data, "-o", opts, "-l", filepath.Join(dir, "log"), "-w",
		"-t", "60", "start"); err != nil {
		cleanup()
		return "", nil, err
	}
	stop = func() {
		_ = run(filepath.Join(bin, "pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop")
		cleanup()
	}
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port), stop, nil
}

// postgresBin is the directory of the newest PostgreSQL server binaries
// installed (Debian keeps them outside PATH).
func postgresBin() (string, error) {
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		dir := strings.TrimSpace(string(out))
		if _, err := os.Stat(filepath.Join(dir, "initdb")); err == nil {
			return dir, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) > versionOf(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", fmt.Errorf("no PostgreSQL server binaries (initdb) found")
}

func versionOf(bin string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(bin)))
	return v
}

func chownToPostgres(dir string) error {
	u, err := user.Lookup("postgres")
	if err != nil {
		return fmt.Errorf("the postgres user, to run the private cluster as: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return os.Chown(dir, uid, gid)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}
