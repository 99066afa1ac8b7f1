// Package e2e runs the built qhronosd binary as real processes and breaks
// them the way production does: kill -9, SIGSTOP, SIGTERM under load, Redis
// flushed or gone, PostgreSQL connections cut. Every assertion is something
// an operator or a receiver would notice.
package e2e

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/qhronos/qhronos/internal/coordination/coordinationtest"
	"github.com/qhronos/qhronos/internal/qhronostest"
)

// binary is the qhronosd built once by TestMain.
var binary string

// readyTimeout bounds the harness's wait for a started server.
const readyTimeout = 60 * time.Second

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "qhronos-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: temp dir:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "qhronosd")
	build := exec.Command("go", "build", "-o", binary, "./cmd/qhronosd")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: go build ./cmd/qhronosd: %v\n%s\n", err, out)
		return 1
	}
	return m.Run()
}

// proc is one running qhronosd process.
type proc struct {
	t      testing.TB
	name   string
	cmd    *exec.Cmd
	url    string // http://127.0.0.1:port, empty when not known
	stderr *qhronostest.Buffer
	stdout *qhronostest.Buffer
	done   chan struct{}
	state  *os.ProcessState
}

// launch starts the binary in dir (a fresh temp dir when empty) with exactly
// env (plus PATH and HOME) and returns at once. The process is killed at
// cleanup and its output printed when the test failed.
func launch(t testing.TB, name, dir string, env map[string]string, args ...string) *proc {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	p := &proc{t: t, name: name, cmd: cmd, stderr: &qhronostest.Buffer{}, stdout: &qhronostest.Buffer{}, done: make(chan struct{})}
	if addr := env["QHRONOS_SERVER_ADDR"]; addr != "" {
		p.url = "http://" + addr
	}
	cmd.Stderr, cmd.Stdout = p.stderr, p.stdout
	coordinationtest.DieWithTest(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		_ = cmd.Wait()
		p.state = cmd.ProcessState
		close(p.done)
	}()
	t.Cleanup(func() {
		if p.running() {
			_ = cmd.Process.Signal(syscall.SIGCONT)
			_ = cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("---- %s stderr (last 6 KiB) ----\n%s", name, qhronostest.Tail(p.stderr.String(), 6<<10))
		}
	})
	return p
}

// start launches a server on a free loopback port and waits until /ready
// answers 200. A port taken by someone else between picking and binding it
// is retried with a fresh one.
func start(t testing.TB, name string, env map[string]string) *proc {
	t.Helper()
	for range 2 {
		p := startNoWait(t, name, env)
		err := p.awaitReady(readyTimeout)
		if err == nil {
			return p
		}
		if p.running() || !strings.Contains(p.stderr.String(), "server.addr") {
			t.Fatalf("%v", err)
		}
	}
	p := startNoWait(t, name, env)
	p.waitReady(readyTimeout)
	return p
}

// startNoWait launches a server on a free loopback port without waiting.
func startNoWait(t testing.TB, name string, env map[string]string) *proc {
	t.Helper()
	e := make(map[string]string, len(env)+1)
	for k, v := range env {
		e[k] = v
	}
	e["QHRONOS_SERVER_ADDR"] = qhronostest.FreeAddr(t)
	return launch(t, name, "", e, "serve")
}

func (p *proc) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// waitReady polls /ready until it answers 200; it fails the test when the
// process exits first or timeout passes.
func (p *proc) waitReady(timeout time.Duration) {
	p.t.Helper()
	if err := p.awaitReady(timeout); err != nil {
		p.t.Fatalf("%v", err)
	}
}

func (p *proc) awaitReady(timeout time.Duration) error {
	c := &http.Client{Timeout: time.Second}
	ready := qhronostest.Eventually(timeout, p.done, func() bool {
		res, err := c.Get(p.url + "/ready")
		if err != nil {
			return false
		}
		_ = res.Body.Close()
		return res.StatusCode == http.StatusOK
	})
	if ready {
		return nil
	}
	if !p.running() {
		return fmt.Errorf("%s exited before ready (%v):\n%s", p.name, p.state, qhronostest.Tail(p.stderr.String(), 4<<10))
	}
	return fmt.Errorf("%s not ready after %s:\n%s", p.name, timeout, qhronostest.Tail(p.stderr.String(), 4<<10))
}

// signal sends sig to the process.
func (p *proc) signal(sig syscall.Signal) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatalf("signal %v to %s: %v", sig, p.name, err)
	}
}

// kill9 SIGKILLs the process and waits for it to be gone.
func (p *proc) kill9() {
	p.t.Helper()
	p.signal(syscall.SIGKILL)
	p.waitExit(5 * time.Second)
}

// waitExit waits for the process to exit and returns its exit code (-1 when
// killed by a signal); it fails the test after timeout.
func (p *proc) waitExit(timeout time.Duration) int {
	p.t.Helper()
	select {
	case <-p.done:
		return p.state.ExitCode()
	case <-time.After(timeout):
		p.t.Fatalf("%s still running after %s:\n%s", p.name, timeout, qhronostest.Tail(p.stderr.String(), 4<<10))
		return 0
	}
}

// waitLog waits until the process's stderr contains s.
func (p *proc) waitLog(s string, timeout time.Duration) {
	p.t.Helper()
	eventually(p.t, timeout, fmt.Sprintf("%s logs %q", p.name, s), func() bool {
		return strings.Contains(p.stderr.String(), s)
	})
}

// eventually polls cond until it holds or timeout passes, then fails naming what.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	if !qhronostest.Eventually(timeout, nil, cond) {
		t.Fatalf("timed out after %s waiting until %s", timeout, what)
	}
}
