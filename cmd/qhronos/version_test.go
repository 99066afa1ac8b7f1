package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// qhronos version needs no server and says which build it is, as a line or
// as JSON for scripts.
func TestVersion(t *testing.T) {
	t.Parallel()
	r := cli(t, env{}, "", "version")
	require.Equal(t, 0, r.code, r.stderr)
	require.True(t, strings.HasPrefix(r.stdout, "qhronos dev (commit ") || strings.HasPrefix(r.stdout, "qhronos v"), r.stdout)

	r = cli(t, env{}, "", "version", "--output", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var got struct{ Version, Go string }
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got), r.stdout)
	require.NotEmpty(t, got.Version)
	require.True(t, strings.HasPrefix(got.Go, "go"), r.stdout)
}
