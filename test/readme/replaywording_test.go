package readme

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A replay reaches the receiver with the same delivery id (webhook-id) it had
// before (internal/api's replay test proves it). Every place that tells a
// user what a replay does says that, and none says the opposite: the docs, the
// console's pages, the CLI's help, the OpenAPI document and the clients.
func TestReplayWordingSaysTheSameDeliveryID(t *testing.T) {
	t.Parallel()
	var files []string
	for _, pattern := range []string{"README.md", "docs/*.md", "internal/console/templates/*.html", "cmd/qhronos/*.go",
		"internal/api/openapi.json", "client/*.go", "sdk/*/README.md", "sdk/python/qhronos/*.py", "sdk/typescript/src/*.ts"} {
		m, err := filepath.Glob(filepath.Join(root, pattern))
		require.NoError(t, err)
		files = append(files, m...)
	}
	contradiction := regexp.MustCompile(`(?i)(own|new|different|fresh|another) delivery id`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		for n, line := range strings.Split(string(raw), "\n") {
			require.False(t, contradiction.MatchString(line), "%s line %d contradicts a replay's same delivery id: %s", f, n+1, line)
		}
	}
	const said = "same delivery id (<code>webhook-id</code>) as before"
	for _, f := range []string{"failures.html", "bulk.html", "occurrence.html"} {
		raw, err := os.ReadFile(filepath.Join(root, "internal", "console", "templates", f))
		require.NoError(t, err)
		require.Contains(t, string(raw), said, "the console's %s says what a replay sends", f)
	}
	for _, f := range []string{"cmd/qhronos/occurrences_replay.go", "docs/api.md", "docs/deliveries.md", "docs/console.md"} {
		raw, err := os.ReadFile(filepath.Join(root, f))
		require.NoError(t, err)
		require.Regexp(t, "same delivery id \\(`?webhook-id`?\\) as before", string(raw), f)
	}
}
