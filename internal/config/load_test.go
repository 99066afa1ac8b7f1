package config

import (
	"errors"
	"flag"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestLoadPrecedence(t *testing.T) {
	t.Parallel()
	file := writeFile(t, "q.yaml", "server:\n  addr: 127.0.0.1:1001\nscheduler:\n  lookahead: 48h\n")
	other := writeFile(t, "other.yaml", "server:\n  addr: 127.0.0.1:2002\n")

	tests := []struct {
		name          string
		args          []string
		env           map[string]string
		wantAddr      string
		wantLookahead time.Duration
	}{
		{"defaults only", nil, nil, "127.0.0.1:8080", 24 * time.Hour},
		{"file over defaults", []string{"--config", file}, nil, "127.0.0.1:1001", 48 * time.Hour},
		{"file named by env", nil, map[string]string{"QHRONOS_CONFIG": file}, "127.0.0.1:1001", 48 * time.Hour},
		{"--config over QHRONOS_CONFIG", []string{"--config", file}, map[string]string{"QHRONOS_CONFIG": other}, "127.0.0.1:1001", 48 * time.Hour},
		{"env over file", []string{"--config", file}, map[string]string{"QHRONOS_SERVER_ADDR": "127.0.0.1:3003"}, "127.0.0.1:3003", 48 * time.Hour},
		{"flag over env", []string{"--config", file, "--addr", "127.0.0.1:4004"},
			map[string]string{"QHRONOS_SERVER_ADDR": "127.0.0.1:3003", "QHRONOS_SCHEDULER_LOOKAHEAD": "72h"}, "127.0.0.1:4004", 72 * time.Hour},
		{"empty env counts as unset", []string{"--config", file}, map[string]string{"QHRONOS_SERVER_ADDR": ""}, "127.0.0.1:1001", 48 * time.Hour},
		{"last repeated flag wins", []string{"--addr=127.0.0.1:1", "-addr", "127.0.0.1:2"}, nil, "127.0.0.1:2", 24 * time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, warnings, err := Load(tt.args, envOf(tt.env))
			require.NoError(t, err)
			require.Empty(t, warnings)
			if got := cfg.Server.Addr; got != tt.wantAddr {
				t.Errorf("server.addr: got %q, want %q", got, tt.wantAddr)
			}
			if got := cfg.Scheduler.Lookahead; got != tt.wantLookahead {
				t.Errorf("scheduler.lookahead: got %s, want %s", got, tt.wantLookahead)
			}
		})
	}
}

func TestLoadFlags(t *testing.T) {
	t.Parallel()
	cfg, _, err := Load([]string{
		"--data-dir", "/tmp/q", "--database-url", "postgres://u@h/db", "--redis-url", "redis://h:6379/0",
		"--log-level", "debug", "--log-format", "console",
	}, envOf(nil))
	require.NoError(t, err)
	got := []string{cfg.Server.DataDir, cfg.Database.URL, cfg.Redis.URL, cfg.Log.Level, cfg.Log.Format}
	want := []string{"/tmp/q", "postgres://u@h/db", "redis://h:6379/0", "debug", "console"}
	require.Equal(t, want, got)
}

func TestLoadEnvironmentNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		env, value string
		get        func(*Config) any
		want       any
	}{
		{"QHRONOS_SCHEDULER_LOOKAHEAD", "48h", func(c *Config) any { return c.Scheduler.Lookahead }, 48 * time.Hour},
		{"QHRONOS_HMAC_DEFAULT_SECRET", "s3cret", func(c *Config) any { return c.HMAC.DefaultSecret }, "s3cret"},
		{"QHRONOS_REDIS_SENTINEL_ADDRS", "a:26379, b:26379,", func(c *Config) any { return c.Redis.Sentinel.Addrs }, []string{"a:26379", "b:26379"}},
		{"QHRONOS_REDIS_SENTINEL_MASTER", "mymaster", func(c *Config) any { return c.Redis.Sentinel.Master }, "mymaster"},
		{"QHRONOS_OUTBOUND_ALLOW_CIDRS", "10.0.0.0/8, 192.168.1.5,::1",
			func(c *Config) any { return c.Outbound.AllowCIDRs },
			[]netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.168.1.5/32"), netip.MustParsePrefix("::1/128")}},
		{"QHRONOS_SERVER_TRUSTED_PROXIES", "10.1.2.3/8", func(c *Config) any { return c.Server.TrustedProxies },
			[]netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}},
		{"QHRONOS_RATELIMIT_LIMIT_MASTER", "true", func(c *Config) any { return c.RateLimit.LimitMaster }, true},
		{"QHRONOS_RATELIMIT_RATE", "2.5", func(c *Config) any { return c.RateLimit.Rate }, 2.5},
		{"QHRONOS_ARCHIVAL_RETENTION", "7d", func(c *Config) any { return c.Archival.Retention }, 7 * 24 * time.Hour},
		{"QHRONOS_ARCHIVAL_ENABLED", "false", func(c *Config) any { return c.Archival.Enabled }, false},
		{"QHRONOS_SERVER_MAX_BODY_BYTES", "2048", func(c *Config) any { return c.Server.MaxBodyBytes }, int64(2048)},
		{"QHRONOS_AUTH_JWT_PREVIOUS_SECRETS", "old1,old2", func(c *Config) any { return c.Auth.JWTPreviousSecrets }, []string{"old1", "old2"}},
	}
	for _, tt := range tests {
		t.Run(tt.env, func(t *testing.T) {
			t.Parallel()
			cfg, _, err := Load(nil, envOf(map[string]string{tt.env: tt.value}))
			require.NoError(t, err)
			if got := tt.get(cfg); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("%s=%q: got %v, want %v", tt.env, tt.value, got, tt.want)
			}
		})
	}
}

func TestLoadYAMLLists(t *testing.T) {
	t.Parallel()
	path := writeFile(t, "q.yaml", `
server:
  allowed_origins: [https://a.example, "https://b.example"]
  trusted_proxies:
    - 10.0.0.0/8
    - fd00::/8
redis:
  cluster:
    addrs: "n1:7000,n2:7000"
`)
	cfg, warnings, err := Load([]string{"--config", path}, envOf(nil))
	require.NoError(t, err)
	require.Empty(t, warnings)
	require.Equal(t, []string{"https://a.example", "https://b.example"}, cfg.Server.AllowedOrigins)
	require.Equal(t, []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")}, cfg.Server.TrustedProxies)
	require.Equal(t, []string{"n1:7000", "n2:7000"}, cfg.Redis.Cluster.Addrs, "a scalar list is comma-separated, as in the environment")
}

func TestLoadYAMLNullKeepsDefault(t *testing.T) {
	t.Parallel()
	path := writeFile(t, "q.yaml", "scheduler:\n  lookahead:\nretry: ~\n")
	cfg, _, err := Load([]string{"--config", path}, envOf(nil))
	require.NoError(t, err)
	if got, want := cfg.Scheduler.Lookahead, 24*time.Hour; got != want {
		t.Errorf("scheduler.lookahead: got %s, want %s", got, want)
	}
	if got, want := cfg.Retry.MaxAttempts, 5; got != want {
		t.Errorf("retry.max_attempts: got %d, want %d", got, want)
	}
}

func TestLoadEmptyFile(t *testing.T) {
	t.Parallel()
	path := writeFile(t, "q.yaml", "# nothing here\n")
	cfg, warnings, err := Load([]string{"--config", path}, envOf(nil))
	require.NoError(t, err)
	require.Empty(t, warnings)
	require.Equal(t, Default().Scheduler, cfg.Scheduler)
}

func TestLoadUnknownKeysWarn(t *testing.T) {
	t.Parallel()
	path := writeFile(t, "q.yaml", `
scheduler:
  lookahed: 2h
  claim_batch: 7
schedular:
  workers: 3
colour: blue
`)
	cfg, warnings, err := Load([]string{"--config", path}, envOf(nil))
	require.NoError(t, err, "unknown keys are warnings, not errors")
	if got, want := cfg.Scheduler.ClaimBatch, 7; got != want {
		t.Errorf("known key beside unknown ones: got %d, want %d", got, want)
	}
	require.Len(t, warnings, 3)
	want := []string{
		`line 3: unknown key "scheduler.lookahed" (ignored); did you mean "scheduler.lookahead"?`,
		`line 5: unknown key "schedular" (ignored); did you mean "scheduler"?`,
		`line 7: unknown key "colour" (ignored)`,
	}
	for i, w := range want {
		if !strings.HasPrefix(warnings[i], path+": ") || !strings.HasSuffix(warnings[i], w) {
			t.Errorf("warning %d: got %q, want %q", i, warnings[i], path+": "+w)
		}
	}
}

func TestLoadInvalidValuesNameTheKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		yaml string
		env  map[string]string
		args []string
		want string
	}{
		{"yaml duration", "scheduler:\n  lookahead: abc\n", nil, nil, `scheduler.lookahead: invalid duration "abc"`},
		{"env duration", "", map[string]string{"QHRONOS_SCHEDULER_LOOKAHEAD": "abc"}, nil, `QHRONOS_SCHEDULER_LOOKAHEAD: scheduler.lookahead: invalid duration "abc"`},
		{"flag value", "", nil, []string{"--log-level", "x"}, ""}, // any string is a valid log.level at load; Validate judges it
		{"integer", "scheduler:\n  claim_batch: lots\n", nil, nil, `scheduler.claim_batch: invalid integer "lots"`},
		{"integer overflow", "server:\n  max_header_bytes: 99999999999999999999\n", nil, nil, `server.max_header_bytes: invalid integer`},
		{"boolean", "", map[string]string{"QHRONOS_ARCHIVAL_ENABLED": "sometimes"}, nil, `archival.enabled: invalid boolean "sometimes"`},
		{"number", "ratelimit:\n  rate: NaN\n", nil, nil, `ratelimit.rate: invalid number "NaN"`},
		{"cidr", "", map[string]string{"QHRONOS_OUTBOUND_ALLOW_CIDRS": "10.0.0.0/8,10.0.0.0/99"}, nil, `outbound.allow_cidrs: invalid CIDR "10.0.0.0/99"`},
		{"mapping for a value", "server:\n  addr:\n    host: x\n", nil, nil, `server.addr: line 3: expected a string, got a mapping`},
		{"value for a section", "server: 8080\n", nil, nil, `server: line 1: expected a mapping of settings`},
		{"list for a value", "server:\n  addr: [a, b]\n", nil, nil, `server.addr: expected a single string, got a list`},
		{"nested list item", "server:\n  allowed_origins: [[a]]\n", nil, nil, `server.allowed_origins: line 2: list items must be plain values`},
		{"yaml syntax", "server: [\n", nil, nil, `parse `},
		{"top-level list", "- a\n", nil, nil, `config: line 1: expected a mapping of settings`},
		{"unknown flag", "", nil, []string{"--nope"}, `parse flags: flag provided but not defined: -nope`},
		{"stray argument", "", nil, []string{"serve"}, `parse flags: unexpected argument "serve"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := tt.args
			if tt.yaml != "" {
				args = append([]string{"--config", writeFile(t, "q.yaml", tt.yaml)}, args...)
			}
			_, _, err := Load(args, envOf(tt.env))
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error: got %q, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestLoadMissingConfigFile(t *testing.T) {
	t.Parallel()
	_, _, err := Load(nil, envOf(map[string]string{"QHRONOS_CONFIG": "/nonexistent/q.yaml"}))
	require.Error(t, err)
	if !strings.Contains(err.Error(), "/nonexistent/q.yaml") {
		t.Errorf("error: got %q, want it to name the file", err)
	}
}

func TestLoadHelp(t *testing.T) {
	t.Parallel()
	_, _, err := Load([]string{"-h"}, envOf(nil))
	if !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: got %v, want flag.ErrHelp", err)
	}
	usage := Usage()
	for _, want := range []string{"-addr", "-config", "-data-dir", "-database-url", "-redis-url", "-log-level", "QHRONOS_SERVER_ADDR"} {
		if !strings.Contains(usage, want) {
			t.Errorf("Usage() lacks %q:\n%s", want, usage)
		}
	}
}

func TestLoadLogFormatFollowsDeployment(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"embedded", nil, "console"},
		{"production", map[string]string{"QHRONOS_DATABASE_URL": "postgres://h/db"}, "json"},
		{"explicit wins", map[string]string{"QHRONOS_DATABASE_URL": "postgres://h/db", "QHRONOS_LOG_FORMAT": "console"}, "console"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, _, err := Load(nil, envOf(tt.env))
			require.NoError(t, err)
			if got := cfg.Log.Format; got != tt.want {
				t.Errorf("log.format: got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseDuration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    time.Duration
		wantErr bool
	}{
		{"30s", 30 * time.Second, false},
		{"250ms", 250 * time.Millisecond, false},
		{"15m", 15 * time.Minute, false},
		{"30d", 30 * Day, false},
		{"365d", 365 * Day, false},
		{"1d12h", 36 * time.Hour, false},
		{"0d", 0, false},
		{"-2d", -2 * Day, false},
		{" 1h ", time.Hour, false},
		{"0", 0, false},
		{"abc", 0, true},
		{"", 0, true},
		{"d", 0, true},
		{"30", 0, true},
		{"1.5d", 0, true},
		{"1d-1h", 0, true},
		{"1dx", 0, true},
		{"99999999999d", 0, true},
		{"106751d23h47m16.854775807s", 106751*Day + 23*time.Hour + 47*time.Minute + 16854775807*time.Nanosecond, false},
		{"106751d23h47m17s", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseDuration(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseDuration(%q): got error %v, want error %v", tt.in, err, tt.wantErr)
			continue
		}
		if got != tt.want {
			t.Errorf("ParseDuration(%q): got %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestFormatDuration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   time.Duration
		want string
	}{
		{30 * Day, "30d"},
		{time.Hour, "1h"},
		{time.Minute, "1m"},
		{90 * time.Second, "1m30s"},
		{250 * time.Millisecond, "250ms"},
		{36 * time.Hour, "36h"},
		{0, "0s"},
	}
	for _, tt := range tests {
		if got := FormatDuration(tt.in); got != tt.want {
			t.Errorf("FormatDuration(%s): got %q, want %q", tt.in, got, tt.want)
		}
	}
}
