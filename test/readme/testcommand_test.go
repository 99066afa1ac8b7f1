package readme

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The README's test command is the one CI runs (so what a newcomer runs is
// what CI proves), and it is the wrapper that ends with the skipped tests.
func TestReadmeTestCommandIsCIs(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	first, _, _ := strings.Cut(strings.SplitN(string(readme), "```sh\n", 2)[1], "```")
	m := regexp.MustCompile(`(?m)^(\S+)\s+# run the whole test suite`).FindStringSubmatch(first)
	require.NotNil(t, m, "the README's first block has the test command:\n%s", first)
	require.Equal(t, "scripts/test", m[1])
	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	require.NoError(t, err)
	require.Regexp(t, `(?m)^run "tests \(race\)" \./`+regexp.QuoteMeta(m[1])+`$`, string(ci))
}
