// Package brokertest starts real message brokers on loopback for tests:
// nats-server (with JetStream), redis-server and a private RabbitMQ node,
// each on ephemeral ports with its data in a temporary directory, and
// franz-go's in-process kfake cluster for Kafka (Kafka has no Debian
// package). Nothing here touches a broker on its standard port.
package brokertest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// StartDeadline bounds how long a broker may take to accept connections;
// generous, because CI machines are slow and RabbitMQ boots an Erlang VM.
const StartDeadline = 120 * time.Second

// FreePort returns a loopback port nothing listens on now.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Need skips the test when bin is missing and CI is unset;
// in CI (.ci/run installs the brokers) a missing broker
// fails instead of skipping.
func Need(t testing.TB, bin string) string {
	t.Helper()
	if p, err := exec.LookPath(bin); err == nil {
		return p
	}
	for _, dir := range []string{"/usr/sbin", "/usr/lib/rabbitmq/bin"} {
		p := filepath.Join(dir, bin)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s is not installed (CI is set: .ci/run installs it)", bin)
	}
	t.Skipf("%s is not installed", bin)
	return ""
}

// Process is a broker process started by a test.
type Process struct {
	Port int
	cmd  *exec.Cmd
	out  *syncBuffer
	mu   sync.Mutex
	name string
	args []string
	env  []string
	// ready is what the process prints once it serves; until then a
	// connection to Port could reach another process that took the port.
	ready string
}

// syncBuffer collects a process's output while tests read it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func start(name string, port int, ready string, env []string, args ...string) (*Process, error) {
	p := &Process{Port: port, name: name, args: args, env: env, ready: ready}
	return p, p.Start()
}

// Start (re)starts the process and waits until its port accepts connections.
func (p *Process) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.out = &syncBuffer{}
	cmd := exec.Command(p.name, p.args...)
	cmd.Env = append(os.Environ(), p.env...)
	cmd.Stdout, cmd.Stderr = p.out, p.out
	// Its own process group, so Stop ends its children (Erlang's) too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	p.cmd = cmd
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	deadline := time.Now().Add(StartDeadline)
	for {
		if p.ready == "" || strings.Contains(p.out.String(), p.ready) {
			c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(p.Port), time.Second)
			if err == nil {
				_ = c.Close()
				return nil
			}
		}
		select {
		case <-exited:
			return fmt.Errorf("%s exited before listening on %d: %s", filepath.Base(p.name), p.Port, p.out.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.stopLocked()
			return fmt.Errorf("%s did not listen on %d within %s: %s", filepath.Base(p.name), p.Port, StartDeadline, p.out.String())
		}
	}
}

// Stop kills the process group and waits until the port is free.
func (p *Process) Stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopLocked()
}

func (p *Process) stopLocked() {
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	p.cmd = nil
	deadline := time.Now().Add(StartDeadline)
	for time.Now().Before(deadline) {
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p.Port))
		if err == nil {
			_ = l.Close()
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// NATS starts nats-server with JetStream on a free port, requiring user
// "qhronos" with password "nats-secret"; it is stopped at cleanup.
func NATS(t testing.TB) *Process {
	t.Helper()
	bin := Need(t, "nats-server")
	dir := t.TempDir()
	var p *Process
	var err error
	for try := 0; try < 3; try++ {
		port := FreePort(t)
		p, err = start(bin, port, "Server is ready", nil, "-js", "-a", "127.0.0.1", "-p", strconv.Itoa(port), "-sd", dir,
			"--user", "qhronos", "--pass", "nats-secret", "-m", "0")
		if err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("start nats-server: %v", err)
	}
	t.Cleanup(p.Stop)
	return p
}

// Redis starts a private redis-server on a free port requiring password
// "redis-secret", without persistence; it is stopped at cleanup.
func Redis(t testing.TB) *Process {
	t.Helper()
	bin := Need(t, "redis-server")
	dir := t.TempDir()
	var p *Process
	var err error
	for try := 0; try < 3; try++ {
		port := FreePort(t)
		p, err = start(bin, port, "Ready to accept connections", nil, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
			"--appendonly", "no", "--dir", dir, "--requirepass", "redis-secret", "--daemonize", "no")
		if err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("start redis-server: %v", err)
	}
	t.Cleanup(p.Stop)
	return p
}

var rabbit struct {
	once sync.Once
	node *Rabbit
	err  error
}

// Rabbit is a private RabbitMQ node: its own node name, AMQP, distribution
// and epmd ports, data and logs in a temporary directory, no plugins. The
// guest user (loopback only, RabbitMQ's default) is its account.
type Rabbit struct {
	*Process
	epmd *Process
	dir  string
}

// RabbitMQ returns the node shared by the tests of this binary, started on
// first use (booting one takes seconds); StopRabbitMQ ends it from TestMain.
func RabbitMQ(t testing.TB) *Rabbit {
	t.Helper()
	// Debian's /usr/sbin/rabbitmq-server is a wrapper that, run as root,
	// switches to the rabbitmq user and the system node's directories; the
	// server script itself runs as the test does, with the test's paths.
	bin := "/usr/lib/rabbitmq/bin/rabbitmq-server"
	if _, err := os.Stat(bin); err != nil {
		bin = Need(t, "rabbitmq-server")
	}
	epmdBin := Need(t, "epmd")
	rabbit.once.Do(func() {
		dir, err := os.MkdirTemp("", "qhronos-rabbitmq-")
		if err != nil {
			rabbit.err = err
			return
		}
		for _, sub := range []string{"mnesia", "log", "home"} {
			if err := os.MkdirAll(filepath.Join(dir, sub), 0o700); err != nil {
				rabbit.err = err
				return
			}
		}
		plugins := filepath.Join(dir, "enabled_plugins")
		if err := os.WriteFile(plugins, []byte("[].\n"), 0o600); err != nil {
			rabbit.err = err
			return
		}
		epmdPort, port, distPort := FreePort(t), FreePort(t), FreePort(t)
		// A private epmd in the foreground, so it ends with the node.
		epmd, err := start(epmdBin, epmdPort, "", nil, "-port", strconv.Itoa(epmdPort), "-address", "127.0.0.1")
		if err != nil {
			rabbit.err = fmt.Errorf("start epmd: %w", err)
			return
		}
		env := []string{
			"HOME=" + filepath.Join(dir, "home"),
			"RABBITMQ_NODENAME=qhronostest" + strconv.Itoa(port) + "@localhost",
			"RABBITMQ_NODE_IP_ADDRESS=127.0.0.1",
			"RABBITMQ_NODE_PORT=" + strconv.Itoa(port),
			"RABBITMQ_DIST_PORT=" + strconv.Itoa(distPort),
			"ERL_EPMD_PORT=" + strconv.Itoa(epmdPort),
			"RABBITMQ_MNESIA_BASE=" + filepath.Join(dir, "mnesia"),
			"RABBITMQ_LOG_BASE=" + filepath.Join(dir, "log"),
			"RABBITMQ_ENABLED_PLUGINS_FILE=" + plugins,
			"RABBITMQ_PID_FILE=" + filepath.Join(dir, "rabbit.pid"),
			"RABBITMQ_CONFIG_FILE=" + filepath.Join(dir, "rabbitmq"),
		}
		p, err := start(bin, port, "completed with", env)
		if err != nil {
			epmd.Stop()
			rabbit.err = fmt.Errorf("start rabbitmq-server: %w", err)
			return
		}
		rabbit.node = &Rabbit{Process: p, epmd: epmd, dir: dir}
	})
	if rabbit.err != nil {
		t.Fatalf("rabbitmq: %v", rabbit.err)
	}
	return rabbit.node
}

// StopRabbitMQ stops the shared node, if one was started.
func StopRabbitMQ() {
	if rabbit.node == nil {
		return
	}
	rabbit.node.Stop()
	rabbit.node.epmd.Stop()
	_ = os.RemoveAll(rabbit.node.dir)
}

// WaitFor polls ok until it holds or StartDeadline passes.
func WaitFor(t testing.TB, what string, ok func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), StartDeadline)
	defer cancel()
	for !ok() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
