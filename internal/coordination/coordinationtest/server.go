package coordinationtest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Bounds of StartRedisServer's waits: a server that is not answering within
// serverReadyTimeout has failed; a port taken between picking it and binding
// it is retried a few times with a fresh port.
const (
	serverReadyTimeout = 60 * time.Second
	serverPollInterval = 20 * time.Millisecond
	portAttempts       = 5
)

// StartRedisServer starts a private redis-server on an ephemeral loopback
// port, without persistence, for fault tests that flush, stop or restart it.
// stop kills it; restart starts a fresh, empty server on the same port (stop
// first if it runs). The server is killed at cleanup. Without redis-server
// on PATH the test is skipped (failed when CI is set).
func StartRedisServer(t testing.TB) (addr string, stop func(), restart func()) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		Unavailable(t, "redis-server not on PATH: %v", err)
	}
	s := &server{t: t, bin: bin, dir: t.TempDir()}
	var lastErr error
	for range portAttempts {
		port, err := freePort()
		if err != nil {
			t.Fatalf("pick a free port: %v", err)
		}
		s.port = port
		if lastErr = s.start(); lastErr == nil {
			break
		}
	}
	if lastErr != nil {
		t.Fatalf("start redis-server: %v", lastErr)
	}
	t.Cleanup(s.stop)
	restart = func() {
		t.Helper()
		s.stop()
		var err error
		for range portAttempts { // the old socket may linger for a moment
			if err = s.start(); err == nil {
				return
			}
		}
		t.Fatalf("restart redis-server on port %d: %v", s.port, err)
	}
	return s.addr(), s.stop, restart
}

type server struct {
	t    testing.TB
	bin  string
	dir  string
	port int
	// extra are further redis-server arguments (cluster mode).
	extra []string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
}

func (s *server) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// start launches redis-server and waits until it answers as itself, or reports
// why not (typically the port was taken: the process exits at once).
func (s *server) start() error {
	cmd := exec.Command(s.bin,
		"--port", strconv.Itoa(s.port),
		"--bind", "127.0.0.1",
		"--save", "",
		"--appendonly", "no",
		"--dir", s.dir,
		"--protected-mode", "no",
	)
	cmd.Args = append(cmd.Args, s.extra...)
	DieWithTest(cmd)
	var out strings.Builder
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()

	deadline := time.NewTimer(serverReadyTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(serverPollInterval)
	defer tick.Stop()
	for {
		if probe(s.addr(), cmd.Process.Pid) == nil {
			s.mu.Lock()
			s.cmd, s.exited = cmd, exited
			s.mu.Unlock()
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("redis-server exited: %s", lastLines(out.String()))
		case <-deadline.C:
			_ = cmd.Process.Kill()
			<-exited
			return fmt.Errorf("redis-server not ready after %s", serverReadyTimeout)
		case <-tick.C:
		}
	}
}

// stop kills the server and waits for it to exit; stopping twice is fine.
func (s *server) stop() {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.cmd, s.exited = nil, nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	<-exited
}

// probe asks the server at addr for its process id and reports whether it
// answers as pid, so a server that grabbed our port first is never mistaken
// for ours.
func probe(addr string, pid int) error {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write([]byte("INFO server\r\n")); err != nil {
		return err
	}
	r := bufio.NewReader(conn)
	header, err := r.ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(header, "$") {
		return errors.New("unexpected reply " + strconv.Quote(header))
	}
	n, err := strconv.Atoi(strings.TrimSpace(header[1:]))
	if err != nil {
		return fmt.Errorf("bulk length: %w", err)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return err
	}
	want := "process_id:" + strconv.Itoa(pid) + "\r\n"
	if !strings.Contains(string(body), want) {
		return errors.New("another server answers on " + addr)
	}
	return nil
}

// freePort asks the kernel for a free loopback port. Another process may
// take it before redis-server binds it; StartRedisServer retries then.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func lastLines(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	return strings.Join(lines, " | ")
}
