package config

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

const (
	repoConfigYAML = "../../config.yaml"
	repoCompose    = "../../docker-compose.yml"
	repoDockerfile = "../../Dockerfile"
)

func TestRepoConfigYAMLEqualsDefault(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(repoConfigYAML)
	require.NoError(t, err)
	// Start from a zero Config so a key missing from the file shows up as a
	// difference instead of silently keeping its default.
	got := &Config{}
	withInternalDefaults(got)
	warnings, err := applyYAML(got, data, repoConfigYAML)
	require.NoError(t, err)
	require.Empty(t, warnings, "config.yaml has keys the server does not know")
	require.Equal(t, Default(), got, "config.yaml drifted from Default()")
}

func TestRepoConfigYAMLListsEveryKeyWithAComment(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(repoConfigYAML)
	require.NoError(t, err)
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal(data, &doc))

	commented := map[string]bool{}
	var walk func(n *yaml.Node, prefix string)
	walk = func(n *yaml.Node, prefix string) {
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			path := strings.TrimPrefix(prefix+"."+k.Value, ".")
			if v.Kind == yaml.MappingNode {
				walk(v, path)
				continue
			}
			commented[path] = strings.TrimSpace(v.LineComment+k.LineComment) != ""
		}
	}
	walk(doc.Content[0], "")

	for _, k := range Keys() {
		has, listed := commented[k.Path]
		switch {
		case !listed:
			t.Errorf("config.yaml does not list %s", k.Path)
		case !has:
			t.Errorf("config.yaml: %s has no comment", k.Path)
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// withInternalDefaults copies the internal tunables (yaml:"-", not settings,
// so not in config.yaml) from Default.
func withInternalDefaults(c *Config) {
	d := Default()
	c.Scheduler.ExpandBatch, c.Scheduler.RecordBatch = d.Scheduler.ExpandBatch, d.Scheduler.RecordBatch
	c.Scheduler.RecordInterval, c.Scheduler.RescueBatch = d.Scheduler.RecordInterval, d.Scheduler.RescueBatch
	c.Scheduler.CatchupGrace = d.Scheduler.CatchupGrace
	c.Archival.MaxBatches, c.Archival.LockTTL = d.Archival.MaxBatches, d.Archival.LockTTL
}
