package config

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// productionConfig is a valid production configuration with strong secrets.
func productionConfig() *Config {
	c := Default()
	c.Database.URL = "postgres://qhronos:pw-in-url@db:5432/qhronos?sslmode=disable"
	c.Auth.MasterToken = strings.Repeat("m", 32)
	c.Auth.JWTSecret = strings.Repeat("j", 40)
	c.HMAC.DefaultSecret = strings.Repeat("h", 32)
	c.Secrets.EncryptionKey = strings.Repeat("e", 64)
	return c
}

func TestValidateDefaultsAndProduction(t *testing.T) {
	t.Parallel()
	require.NoError(t, Default().Validate(), "the zero-config embedded start must validate")
	require.False(t, Default().Production())
	require.NoError(t, productionConfig().Validate())
	require.True(t, productionConfig().Production())
}

func TestValidateProductionSecrets(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		mutate func(*Config)
		want   []string
	}{
		{"all missing", func(c *Config) {
			c.Auth.MasterToken, c.Auth.JWTSecret, c.HMAC.DefaultSecret, c.Secrets.EncryptionKey = "", "", "", ""
		}, []string{
			"auth.master_token: is required in production",
			"auth.jwt_secret: is required in production",
			"hmac.default_secret: is required in production",
			"secrets.encryption_key: is required in production (database.url is set); set it or QHRONOS_SECRETS_ENCRYPTION_KEY",
		}},
		{"short", func(c *Config) { c.HMAC.DefaultSecret = "short-secret" },
			[]string{"hmac.default_secret: must be at least 32 bytes, got 12"}},
		{"31 bytes", func(c *Config) { c.Secrets.EncryptionKey = strings.Repeat("k", 31) },
			[]string{"secrets.encryption_key: must be at least 32 bytes, got 31"}},
		{"shipped example", func(c *Config) { c.Auth.MasterToken = ExampleSecrets[0] },
			[]string{"auth.master_token: is an example value"}},
		{"edited example", func(c *Config) { c.Auth.JWTSecret = strings.Replace(ExampleSecrets[1], "abcdef", "abcdeg", 1) },
			[]string{"auth.jwt_secret: is an example value"}},
		{"previous jwt secret", func(c *Config) { c.Auth.JWTPreviousSecrets = []string{strings.Repeat("p", 32), "old"} },
			[]string{"auth.jwt_previous_secrets[1]: must be at least 32 bytes"}},
		{"jwt equals master", func(c *Config) { c.Auth.JWTSecret = c.Auth.MasterToken },
			[]string{"auth.jwt_secret: must differ from auth.master_token"}},
		{"example metrics token", func(c *Config) { c.Metrics.Token = "changeme" },
			[]string{"metrics.token: is an example value"}},
		{"not postgres", func(c *Config) { c.Database.URL = "mysql://root:pw-in-url@db/q" },
			[]string{"database.url: must be a postgres:// URL"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := productionConfig()
			tt.mutate(c)
			err := c.Validate()
			require.Error(t, err)
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate: got %q, want it to contain %q", err, w)
				}
			}
			for _, secret := range []string{c.Auth.MasterToken, c.Auth.JWTSecret, c.HMAC.DefaultSecret, c.Secrets.EncryptionKey, "pw-in-url"} {
				if len(secret) > 8 && strings.Contains(err.Error(), secret) {
					t.Errorf("Validate leaked a secret: %q", err)
				}
			}
		})
	}
}

func TestValidateEmbeddedNeedsNoSecrets(t *testing.T) {
	t.Parallel()
	c := Default()
	c.Auth.MasterToken = "short" // embedded: the operator's choice, generated ones fill the rest
	require.NoError(t, c.Validate())
}

func TestValidateRanges(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		mutate func(*Config)
		want   string
	}{
		{"addr", func(c *Config) { c.Server.Addr = "localhost" }, `server.addr: must be host:port, got "localhost"`},
		{"addr port", func(c *Config) { c.Server.Addr = "127.0.0.1:99999" }, `server.addr: must be host:port`},
		{"empty data dir", func(c *Config) { c.Server.DataDir = " " }, "server.data_dir: must not be empty"},
		{"body limit", func(c *Config) { c.Server.MaxBodyBytes = 0 }, "server.max_body_bytes: must be greater than 0, got 0"},
		{"negative duration", func(c *Config) { c.Scheduler.Lookahead = -time.Hour }, "scheduler.lookahead: must be a positive duration, got -1h"},
		{"lookahead vs interval", func(c *Config) { c.Scheduler.Lookahead = 30 * time.Second },
			"scheduler.lookahead: must be longer than scheduler.expansion_interval"},
		{"claim batch", func(c *Config) { c.Scheduler.ClaimBatch = 0 }, "scheduler.claim_batch: must be greater than 0"},
		{"workers", func(c *Config) { c.Scheduler.Workers = -1 }, "scheduler.workers: must be greater than 0, got -1"},
		{"claim ahead", func(c *Config) { c.Scheduler.ClaimAhead = -time.Second }, "scheduler.claim_ahead: must not be negative"},
		{"async outcome commit without PostgreSQL", func(c *Config) { c.Database.AsyncOutcomeCommit = true },
			"database.async_outcome_commit: applies to PostgreSQL only"},
		{"lease renewal", func(c *Config) { c.Scheduler.LeaseRenewInterval = c.Scheduler.Lease },
			"scheduler.lease_renew_interval: must be shorter than scheduler.lease"},
		{"lease renewal zero", func(c *Config) { c.Scheduler.LeaseRenewInterval = 0 },
			"scheduler.lease_renew_interval: must be a positive duration"},
		{"attempt timeouts", func(c *Config) { c.Actions.MaxAttemptTimeout = 10 * time.Second },
			"actions.max_attempt_timeout: must be at least actions.attempt_timeout"},
		{"log level", func(c *Config) { c.Log.Level = "loud" }, `log.level: must be one of debug, info, warn, error, got "loud"`},
		{"log format", func(c *Config) { c.Log.Format = "xml" }, `log.format: must be one of console, json, got "xml"`},
		{"redis url", func(c *Config) { c.Redis.URL = "http://redis" }, "redis.url: must be a redis://"},
		{"redis two modes", func(c *Config) { c.Redis.URL = "redis://r:6379"; c.Redis.Cluster.Addrs = []string{"a:7000"} },
			"redis: set only one of"},
		{"sentinel without master", func(c *Config) { c.Redis.Sentinel.Addrs = []string{"s:26379"} },
			"redis.sentinel.master: must name the master"},
		{"sentinel bad addr", func(c *Config) { c.Redis.Sentinel.Addrs = []string{"s"}; c.Redis.Sentinel.Master = "m" },
			`redis.sentinel.addrs[0]: must be host:port, got "s"`},
		{"retry attempts", func(c *Config) { c.Retry.MaxAttempts = 0 }, "retry.max_attempts: must be greater than 0"},
		{"retry backoff", func(c *Config) { c.Retry.MaxBackoff = time.Second }, "retry.max_backoff: must be at least retry.initial_backoff"},
		{"rate", func(c *Config) { c.RateLimit.Rate = 0 }, "ratelimit.rate: must be greater than 0"},
		{"burst", func(c *Config) { c.RateLimit.Burst = 0 }, "ratelimit.burst: must be greater than 0"},
		{"archival", func(c *Config) { c.Archival.BatchSize = 0 }, "archival.batch_size: must be greater than 0"},
		{"retention", func(c *Config) { c.Archival.Retention = 0 }, "archival.retention: must be a positive duration, got 0s"},
		{"origin", func(c *Config) { c.Server.AllowedOrigins = []string{"a b"} }, "server.allowed_origins[0]: must be an origin"},
		{"issuer", func(c *Config) { c.Auth.Issuer = "" }, "auth.issuer: must not be empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := Default()
			tt.mutate(c)
			err := c.Validate()
			require.Error(t, err)
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate: got %q, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	t.Parallel()
	c := Default()
	c.Scheduler.ClaimBatch = 0
	c.Retry.MaxAttempts = 0
	err := c.Validate()
	require.Error(t, err)
	for _, w := range []string{"scheduler.claim_batch", "retry.max_attempts"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("Validate: got %q, want it to mention %s", err, w)
		}
	}
}

// TestPortalFrameAncestors: console.portal.frame_ancestors takes origins
// only, so an entry cannot widen or end the CSP directive it goes into.
func TestPortalFrameAncestors(t *testing.T) {
	t.Parallel()
	for _, o := range []string{"https://app.example.com", "http://localhost:3000", "https://*.example.com",
		"https://[::1]:8443"} {
		c := Default()
		c.Console.Portal.FrameAncestors = []string{o}
		require.NoError(t, c.Validate(), o)
	}
	for _, o := range []string{"", "*", "'self'", "'none'", "app.example.com", "https://app.example.com/",
		"https://app.example.com/path", "https://app.example.com?x", "https://app.example.com#f",
		"https://app.example.com; script-src *", "https://a.example.com https://b.example.com",
		"ftp://app.example.com", "https://user@app.example.com", "https://*", "https://a.*.example.com",
		"https://app.example.com:99999", `https://app.example.com"`} {
		c := Default()
		c.Console.Portal.FrameAncestors = []string{"https://ok.example.com", o}
		err := c.Validate()
		require.Error(t, err, "%q", o)
		require.Contains(t, err.Error(), "console.portal.frame_ancestors[1]: must be an origin", "%q", o)
	}
}
