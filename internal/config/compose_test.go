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

var composeVar = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([?-])([^}]*))?\}`)

// interpolate substitutes compose variables; a missing ${VAR:?message}
// yields its message, as compose reports it, and ${VAR:-default} its
// default.
func interpolate(s string, env map[string]string) (string, []string) {
	var missing []string
	out := composeVar.ReplaceAllStringFunc(s, func(m string) string {
		sub := composeVar.FindStringSubmatch(m)
		v, ok := env[sub[1]]
		if !ok || v == "" {
			switch sub[2] {
			case "?":
				missing = append(missing, sub[1]+": "+sub[3])
			case "-":
				v = sub[3]
			}
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
		Build           *composeBuild     `yaml:"build"`
		Image           string            `yaml:"image"`
		PullPolicy      string            `yaml:"pull_policy"`
		Environment     map[string]string `yaml:"environment"`
		StopGracePeriod string            `yaml:"stop_grace_period"`
		Healthcheck     struct {
			Test []string `yaml:"test"`
		} `yaml:"healthcheck"`
	} `yaml:"services"`
}

type composeBuild struct {
	Context string            `yaml:"context"`
	Args    map[string]string `yaml:"args"`
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

	// migrate and qhronosd run one image: each can build it (so either
	// starts alone), from the same context and arguments (so compose builds
	// it once), with the stamp arguments the Dockerfile declares.
	for _, name := range []string{"migrate", "qhronosd"} {
		svc := compose.Services[name]
		require.Equal(t, "qhronos:local", svc.Image, "service %s runs the qhronos image", name)
		require.NotNil(t, svc.Build, "service %s builds the image it runs, not waiting for another service to", name)
		require.Equal(t, ".", svc.Build.Context, "service %s builds from the repository root", name)
		require.Empty(t, svc.PullPolicy, "service %s", name)
		for arg := range svc.Build.Args {
			require.Contains(t, dockerfileArgs(t), arg, "service %s passes build arg %s, which the Dockerfile does not declare", name, arg)
		}
	}
	require.Equal(t, compose.Services["migrate"].Build, compose.Services["qhronosd"].Build, "one build, so one image")

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

// dockerfileArgs reads the build arguments the Dockerfile declares.
func dockerfileArgs(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile(repoDockerfile)
	require.NoError(t, err)
	var args []string
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "ARG "); ok {
			for _, f := range strings.Fields(rest) {
				name, _, _ := strings.Cut(f, "=")
				args = append(args, name)
			}
		}
	}
	return args
}

// The image's binary is stamped (version, commit, date from the build
// arguments into internal/buildinfo), static, and runs as a non-root user.
func TestDockerfileBuildsStampedBinary(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(repoDockerfile)
	require.NoError(t, err)
	df := string(raw)
	require.Subset(t, dockerfileArgs(t), []string{"VERSION", "COMMIT", "DATE"})
	for _, stamp := range []string{"buildinfo.version=${VERSION}", "buildinfo.commit=${COMMIT}", "buildinfo.date=${DATE}"} {
		require.Contains(t, df, "-X github.com/qhronos/qhronos/internal/"+stamp, "the build stamps %s", stamp)
	}
	require.Contains(t, df, "CGO_ENABLED=0", "a static binary")
	require.Contains(t, df, "/out/qhronosd version", "the build fails unless the binary runs and prints its version")
	require.Regexp(t, `(?m)^USER 10001`, df, "the server runs as a non-root user")
	// .dockerignore keeps .git out: the stamp can only come from the arguments.
	ignore, err := os.ReadFile("../../.dockerignore")
	require.NoError(t, err)
	require.Regexp(t, `(?m)^\.git$`, string(ignore))
}
