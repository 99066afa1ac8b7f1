package readme

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/config"
)

// Every `jq -r .KEY data/secrets.json` the documentation gives reads a key the
// embedded server really writes there, and the docs name the signing secret
// (hmac_default_secret) and the master token that way.
func TestDocsReadTheEmbeddedSecretsFile(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	s, created, err := config.EnsureSecrets(dir)
	require.NoError(t, err)
	require.True(t, created)
	raw, err := os.ReadFile(filepath.Join(dir, "secrets.json"))
	require.NoError(t, err)
	var file map[string]string
	require.NoError(t, json.Unmarshal(raw, &file))
	require.Equal(t, s.HMACDefaultSecret, file["hmac_default_secret"])

	read := regexp.MustCompile(`jq -r \.(\w+) data/secrets\.json`)
	found := map[string]string{}
	for _, page := range docPages(t) {
		text, err := os.ReadFile(filepath.Join(root, page))
		require.NoError(t, err)
		for _, m := range read.FindAllStringSubmatch(string(text), -1) {
			require.NotEmpty(t, file[m[1]], "%s reads %q from data/secrets.json, which has no such key", page, m[1])
			found[m[1]] = page
		}
	}
	require.Equal(t, "docs/clients.md", found["hmac_default_secret"], "the clients page says where the signing secret is")
	require.Equal(t, "README.md", found["master_token"], "the README says where the master token is")
}
