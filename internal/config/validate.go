package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// MinSecretBytes is the shortest secret production accepts: 256 bits.
const MinSecretBytes = 32

// Production reports whether the configuration selects the production
// deployment, which is exactly when database.url is set.
func (c *Config) Production() bool {
	return strings.TrimSpace(c.Database.URL) != ""
}

// Validate checks ranges and syntax everywhere and, in production, that the
// four required secrets are set, long enough and not shipped examples. All
// problems are reported at once; each names its setting and never echoes a
// secret or a database URL.
func (c *Config) Validate() error {
	v := &validator{}

	v.addr("server.addr", c.Server.Addr)
	v.check(strings.TrimSpace(c.Server.DataDir) != "", "server.data_dir", "must not be empty")
	v.positive("server.max_body_bytes", c.Server.MaxBodyBytes)
	v.positive("server.max_batch_body_bytes", c.Server.MaxBatchBodyBytes)
	v.positive("server.max_header_bytes", int64(c.Server.MaxHeaderBytes))
	v.positiveDuration("server.read_header_timeout", c.Server.ReadHeaderTimeout)
	v.positiveDuration("server.read_timeout", c.Server.ReadTimeout)
	v.positiveDuration("server.write_timeout", c.Server.WriteTimeout)
	v.positiveDuration("server.idle_timeout", c.Server.IdleTimeout)
	v.positiveDuration("server.shutdown_timeout", c.Server.ShutdownTimeout)
	for i, o := range c.Server.AllowedOrigins {
		v.check(o != "" && !strings.ContainsAny(o, " \t\r\n,"), fmt.Sprintf("server.allowed_origins[%d]", i),
			"must be an origin such as https://app.example.com or a host pattern")
	}
	if c.Server.PublicURL != "" {
		u, err := url.Parse(c.Server.PublicURL)
		v.check(err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.RawQuery == "" &&
			u.Fragment == "" && u.User == nil, "server.public_url",
			"must be an http(s) URL such as https://qhronos.example.com")
	}

	v.oneOf("log.level", c.Log.Level, "debug", "info", "warn", "error")
	v.oneOf("log.format", c.Log.Format, "", "console", "json")
	v.oneOf("console.secure_cookie", c.Console.SecureCookie, "auto", "always")
	for i, o := range c.Console.Portal.FrameAncestors {
		v.check(frameAncestor(o), fmt.Sprintf("console.portal.frame_ancestors[%d]", i),
			"must be an origin such as https://app.example.com or https://*.example.com (no path, no quotes)")
	}

	if c.Production() {
		u, err := url.Parse(c.Database.URL)
		v.check(err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql"), "database.url",
			"must be a postgres:// URL (leave it empty for the embedded SQLite store)")
	}
	v.positive("database.max_open_conns", int64(c.Database.MaxOpenConns))
	v.positiveDuration("database.connect_timeout", c.Database.ConnectTimeout)
	v.check(!c.Database.AsyncOutcomeCommit || c.Production(), "database.async_outcome_commit",
		"applies to PostgreSQL only (database.url); the embedded store already syncs its log lazily")

	c.validateRedis(v)

	if c.Production() {
		v.secret("auth.master_token", c.Auth.MasterToken)
		v.secret("auth.jwt_secret", c.Auth.JWTSecret)
		for i, s := range c.Auth.JWTPreviousSecrets {
			v.secret(fmt.Sprintf("auth.jwt_previous_secrets[%d]", i), s)
		}
		v.secret("hmac.default_secret", c.HMAC.DefaultSecret)
		v.secret("secrets.encryption_key", c.Secrets.EncryptionKey)
		if c.Metrics.Token != "" {
			v.check(!isExampleSecret(c.Metrics.Token), "metrics.token", "is an example value; set your own")
		}
	}
	v.check(c.Auth.MasterToken == "" || c.Auth.MasterToken != c.Auth.JWTSecret, "auth.jwt_secret",
		"must differ from auth.master_token")
	v.check(strings.TrimSpace(c.Auth.Issuer) != "", "auth.issuer", "must not be empty")
	v.check(strings.TrimSpace(c.Auth.Audience) != "", "auth.audience", "must not be empty")
	v.positiveDuration("auth.token_max_ttl", c.Auth.TokenMaxTTL)

	v.positive("outbound.max_per_host", int64(c.Outbound.MaxPerHost))
	v.check(!c.Outbound.AllowCoordinationRedis || c.Redis.Prefix != "", "outbound.allow_coordination_redis",
		"needs a redis.prefix: without one no key of the coordination Redis can be told from a tenant's stream")
	v.positive("outbound.response_excerpt_bytes", c.Outbound.ResponseExcerptBytes)

	s := c.Scheduler
	v.positiveDuration("scheduler.lookahead", s.Lookahead)
	v.positiveDuration("scheduler.expansion_interval", s.ExpansionInterval)
	v.check(s.Lookahead <= 0 || s.ExpansionInterval <= 0 || s.Lookahead > s.ExpansionInterval,
		"scheduler.lookahead", "must be longer than scheduler.expansion_interval, or occurrences are created too late")
	v.positive("scheduler.max_rows_per_event_window", int64(s.MaxRowsPerEventWindow))
	v.positiveDuration("scheduler.max_sleep", s.MaxSleep)
	v.positive("scheduler.claim_batch", int64(s.ClaimBatch))
	v.nonNegativeDuration("scheduler.claim_ahead", s.ClaimAhead)
	v.positiveDuration("scheduler.lease", s.Lease)
	v.positiveDuration("scheduler.lease_renew_interval", s.LeaseRenewInterval)
	v.check(s.Lease <= 0 || s.LeaseRenewInterval <= 0 || s.LeaseRenewInterval < s.Lease, "scheduler.lease_renew_interval",
		"must be shorter than scheduler.lease, or leases of work in flight lapse between renewals")
	v.positiveDuration("scheduler.rescuer_interval", s.RescuerInterval)
	v.positiveDuration("scheduler.drain_timeout", s.DrainTimeout)
	v.nonNegativeDuration("scheduler.catchup_window", s.CatchupWindow)
	v.positive("scheduler.workers", int64(s.Workers))
	v.check(s.ScopeShare > 0 && s.ScopeShare <= 1, "scheduler.scope_share", "must be above 0 and at most 1")
	v.check(s.DestinationShare > 0 && s.DestinationShare <= 1, "scheduler.destination_share", "must be above 0 and at most 1")
	v.positiveDuration("scheduler.min_interval", s.MinInterval)
	v.positive("scheduler.max_count", int64(s.MaxCount))

	v.positiveDuration("actions.attempt_timeout", c.Actions.AttemptTimeout)
	v.check(c.Actions.MaxAttemptTimeout >= c.Actions.AttemptTimeout, "actions.max_attempt_timeout",
		"must be at least actions.attempt_timeout")

	v.positiveDuration("websocket.handshake_timeout", c.WebSocket.HandshakeTimeout)
	v.positiveDuration("websocket.ack_timeout", c.WebSocket.AckTimeout)

	v.positive("retry.max_attempts", int64(c.Retry.MaxAttempts))
	v.positiveDuration("retry.initial_backoff", c.Retry.InitialBackoff)
	v.check(c.Retry.MaxBackoff >= c.Retry.InitialBackoff, "retry.max_backoff", "must be at least retry.initial_backoff")
	v.nonNegativeDuration("retry.max_retry_after", c.Retry.MaxRetryAfter)

	v.check(c.RateLimit.Rate > 0, "ratelimit.rate", "must be greater than 0")
	v.positive("ratelimit.burst", int64(c.RateLimit.Burst))

	cc := c.Endpoints.Circuit
	v.positive("endpoints.circuit.failures", int64(cc.Failures))
	v.check(cc.FailureRatio > 0 && cc.FailureRatio <= 1, "endpoints.circuit.failure_ratio", "must be above 0 and at most 1")
	v.positive("endpoints.circuit.min_requests", int64(cc.MinRequests))
	v.positiveDuration("endpoints.circuit.window", cc.Window)
	v.positiveDuration("endpoints.circuit.cool_down", cc.CoolDown)
	v.positiveDuration("endpoints.circuit.disable_after", cc.DisableAfter)

	v.positiveDuration("archival.retention", c.Archival.Retention)
	v.positiveDuration("archival.purge_after", c.Archival.PurgeAfter)
	v.positiveDuration("archival.interval", c.Archival.Interval)
	v.positive("archival.batch_size", int64(c.Archival.BatchSize))

	c.validateNotifications(v)
	// The internal tunables cannot be set, but a Config built by hand
	// must still carry them.
	v.positive("scheduler (internal) expand_batch", int64(s.ExpandBatch))
	v.positive("scheduler (internal) record_batch", int64(s.RecordBatch))
	v.positiveDuration("scheduler (internal) record_interval", s.RecordInterval)
	v.positive("scheduler (internal) rescue_batch", int64(s.RescueBatch))
	v.positiveDuration("scheduler (internal) catchup_grace", s.CatchupGrace)
	v.positive("archival (internal) max_batches", int64(c.Archival.MaxBatches))
	v.positiveDuration("archival (internal) lock_ttl", c.Archival.LockTTL)

	return v.err()
}

func (c *Config) validateRedis(v *validator) {
	r := c.Redis
	modes := 0
	if r.URL != "" {
		modes++
		u, err := url.Parse(r.URL)
		v.check(err == nil && (u.Scheme == "redis" || u.Scheme == "rediss" || u.Scheme == "unix"), "redis.url",
			"must be a redis://, rediss:// or unix:// URL")
	}
	if len(r.Sentinel.Addrs) > 0 {
		modes++
		for i, a := range r.Sentinel.Addrs {
			v.addr(fmt.Sprintf("redis.sentinel.addrs[%d]", i), a)
		}
		v.check(r.Sentinel.Master != "", "redis.sentinel.master", "must name the master when redis.sentinel.addrs is set")
	} else {
		v.check(r.Sentinel.Master == "", "redis.sentinel.addrs", "must list the Sentinel nodes when redis.sentinel.master is set")
	}
	if len(r.Cluster.Addrs) > 0 {
		modes++
		for i, a := range r.Cluster.Addrs {
			v.addr(fmt.Sprintf("redis.cluster.addrs[%d]", i), a)
		}
	}
	v.check(modes <= 1, "redis", "set only one of redis.url, redis.sentinel.addrs and redis.cluster.addrs")
}

// validator collects every problem so one start shows them all.
type validator struct{ errs []error }

func (v *validator) check(ok bool, path, msg string) {
	if !ok {
		v.errs = append(v.errs, fmt.Errorf("%s: %s", path, msg))
	}
}

func (v *validator) err() error { return errors.Join(v.errs...) }

func (v *validator) positive(path string, n int64) {
	v.check(n > 0, path, fmt.Sprintf("must be greater than 0, got %d", n))
}

func (v *validator) positiveDuration(path string, d time.Duration) {
	v.check(d > 0, path, fmt.Sprintf("must be a positive duration, got %s", FormatDuration(d)))
}

func (v *validator) nonNegativeDuration(path string, d time.Duration) {
	v.check(d >= 0, path, fmt.Sprintf("must not be negative, got %s", FormatDuration(d)))
}

func (v *validator) oneOf(path, got string, allowed ...string) {
	for _, a := range allowed {
		if got == a {
			return
		}
	}
	var shown []string
	for _, a := range allowed {
		if a != "" {
			shown = append(shown, a)
		}
	}
	v.check(false, path, fmt.Sprintf("must be one of %s, got %q", strings.Join(shown, ", "), got))
}

// addr checks a host:port listen or dial address; the host may be empty
// (all interfaces) and port 0 asks the kernel for a free one.
func (v *validator) addr(path, a string) {
	_, port, err := net.SplitHostPort(a)
	if err == nil {
		_, err = strconv.ParseUint(port, 10, 16)
	}
	v.check(err == nil, path, fmt.Sprintf("must be host:port, got %q", a))
}

// secret enforces the production rules without ever echoing the value.
func (v *validator) secret(path, s string) {
	switch {
	case s == "":
		v.check(false, path, "is required in production (database.url is set); set it or "+EnvName(strings.SplitN(path, "[", 2)[0]))
	case isExampleSecret(s):
		v.check(false, path, "is an example value from the shipped configuration; generate your own (e.g. openssl rand -hex 32)")
	case len(s) < MinSecretBytes:
		v.check(false, path, fmt.Sprintf("must be at least %d bytes, got %d", MinSecretBytes, len(s)))
	}
}

// frameAncestor reports whether o is an origin a CSP frame-ancestors
// directive may list: http or https, a host whose first label may be "*",
// an optional port, and nothing else. Keywords ('self', 'none'), bare
// hosts, paths, and spaces or semicolons (which would start another source
// or directive) are refused.
func frameAncestor(o string) bool {
	if strings.ContainsAny(o, " \t\r\n;,'\"") {
		return false
	}
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil || u.Opaque != "" ||
		u.Path != "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return false
	}
	host := strings.TrimPrefix(u.Hostname(), "*.")
	if host == "" || strings.Contains(host, "*") {
		return false
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return false
		}
	}
	return true
}
