// Package qhronostest runs the real qhronosd binary for the tests of the
// SDK, the receiver kit and the CLI: built once per test process, started on
// a free loopback port with the embedded SQLite store or a fresh PostgreSQL
// schema, with short scheduler delays so deliveries happen within a second.
// Imported only by tests.
package qhronostest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/qhronos/qhronos/internal/coordination/coordinationtest"
	"github.com/qhronos/qhronos/internal/repository/repositorytest"
)

// Backend names a store.
type Backend string

// The two stores.
const (
	SQLite   Backend = "sqlite"
	Postgres Backend = "postgres"
)

// Backends lists both; tests run a subtest on each.
func Backends() []Backend { return []Backend{SQLite, Postgres} }

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

// Main runs the tests of a package and removes the built binary after.
func Main(m *testing.M) { os.Exit(Run(m)) }

// Run is Main for a TestMain with cleanup of its own: it returns the exit
// code instead of exiting.
func Run(m *testing.M) int {
	code := m.Run()
	if buildDir != "" {
		_ = os.RemoveAll(buildDir)
	}
	return code
}

// repoRoot is the module root, from this file's location.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Binary builds cmd/qhronosd once and returns its path.
func Binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "qhronostest-")
		if buildErr != nil {
			return
		}
		cmd := exec.Command("go", "build", "-o", filepath.Join(buildDir, "qhronosd"), "./cmd/qhronosd")
		cmd.Dir = repoRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/qhronosd: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(buildDir, "qhronosd")
}

// Server is one running qhronosd.
type Server struct {
	URL           string
	Token         string // the master token
	DefaultSecret string // hmac.default_secret
	Backend       Backend

	t      testing.TB
	addr   string
	env    []string
	dir    string
	mu     sync.Mutex
	cmd    *exec.Cmd
	done   chan struct{}
	stderr *Buffer
}

// Start runs a server on backend; extra are more QHRONOS_* settings. It
// returns once /ready answers 200 and stops the server at cleanup.
func Start(t testing.TB, backend Backend, extra ...string) *Server {
	t.Helper()
	s := &Server{t: t, Backend: backend, Token: RandomHex(t, 32), DefaultSecret: RandomHex(t, 32),
		addr: FreeAddr(t), dir: t.TempDir()}
	s.URL = "http://" + s.addr
	s.env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + s.dir,
		"QHRONOS_SERVER_ADDR=" + s.addr,
		"QHRONOS_SERVER_DATA_DIR=" + filepath.Join(s.dir, "data"),
		"QHRONOS_AUTH_MASTER_TOKEN=" + s.Token,
		"QHRONOS_AUTH_JWT_SECRET=" + RandomHex(t, 32),
		"QHRONOS_HMAC_DEFAULT_SECRET=" + s.DefaultSecret,
		"QHRONOS_SECRETS_ENCRYPTION_KEY=" + RandomHex(t, 32),
		"QHRONOS_SCHEDULER_MAX_SLEEP=100ms",
		"QHRONOS_SCHEDULER_DRAIN_TIMEOUT=3s",
		"QHRONOS_ACTIONS_ATTEMPT_TIMEOUT=3s",
		"QHRONOS_RETRY_INITIAL_BACKOFF=1s",
		"QHRONOS_RETRY_MAX_BACKOFF=1s",
		"QHRONOS_SERVER_SHUTDOWN_TIMEOUT=2s",
		"QHRONOS_ARCHIVAL_ENABLED=false",
		"QHRONOS_LOG_LEVEL=warn",
	}
	if backend == Postgres {
		s.env = append(s.env, "QHRONOS_DATABASE_URL="+repositorytest.MigratedPostgresSchema(t),
			"QHRONOS_OUTBOUND_ALLOW_CIDRS=127.0.0.0/8")
	}
	s.env = append(s.env, extra...)
	s.Token = masterToken(s.env)
	Binary(t)
	s.launchFirst()
	t.Cleanup(func() {
		s.Stop()
		if t.Failed() {
			t.Logf("---- qhronosd (%s) stderr ----\n%s", backend, Tail(s.stderr.String(), 6<<10))
		}
	})
	return s
}

// WithRedis returns the settings that put a server on the shared test Redis
// (QHRONOS_TEST_REDIS_URL) under a key prefix unique to the test, deleted at
// cleanup; without Redis the test fails in CI and is skipped elsewhere.
func WithRedis(t testing.TB) []string {
	t.Helper()
	_, prefix := coordinationtest.RedisClient(t)
	u := os.Getenv("QHRONOS_TEST_REDIS_URL")
	if u == "" {
		u = coordinationtest.DefaultRedisURL
	}
	return []string{"QHRONOS_REDIS_URL=" + u, "QHRONOS_REDIS_PREFIX=" + prefix}
}

// Peer starts another instance of the same deployment (same store, secrets
// and Redis) on its own port; extra settings come last and win. Only
// PostgreSQL deployments have peers.
func (s *Server) Peer(t testing.TB, extra ...string) *Server {
	t.Helper()
	if s.Backend != Postgres {
		t.Fatalf("a peer needs the PostgreSQL store")
	}
	p := &Server{t: t, Backend: s.Backend, Token: s.Token, DefaultSecret: s.DefaultSecret, addr: FreeAddr(t),
		dir: t.TempDir()}
	p.URL = "http://" + p.addr
	for _, kv := range s.env {
		switch {
		case strings.HasPrefix(kv, "QHRONOS_SERVER_ADDR="):
			kv = "QHRONOS_SERVER_ADDR=" + p.addr
		case strings.HasPrefix(kv, "QHRONOS_SERVER_DATA_DIR="):
			kv = "QHRONOS_SERVER_DATA_DIR=" + filepath.Join(p.dir, "data")
		case strings.HasPrefix(kv, "HOME="):
			kv = "HOME=" + p.dir
		}
		p.env = append(p.env, kv)
	}
	p.env = append(p.env, extra...)
	p.Token = masterToken(p.env)
	p.launchFirst()
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() {
			t.Logf("---- qhronosd peer stderr ----\n%s", Tail(p.stderr.String(), 6<<10))
		}
	})
	return p
}

// masterToken is the master token env gives the server: the last setting
// wins, so a test's own token (extra settings) is the one readiness asks
// with.
func masterToken(env []string) string {
	token := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "QHRONOS_AUTH_MASTER_TOKEN="); ok {
			token = v
		}
	}
	return token
}

// launchFirst launches a new server. FreeAddr's port was free when chosen,
// not necessarily when qhronosd binds it: another test process (a second
// copy of the suite) can take it in between. A bind refused for that gets a
// new port, before anyone has the server's URL.
func (s *Server) launchFirst() {
	s.t.Helper()
	for try := 1; ; try++ {
		if s.tryLaunch() {
			return
		}
		if try == 5 || !strings.Contains(s.stderr.String(), "address already in use") {
			s.t.Fatalf("qhronosd (%s) not ready:\n%s", s.Backend, Tail(s.stderr.String(), 4<<10))
		}
		old := "QHRONOS_SERVER_ADDR=" + s.addr
		s.addr = FreeAddr(s.t)
		s.URL = "http://" + s.addr
		for i, kv := range s.env {
			if kv == old {
				s.env[i] = "QHRONOS_SERVER_ADDR=" + s.addr
			}
		}
		s.stderr = nil // a fresh log for the next try
	}
}

func (s *Server) launch() {
	s.t.Helper()
	if !s.tryLaunch() {
		s.t.Fatalf("qhronosd (%s) not ready:\n%s", s.Backend, Tail(s.stderr.String(), 4<<10))
	}
}

// tryLaunch starts qhronosd and reports whether it became ready.
func (s *Server) tryLaunch() bool {
	s.t.Helper()
	s.mu.Lock()
	cmd := exec.Command(filepath.Join(buildDir, "qhronosd"), "serve")
	cmd.Dir, cmd.Env = s.dir, s.env
	if s.stderr == nil {
		s.stderr = &Buffer{}
	}
	cmd.Stderr, cmd.Stdout = s.stderr, s.stderr
	coordinationtest.DieWithTest(cmd)
	if err := cmd.Start(); err != nil {
		s.mu.Unlock()
		s.t.Fatalf("start qhronosd: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()
	c := &http.Client{Timeout: time.Second}
	// A fresh schema runs every migration (partitioned tables, triggers)
	// before /ready: on a busy 2-core machine that passed 15 s, and the
	// cleanup's SIGTERM then showed as "apply migrations: context
	// canceled". A dead process ends the wait at once anyway.
	return Eventually(90*time.Second, done, func() bool {
		return s.answers(c, "/ready", "") && s.answers(c, "/events?limit=1", s.Token)
	})
}

// answers reports whether GET path, with token as the bearer when set,
// answers 200. The authenticated ask tells this server from another suite's
// that took the port after FreeAddr chose it (this one then cannot bind it,
// while the other answers /ready): only this one knows the token.
func (s *Server) answers(c *http.Client, path, token string) bool {
	req, err := http.NewRequest(http.MethodGet, s.URL+path, nil)
	if err != nil {
		return false
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := c.Do(req)
	if err != nil {
		return false
	}
	_ = res.Body.Close()
	return res.StatusCode == http.StatusOK
}

// Stop ends the server (SIGTERM, then SIGKILL after 10 s) and waits.
func (s *Server) Stop() {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// Restart stops the server and starts it again on the same address and
// store.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	s.launch()
}

// Eventually polls cond every 25 ms until it holds (true), timeout passes or
// stop is closed (false).
func Eventually(timeout time.Duration, stop <-chan struct{}, cond func() bool) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-tick.C:
		case <-stop:
			return cond()
		case <-deadline.C:
			return cond()
		}
	}
	return true
}

// Wait fails the test unless cond holds within timeout.
func Wait(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Eventually(timeout, nil, cond) {
		t.Fatalf("timed out after %s waiting until %s", timeout, what)
	}
}

// Context is a context bounded by d, cancelled at cleanup.
func Context(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// RandomHex is n random bytes in hex.
func RandomHex(t testing.TB, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatalf("random: %v", err)
	}
	return hex.EncodeToString(b)
}

// FreeAddr returns a loopback address whose port was free a moment ago.
func FreeAddr(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("pick a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().String()
}

// Buffer is an output stream that tests read while a process or a command
// still writes it.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Tail is the last n bytes of s, marked when cut.
func Tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
