package e2e

import (
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/qhronostest"
)

var bannerURL = regexp.MustCompile(`is running at (http://\S+)`)

// embeddedEnv is "no config at all" — unless the default port is taken by
// something else on this shared machine, then only the address is moved.
func embeddedEnv(t *testing.T) map[string]string {
	t.Helper()
	env := map[string]string{}
	if conn, err := net.DialTimeout("tcp", "127.0.0.1:8080", 200*time.Millisecond); err == nil {
		_ = conn.Close()
		env["QHRONOS_SERVER_ADDR"] = qhronostest.FreeAddr(t)
		t.Logf("127.0.0.1:8080 is in use on this machine; using %s", env["QHRONOS_SERVER_ADDR"])
	}
	return env
}

// startEmbedded runs qhronosd with no arguments in dir and waits for
// /health, which must answer within 5 s of the start.
func startEmbedded(t *testing.T, name, dir string, env map[string]string) *proc {
	t.Helper()
	began := time.Now()
	p := launch(t, name, dir, env)
	eventually(t, 5*time.Second, name+" prints its address", func() bool {
		require.True(t, p.running(), "%s exited:\n%s", name, p.stderr.String())
		return bannerURL.MatchString(p.stderr.String())
	})
	p.url = bannerURL.FindStringSubmatch(p.stderr.String())[1]
	hc := &http.Client{Timeout: time.Second}
	eventually(t, 5*time.Second-time.Since(began), name+" answers /health", func() bool {
		res, err := hc.Get(p.url + "/health")
		if err != nil {
			return false
		}
		_ = res.Body.Close()
		return res.StatusCode == http.StatusOK
	})
	return p
}

// The embedded default: no config in a fresh directory serves /health within
// 5 s, prints the master token once, keeps secrets in data/secrets.json
// (0600), and refuses a second process on the same data directory.
func TestEmbeddedFirstStart(t *testing.T) {
	dir := t.TempDir()
	env := embeddedEnv(t)

	p := startEmbedded(t, "first", dir, env)
	secretsPath := filepath.Join(dir, "data", "secrets.json")
	st, err := os.Stat(secretsPath)
	require.NoError(t, err, "secrets file")
	if got, want := st.Mode().Perm(), os.FileMode(0o600); got != want {
		t.Errorf("%s mode: got %o, want %o", secretsPath, got, want)
	}
	raw, err := os.ReadFile(secretsPath)
	require.NoError(t, err)
	var token string
	if m := regexp.MustCompile(`"master_token"\s*:\s*"([^"]+)"`).FindSubmatch(raw); m != nil {
		token = string(m[1])
	}
	require.NotEmpty(t, token, "master_token in %s", secretsPath)
	if got := strings.Count(p.stderr.String(), "Master token (shown once"); got != 1 || !strings.Contains(p.stderr.String(), token) {
		t.Errorf("first start should print the master token once under one heading, got %d headings:\n%s", got, p.stderr.String())
	}
	if !strings.Contains(p.stderr.String(), secretsPath) && !strings.Contains(p.stderr.String(), filepath.Join("data", "secrets.json")) {
		t.Errorf("first start does not name the secrets file:\n%s", p.stderr.String())
	}

	second := launch(t, "second", dir, env)
	if code := second.waitExit(10 * time.Second); code != 1 {
		t.Errorf("second process on the same data dir: exit %d, want 1", code)
	}
	if s := second.stderr.String(); !strings.Contains(s, "data") || !strings.Contains(s, "in use") {
		t.Errorf("second process should name the data directory in use, said:\n%s", s)
	}

	p.signal(syscall.SIGTERM)
	require.Equal(t, 0, p.waitExit(10*time.Second), "exit code after SIGTERM")

	again := startEmbedded(t, "restart", dir, env)
	if strings.Contains(again.stderr.String(), token) {
		t.Errorf("second start printed the master token again:\n%s", again.stderr.String())
	}
	req, _ := http.NewRequest("GET", again.url+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Errorf("GET /events with the printed master token after restart: %d, want 200", res.StatusCode)
	}
}

// Start-up failures exit 1 promptly with one line naming the setting or path.
func TestStartupFailuresNameTheCause(t *testing.T) {
	t.Parallel()
	t.Run("unreachable database", func(t *testing.T) {
		t.Parallel()
		p := launch(t, "bad-db", "", map[string]string{
			"QHRONOS_DATABASE_URL":           "postgres://postgres@127.0.0.1:1/x",
			"QHRONOS_SERVER_ADDR":            qhronostest.FreeAddr(t),
			"QHRONOS_AUTH_MASTER_TOKEN":      qhronostest.RandomHex(t, 32),
			"QHRONOS_AUTH_JWT_SECRET":        qhronostest.RandomHex(t, 32),
			"QHRONOS_HMAC_DEFAULT_SECRET":    qhronostest.RandomHex(t, 32),
			"QHRONOS_SECRETS_ENCRYPTION_KEY": qhronostest.RandomHex(t, 32),
		})
		if code := p.waitExit(10 * time.Second); code != 1 {
			t.Errorf("exit code: got %d, want 1", code)
		}
		lines := strings.Split(strings.TrimSpace(p.stderr.String()), "\n")
		if len(lines) != 1 || !strings.Contains(lines[0], "database.url") {
			t.Errorf("stderr: got %d line(s) %q, want one line naming database.url", len(lines), lines)
		}
	})
	t.Run("unwritable data dir", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		file := filepath.Join(dir, "file")
		require.NoError(t, os.WriteFile(file, []byte("x"), 0o600))
		dataDir := filepath.Join(file, "data")
		p := launch(t, "bad-dir", dir, map[string]string{"QHRONOS_SERVER_DATA_DIR": dataDir,
			"QHRONOS_SERVER_ADDR": qhronostest.FreeAddr(t)})
		if code := p.waitExit(10 * time.Second); code != 1 {
			t.Errorf("exit code: got %d, want 1", code)
		}
		if s := p.stderr.String(); !strings.Contains(s, dataDir) {
			t.Errorf("stderr should name %s, said:\n%s", dataDir, s)
		}
	})
}

// A master token set in the environment is the one in force: the banner
// never shows the generated one (it would only get 401s).
func TestEmbeddedBannerWithConfiguredMasterToken(t *testing.T) {
	dir := t.TempDir()
	env := embeddedEnv(t)
	configured := "configured-master-token-" + qhronostest.RandomHex(t, 16)
	env["QHRONOS_AUTH_MASTER_TOKEN"] = configured
	p := startEmbedded(t, "configured", dir, env)
	raw, err := os.ReadFile(filepath.Join(dir, "data", "secrets.json"))
	require.NoError(t, err)
	generated := regexp.MustCompile(`"master_token"\s*:\s*"([^"]+)"`).FindSubmatch(raw)
	require.NotNil(t, generated)
	require.NotContains(t, p.stderr.String(), string(generated[1]), "the unused generated token is not shown")
	require.NotContains(t, p.stderr.String(), configured, "nor the configured one")
	require.Contains(t, p.stderr.String(), "auth.master_token")
	req, _ := http.NewRequest("GET", p.url+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+configured)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
}
