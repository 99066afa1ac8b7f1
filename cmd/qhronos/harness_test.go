package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/qhronostest"
)

func TestMain(m *testing.M) { qhronostest.Main(m) }

// result is one finished command.
type result struct {
	stdout, stderr string
	code           int
}

// env is a command line's environment: QHRONOS_* variables only, so the
// developer's own login never leaks into a test.
type env map[string]string

func (e env) get(k string) string { return e[k] }

// cli runs one command line in-process, as the binary would.
func cli(t *testing.T, e env, stdin string, args ...string) result {
	t.Helper()
	var out, errb qhronostest.Buffer
	a := &app{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb, getenv: e.get}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	code := run(ctx, args, a)
	return result{out.String(), errb.String(), code}
}

// ok runs a command that must succeed and decodes its JSON output into v.
func ok(t *testing.T, e env, v any, args ...string) {
	t.Helper()
	r := cli(t, e, "", append(args, "--output", "json")...)
	require.Equal(t, 0, r.code, "qhronos %s: stderr %s", strings.Join(args, " "), r.stderr)
	if v != nil {
		require.NoError(t, json.Unmarshal([]byte(r.stdout), v), "output of %s: %s", strings.Join(args, " "), r.stdout)
	}
}

// serverEnv points commands at srv with its master token.
func serverEnv(t *testing.T, srv *qhronostest.Server) env {
	return env{"QHRONOS_SERVER": srv.URL, "QHRONOS_TOKEN": srv.Token,
		"QHRONOS_CREDENTIALS": t.TempDir() + "/credentials.json"}
}

func onBackends(t *testing.T, f func(t *testing.T, srv *qhronostest.Server)) {
	for _, b := range qhronostest.Backends() {
		t.Run(string(b), func(t *testing.T) {
			t.Parallel()
			f(t, qhronostest.Start(t, b))
		})
	}
}

func jsonDecode(s string, v any) error { return json.Unmarshal([]byte(s), v) }
