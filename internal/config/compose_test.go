package config

import (
	"bufio"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// No Docker engine runs here, so these tests do what `docker compose config`
// would: substitute ${VAR} and ${VAR:?message} from an environment, parse
// the YAML, and check what a production deployment relies on.

const repoEnvExample = "../../.env.example"

var composeVar = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::\?([^}]*))?\}`)

// interpolate substitutes compose variables; a missing ${VAR:?message}
// yields its message, as compose reports it.
func interpolate(s string, env map[string]string) (string, []string) {
	var missing []string
	out := composeVar.ReplaceAllStringFunc(s, func(m string) string {
		sub := composeVar.FindStringSubmatch(m)
		v, ok := env[sub[1]]
		if (!ok || v == "") && strings.Contains(m, ":?") {
			missing = append(missing, sub[1]+": "+sub[2])
		}
		return v
	})
	return out, missing
}

func readEnvFile(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	env := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		require.True(t, ok, "%s: %q is not KEY=VALUE", path, line)
		env[k] = v
	}
	require.NoError(t, sc.Err())
	return env
}

type composeFile struct {
	Services map[string]struct {
		Build           any               `yaml:"build"`
		Image           string            `yaml:"image"`
		PullPolicy      string            `yaml:"pull_policy"`
		Environment     map[string]string `yaml:"environment"`
		StopGracePeriod string            `yaml:"stop_grace_period"`
		Healthcheck     struct {
			Test []string `yaml:"test"`
		} `yaml:"healthcheck"`
	} `yaml:"services"`
}

var secretPaths = []string{"auth.master_token", "auth.jwt_secret", "hmac.default_secret", "secrets.encryption_key"}

// Without an .env, compose stops with a message naming each missing
// secret; the file holds no secret value of its own.
func TestComposeRequiresEverySecret(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(repoCompose)
	require.NoError(t, err)
	_, missing := interpolate(string(raw), nil)
	for _, name := range append([]string{"POSTGRES_PASSWORD"}, envNames(secretPaths)...) {
		found := false
		for _, m := range missing {
			found = found || strings.HasPrefix(m, name+": ") && strings.Contains(m[len(name):], name)
		}
		if !found {
			t.Errorf("docker-compose.yml: a missing %s must stop compose with a message naming it (got %q)", name, missing)
		}
	}
	var compose composeFile
	require.NoError(t, yaml.Unmarshal(raw, &compose))
	env := compose.Services["qhronosd"].Environment
	for _, name := range envNames(secretPaths) {
		if got, want := env[name], "${"+name+":?"; !strings.HasPrefix(got, want) {
			t.Errorf("docker-compose.yml %s = %q, want a %s…} reference", name, got, want)
		}
	}
}

// With .env.example the file resolves; it builds the image once, checks
// /ready, outlasts the drain on stop, names only settings the server knows,
// and the server refuses the example secrets.
func TestComposeWithEnvExample(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(repoCompose)
	require.NoError(t, err)
	dotenv := readEnvFile(t, repoEnvExample)
	resolved, missing := interpolate(string(raw), dotenv)
	require.Empty(t, missing, ".env.example must define every variable docker-compose.yml requires")
	var compose composeFile
	require.NoError(t, yaml.Unmarshal([]byte(resolved), &compose))

	builds := 0
	for name, svc := range compose.Services {
		if svc.Build != nil {
			builds++
		}
		if svc.Image == "qhronos:local" && svc.Build == nil && svc.PullPolicy != "never" {
			t.Errorf("service %s runs the local image without building it: it needs pull_policy: never", name)
		}
	}
	require.Equal(t, 1, builds, "the image is built by exactly one service")

	q, ok := compose.Services["qhronosd"]
	require.True(t, ok, "a qhronosd service")
	require.Contains(t, strings.Join(q.Healthcheck.Test, " "), "/ready", "the health check asks /ready")

	known := map[string]bool{}
	for _, k := range Keys() {
		known[EnvName(k.Path)] = true
	}
	for _, svc := range []string{"qhronosd", "migrate"} {
		for k := range compose.Services[svc].Environment {
			if strings.HasPrefix(k, EnvPrefix) && !known[k] {
				t.Errorf("service %s sets %s, which is no setting of qhronosd", svc, k)
			}
		}
	}
	require.Contains(t, string(raw), EnvName("outbound.allow_cidrs"), "a comment shows outbound.allow_cidrs for receivers in other containers")

	cfg, warnings, err := Load(nil, envOf(q.Environment))
	require.NoError(t, err)
	require.Empty(t, warnings)
	require.True(t, cfg.Production())
	grace, err := time.ParseDuration(q.StopGracePeriod)
	require.NoError(t, err, "stop_grace_period")
	if need := cfg.Server.ShutdownTimeout + cfg.Scheduler.DrainTimeout; grace <= need {
		t.Errorf("stop_grace_period %s must exceed shutdown_timeout + drain_timeout (%s), or Docker kills the drain", grace, need)
	}

	verr := cfg.Validate()
	require.Error(t, verr, "the example secrets of .env.example must be refused")
	for _, path := range secretPaths {
		if !strings.Contains(verr.Error(), path+": is an example value") {
			t.Errorf("Validate: got %q, want it to reject the example %s", verr, path)
		}
		if v := dotenv[EnvName(path)]; !contains(ExampleSecrets, v) {
			t.Errorf(".env.example %s=%q is not in ExampleSecrets", EnvName(path), v)
		}
	}
	if strings.Contains(verr.Error(), dotenv["POSTGRES_PASSWORD"]) {
		t.Errorf("Validate leaked the database password: %q", verr)
	}
}

func envNames(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = EnvName(p)
	}
	return out
}
