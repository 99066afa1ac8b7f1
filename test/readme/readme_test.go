// Package readme runs the README's tour and then every docs/ page's curl
// examples, each page in the order they appear and the pages in the order
// docs/README.md lists them, against one real server: every example must work
// when pasted in that order. It also checks the documentation's links.
package readme

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/qhronostest"
)

func TestMain(m *testing.M) { qhronostest.Main(m) }

// block is one ```sh block of a documentation page that calls the API.
type block struct {
	page string
	line int
	text string
}

// root is the repository, seen from this package.
var root = filepath.Join("..", "..")

// docPages is README.md, then the docs/ pages in the order docs/README.md
// links them (each once), as paths relative to the repository.
func docPages(t *testing.T) []string {
	t.Helper()
	index, err := os.ReadFile(filepath.Join(root, "docs", "README.md"))
	require.NoError(t, err)
	out, seen := []string{"README.md"}, map[string]bool{}
	for _, l := range markdownLinks(string(index)) {
		target, _, _ := strings.Cut(l.target, "#")
		if !strings.HasSuffix(target, ".md") || strings.Contains(target, "/") || seen[target] {
			continue
		}
		seen[target] = true
		out = append(out, filepath.Join("docs", target))
	}
	return out
}

// curlBlocks returns a page's sh blocks that call curl. A block right
// after a line "<!-- readme-test: skip … -->" is left out (the comment says
// why: it needs a host this test cannot reach).
func curlBlocks(t *testing.T, page string) []block {
	t.Helper()
	f, err := os.Open(filepath.Join(root, page))
	require.NoError(t, err)
	defer f.Close()
	var (
		out     []block
		cur     *strings.Builder
		start   int
		skip    bool
		prevRaw string
	)
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur == nil && line == "```sh":
			cur, start, skip = &strings.Builder{}, n, strings.HasPrefix(prevRaw, "<!-- readme-test: skip")
		case cur != nil && line == "```":
			if text := cur.String(); strings.Contains(text, "curl ") && !skip {
				out = append(out, block{page: page, line: start, text: text})
			}
			cur = nil
		case cur != nil:
			cur.WriteString(line + "\n")
		}
		if strings.TrimSpace(line) != "" {
			prevRaw = line
		}
	}
	require.NoError(t, sc.Err())
	return out
}

// weekLookahead plans rows a week ahead: the tour's weekday rule created
// on a Friday or Saturday ("tomorrow at 9am") has its first instant up to three
// days away, past the default 24 h lookahead, and the examples need its row.
const weekLookahead = "QHRONOS_SCHEDULER_LOOKAHEAD=192h"

func TestReadmeExamplesWorkInOrder(t *testing.T) {
	tour := curlBlocks(t, "README.md")
	require.GreaterOrEqual(t, len(tour), 2, "the README tour's curl examples")
	blocks := tour
	pages := docPages(t)
	require.GreaterOrEqual(t, len(pages), 10, "docs/README.md lists the reference pages")
	for _, page := range pages[1:] {
		blocks = append(blocks, curlBlocks(t, page)...)
	}
	require.Greater(t, len(blocks), len(tour)+2, "the docs pages' curl examples")
	srv := qhronostest.Start(t, qhronostest.SQLite, weekLookahead)
	vars := map[string]string{"TOKEN": srv.Token, "T": srv.Token, "QHRONOS_TOKEN": srv.Token}
	for i, b := range blocks {
		out := runBlock(t, srv, b, vars)
		t.Logf("%s line %d ran", b.page, b.line)
		if i == 0 {
			// The tour's first example creates the event every later one uses.
			var ev struct {
				ID string `json:"id"`
			}
			require.NoError(t, json.Unmarshal([]byte(firstJSON(out)), &ev), "%s line %d printed %s", b.page, b.line, out)
			require.NotEmpty(t, ev.ID)
			vars["EV"], vars["ID"] = ev.ID, ev.ID
			var occs []struct {
				ID string `json:"id"`
			}
			require.Equal(t, 200, srv.Call(t, "GET", "/events/"+ev.ID+"/occurrences?order=scheduled_at", nil, &occs))
			require.NotEmpty(t, occs)
			vars["OCC"] = occs[0].ID
		}
	}
}

// runBlock runs one block with bash: every curl fails the block on an HTTP
// error (and shows the answer), placeholder assignments (TOKEN=…) are
// dropped, and the documented address is the test server's.
func runBlock(t *testing.T, srv *qhronostest.Server, b block, vars map[string]string) string {
	t.Helper()
	var script strings.Builder
	script.WriteString("set -euo pipefail\n")
	script.WriteString("curl() { command curl -sS --fail-with-body --max-time 30 \"$@\"; echo; }\n")
	for _, line := range strings.Split(b.text, "\n") {
		if name, value, ok := strings.Cut(line, "="); ok && !strings.ContainsAny(name, " \t$") &&
			strings.HasPrefix(strings.TrimSpace(value), "…") {
			continue // TOKEN=…   # printed on first start
		}
		line = strings.ReplaceAll(line, "http://127.0.0.1:8080", srv.URL)
		line = strings.ReplaceAll(line, "localhost:8080", srv.URL)
		script.WriteString(line + "\n")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script.String())
	cmd.Env = os.Environ()
	for k, v := range vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "the example at %s line %d failed:\n%s\nscript:\n%s", b.page, b.line, out, script.String())
	return string(out)
}

// firstJSON is the first line of out that is a JSON object.
func firstJSON(out string) string {
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "{") {
			return line
		}
	}
	return out
}

// TestReadmeTourCLIWorks runs the tour's CLI block as written, with the CLI
// built from this clone on PATH in place of its `go install` line.
func TestReadmeTourCLIWorks(t *testing.T) {
	text, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	var cli string
	for _, part := range strings.Split(string(text), "```sh\n")[1:] {
		if body, _, _ := strings.Cut(part, "```"); strings.Contains(body, "qhronos login") {
			cli = body
			break
		}
	}
	require.NotEmpty(t, cli, "the README tour's CLI block")
	require.Contains(t, cli, "go install ./cmd/qhronos", "the tour installs the CLI from the clone")

	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "qhronos"), "./cmd/qhronos")
	build.Dir = root
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build ./cmd/qhronos:\n%s", out)

	srv := qhronostest.Start(t, qhronostest.SQLite, weekLookahead)
	vars := map[string]string{"TOKEN": srv.Token}
	created := runBlock(t, srv, curlBlocks(t, "README.md")[0], vars)
	var ev struct {
		ID string `json:"id"`
	}
	require.NoError(t, json.Unmarshal([]byte(firstJSON(created)), &ev), created)
	vars["EV"] = ev.ID
	vars["PATH"] = bin + string(os.PathListSeparator) + os.Getenv("PATH")
	vars["QHRONOS_CREDENTIALS"] = filepath.Join(t.TempDir(), "credentials.json")
	var lines []string
	for _, line := range strings.Split(cli, "\n") {
		if !strings.HasPrefix(line, "go install ") {
			lines = append(lines, line)
		}
	}
	out2 := runBlock(t, srv, block{page: "README.md", text: strings.Join(lines, "\n")}, vars)
	require.Contains(t, out2, "standup reminder", "events list shows the tour's event")
	require.Contains(t, out2, ev.ID, "occurrences list shows the tour event's occurrences")
}
