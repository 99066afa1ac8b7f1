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
)

func TestRepoConfigYAMLEqualsDefault(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(repoConfigYAML)
	require.NoError(t, err)
	// Start from a zero Config so a key missing from the file shows up as a
	// difference instead of silently keeping its default.
	got := &Config{}
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

func TestComposeSecretsAreRejectedExamples(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(repoCompose)
	require.NoError(t, err)
	var compose struct {
		Services map[string]struct {
			Environment map[string]string `yaml:"environment"`
		} `yaml:"services"`
	}
	require.NoError(t, yaml.Unmarshal(data, &compose))
	env := compose.Services["qhronosd"].Environment
	require.NotEmpty(t, env, "docker-compose.yml: qhronosd has no environment")

	secretKeys := []string{"auth.master_token", "auth.jwt_secret", "hmac.default_secret", "secrets.encryption_key"}
	for _, path := range secretKeys {
		v := env[EnvName(path)]
		require.NotEmpty(t, v, "docker-compose.yml must show %s", EnvName(path))
		if !isExampleSecret(v) || !contains(ExampleSecrets, v) {
			t.Errorf("docker-compose.yml %s=%q is not in ExampleSecrets", EnvName(path), v)
		}
	}
	if got, want := env["QHRONOS_SERVER_ADDR"], "0.0.0.0:8080"; got != want {
		t.Errorf("QHRONOS_SERVER_ADDR: got %q, want %q", got, want)
	}

	// Starting with the file as shipped must fail and say which settings to change.
	cfg, warnings, err := Load(nil, envOf(env))
	require.NoError(t, err)
	require.Empty(t, warnings)
	require.True(t, cfg.Production())
	verr := cfg.Validate()
	require.Error(t, verr)
	for _, path := range secretKeys {
		if !strings.Contains(verr.Error(), path+": is an example value") {
			t.Errorf("Validate: got %q, want it to reject the example %s", verr, path)
		}
	}
	if strings.Contains(verr.Error(), "example-db-password") {
		t.Errorf("Validate leaked the database password: %q", verr)
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
