// Package config turns defaults, an optional YAML file, QHRONOS_* environment
// variables and a few command-line flags into one Config, validates it, and
// bootstraps the embedded deployment's data directory (lock and secrets).
//
// The struct below is the single source of truth: YAML keys, environment
// variable names and the unknown-key check are all derived from its `yaml`
// tags by reflection, so they cannot drift apart.
package config

import (
	"net"
	"net/netip"
	"strings"
	"time"
)

// Config is the whole server configuration. Durations accept Go syntax plus a
// leading day count ("30d", "1d12h"); lists come from YAML sequences or
// comma-separated environment values.
type Config struct {
	Server    ServerConfig    `yaml:"server"`
	Log       LogConfig       `yaml:"log"`
	Database  DatabaseConfig  `yaml:"database"`
	Redis     RedisConfig     `yaml:"redis"`
	Auth      AuthConfig      `yaml:"auth"`
	HMAC      HMACConfig      `yaml:"hmac"`
	Secrets   SecretsConfig   `yaml:"secrets"`
	Outbound  OutboundConfig  `yaml:"outbound"`
	Scheduler SchedulerConfig `yaml:"scheduler"`
	Actions   ActionsConfig   `yaml:"actions"`
	WebSocket WebSocketConfig `yaml:"websocket"`
	Retry     RetryConfig     `yaml:"retry"`
	RateLimit RateLimitConfig `yaml:"ratelimit"`
	Archival  ArchivalConfig  `yaml:"archival"`
	Metrics   MetricsConfig   `yaml:"metrics"`
	Endpoints EndpointsConfig `yaml:"endpoints"`

	Notifications NotificationsConfig `yaml:"notifications"`
	Console       ConsoleConfig       `yaml:"console"`
}

// ConsoleConfig is the web console's session cookie policy and the
// portal's framing.
type ConsoleConfig struct {
	// SecureCookie is "auto" (Secure when the request came over TLS, seen
	// directly or as X-Forwarded-Proto: https from server.trusted_proxies)
	// or "always" (behind any TLS-terminating proxy not listed there).
	SecureCookie string       `yaml:"secure_cookie"`
	Portal       PortalConfig `yaml:"portal"`
}

// PortalConfig is the portal's (/portal, opened by POST /portal-links).
type PortalConfig struct {
	// FrameAncestors are the origins (https://app.example.com, or with a
	// wildcard subdomain https://*.example.com) whose pages may show the
	// portal in an iframe: its pages' CSP frame-ancestors. Empty: none.
	FrameAncestors []string `yaml:"frame_ancestors"`
}

// EndpointsConfig holds the defaults of every endpoint's circuit breaker
// (an endpoint's own "circuit" overrides them field by field).
type EndpointsConfig struct {
	Circuit CircuitConfig `yaml:"circuit"`
}

// CircuitConfig says when an endpoint's circuit opens and what follows.
type CircuitConfig struct {
	// Failures is the run of consecutive failed attempts that opens it.
	Failures int `yaml:"failures"`
	// FailureRatio opens it when this share of the attempts in Window
	// failed, once MinRequests were made there.
	FailureRatio float64       `yaml:"failure_ratio"`
	MinRequests  int           `yaml:"min_requests"`
	Window       time.Duration `yaml:"window"`
	// CoolDown is how long an open circuit holds deliveries before one
	// trial delivery may go.
	CoolDown time.Duration `yaml:"cool_down"`
	// DisableAfter disables an endpoint whose circuit stayed open this long.
	DisableAfter time.Duration `yaml:"disable_after"`
}

// ServerConfig is the HTTP listener and the embedded data directory.
type ServerConfig struct {
	// Addr is host:port to listen on; the loopback default keeps a fresh
	// embedded install private.
	Addr string `yaml:"addr"`
	// DataDir holds the SQLite database, the lock file and generated secrets
	// in the embedded deployment.
	DataDir string `yaml:"data_dir"`
	// TrustedProxies are the peers whose X-Forwarded-For is believed; empty
	// means the client address is always the TCP peer (no spoofing).
	TrustedProxies []netip.Prefix `yaml:"trusted_proxies"`
	// MaxBodyBytes caps request bodies (413 above it).
	MaxBodyBytes int64 `yaml:"max_body_bytes"`
	// MaxBatchBodyBytes caps the body of a batch create (POST
	// /events/batch: up to 1,000 events, each within MaxBodyBytes).
	MaxBatchBodyBytes int64 `yaml:"max_batch_body_bytes"`
	// MaxHeaderBytes caps request headers (431 above it).
	MaxHeaderBytes int `yaml:"max_header_bytes"`
	// ReadHeaderTimeout closes slowloris clients that trickle headers.
	ReadHeaderTimeout time.Duration `yaml:"read_header_timeout"`
	// ReadTimeout bounds reading a whole request, body included.
	ReadTimeout time.Duration `yaml:"read_timeout"`
	// WriteTimeout bounds writing a response (hijacked WebSocket connections
	// manage their own deadlines).
	WriteTimeout time.Duration `yaml:"write_timeout"`
	// IdleTimeout closes idle keep-alive connections.
	IdleTimeout time.Duration `yaml:"idle_timeout"`
	// ShutdownTimeout bounds the graceful stop of the HTTP server.
	ShutdownTimeout time.Duration `yaml:"shutdown_timeout"`
	// AllowedOrigins lists browser origins (or host patterns) allowed to open
	// /ws; empty allows only same-host origins and non-browser clients.
	AllowedOrigins []string `yaml:"allowed_origins"`
	// PublicURL is the address receivers reach this API at
	// (https://qhronos.example.com): a callback event's deliveries link
	// their run's complete and heartbeat URLs under it. Empty: http:// and
	// the listen address (localhost for an unspecified host).
	PublicURL string `yaml:"public_url"`
}

// APIBaseURL is the base of the links deliveries carry back to this API:
// server.public_url, else http:// and the listen address.
func (c *Config) APIBaseURL() string {
	if u := strings.TrimRight(c.Server.PublicURL, "/"); u != "" {
		return u
	}
	host, port, err := net.SplitHostPort(c.Server.Addr)
	if err != nil {
		return "http://" + c.Server.Addr
	}
	if ip, err := netip.ParseAddr(host); host == "" || (err == nil && ip.IsUnspecified()) {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// LogConfig selects zap's level and encoding.
type LogConfig struct {
	// Level is debug, info, warn or error.
	Level string `yaml:"level"`
	// Format is console or json; empty picks console for the embedded
	// deployment and json for production (Load resolves it).
	Format string `yaml:"format"`
	// Deliveries logs one line per delivery attempt in production (the
	// embedded default always does).
	Deliveries bool `yaml:"deliveries"`
}

// DatabaseConfig selects the store: a postgres:// URL means PostgreSQL
// (production); empty means SQLite inside server.data_dir.
type DatabaseConfig struct {
	URL          string `yaml:"url"`
	MaxOpenConns int    `yaml:"max_open_conns"`
	// ConnectTimeout bounds the whole first connection attempt, so a wrong
	// URL fails fast instead of hanging the start.
	ConnectTimeout time.Duration `yaml:"connect_timeout"`
	// AsyncOutcomeCommit commits outcome transactions with PostgreSQL's
	// synchronous_commit = off: fewer WAL flushes to wait for, at the risk
	// that a database crash forgets the last moments of outcomes; those
	// occurrences are sent again, with the same delivery id, never lost.
	AsyncOutcomeCommit bool `yaml:"async_outcome_commit"`
}

// RedisConfig selects coordination: one of url, sentinel or cluster; none
// means in-process coordination (single instance only).
type RedisConfig struct {
	URL      string              `yaml:"url"`
	Sentinel RedisSentinelConfig `yaml:"sentinel"`
	Cluster  RedisClusterConfig  `yaml:"cluster"`
	// Password authenticates Sentinel/Cluster nodes (a url carries its own).
	Password string `yaml:"password"`
	// Prefix namespaces every key so several deployments can share a server.
	Prefix string `yaml:"prefix"`
}

// RedisSentinelConfig names the Sentinel nodes and the monitored master.
type RedisSentinelConfig struct {
	Addrs  []string `yaml:"addrs"`
	Master string   `yaml:"master"`
}

// RedisClusterConfig names the seed nodes of a Redis Cluster.
type RedisClusterConfig struct {
	Addrs []string `yaml:"addrs"`
}

// AuthConfig holds the master token and the JWT signing parameters.
type AuthConfig struct {
	MasterToken string `yaml:"master_token"`
	JWTSecret   string `yaml:"jwt_secret"`
	// JWTPreviousSecrets still verify tokens signed before a rotation.
	JWTPreviousSecrets []string      `yaml:"jwt_previous_secrets"`
	Issuer             string        `yaml:"issuer"`
	Audience           string        `yaml:"audience"`
	TokenMaxTTL        time.Duration `yaml:"token_max_ttl"`
}

// HMACConfig holds the signing secret used when an event has none.
type HMACConfig struct {
	DefaultSecret string `yaml:"default_secret"`
}

// SecretsConfig holds the key that encrypts stored per-event secrets.
type SecretsConfig struct {
	EncryptionKey string `yaml:"encryption_key"`
}

// OutboundConfig governs requests the server makes to receivers.
type OutboundConfig struct {
	// AllowCIDRs re-opens otherwise blocked ranges (loopback, private, …).
	AllowCIDRs []netip.Prefix `yaml:"allow_cidrs"`
	// AllowCoordinationRedis lets destinations reach the coordination
	// Redis (refused by default even inside AllowCIDRs); stream keys under
	// redis.prefix stay refused.
	AllowCoordinationRedis bool `yaml:"allow_coordination_redis"`
	// MaxPerHost caps concurrent requests to one destination host.
	MaxPerHost int `yaml:"max_per_host"`
	// ResponseExcerptBytes is how much of a response body is read and kept.
	ResponseExcerptBytes int64 `yaml:"response_excerpt_bytes"`
	// RecordRequests keeps, with each attempt, the request it sent
	// (method, URL, headers, body up to 64 KiB), secrets redacted.
	RecordRequests bool `yaml:"record_requests"`
}

// SchedulerConfig tunes expansion, dispatch, leases and catch-up.
type SchedulerConfig struct {
	Lookahead             time.Duration `yaml:"lookahead"`
	ExpansionInterval     time.Duration `yaml:"expansion_interval"`
	MaxRowsPerEventWindow int           `yaml:"max_rows_per_event_window"`
	MaxSleep              time.Duration `yaml:"max_sleep"`
	ClaimBatch            int           `yaml:"claim_batch"`
	ClaimAhead            time.Duration `yaml:"claim_ahead"`
	// Lease is how long a claimed occurrence stays one instance's without
	// a renewal; LeaseRenewInterval is the heartbeat that renews the
	// leases of everything in flight (shorter than Lease).
	Lease              time.Duration `yaml:"lease"`
	LeaseRenewInterval time.Duration `yaml:"lease_renew_interval"`
	RescuerInterval    time.Duration `yaml:"rescuer_interval"`
	DrainTimeout       time.Duration `yaml:"drain_timeout"`
	CatchupWindow      time.Duration `yaml:"catchup_window"`
	// Workers is the global number of concurrent action executions.
	Workers int `yaml:"workers"`
	// ScopeShare and DestinationShare are the fractions of Workers one
	// tenant (tag scope) and one destination host may hold at once, so a
	// tenant whose receivers hang slows only itself.
	ScopeShare       float64 `yaml:"scope_share"`
	DestinationShare float64 `yaml:"destination_share"`
	// Dispatch false makes an API-only instance that never fires
	// occurrences (others do); it still expands and rescues.
	Dispatch bool `yaml:"dispatch"`
	// MinInterval rejects recurrences firing more often than this.
	MinInterval time.Duration `yaml:"min_interval"`
	// MaxCount rejects RRULE COUNT values above this.
	MaxCount int `yaml:"max_count"`

	// Internal tunables: defaults here, not settable.
	ExpandBatch int `yaml:"-"` // events read per expander query
	RecordBatch int `yaml:"-"` // outcomes per write
	// RecordInterval is the longest an outcome waits to be written: 25 ms,
	// not 5, since under steady load a transaction carried about eight
	// outcomes and its statements cost more than the rows (#36).
	RecordInterval time.Duration `yaml:"-"`
	RescueBatch    int           `yaml:"-"` // rows per rescue statement
	CatchupGrace   time.Duration `yaml:"-"` // lateness before a first attempt is overdue
}

// ActionsConfig bounds one delivery attempt.
type ActionsConfig struct {
	AttemptTimeout time.Duration `yaml:"attempt_timeout"`
	// MaxAttemptTimeout is the ceiling for an event's own timeout.
	MaxAttemptTimeout time.Duration `yaml:"max_attempt_timeout"`
}

// WebSocketConfig bounds the /ws handshake and acknowledgements.
type WebSocketConfig struct {
	HandshakeTimeout time.Duration `yaml:"handshake_timeout"`
	AckTimeout       time.Duration `yaml:"ack_timeout"`
}

// RetryConfig is the default retry policy of an event.
type RetryConfig struct {
	MaxAttempts    int           `yaml:"max_attempts"`
	InitialBackoff time.Duration `yaml:"initial_backoff"`
	MaxBackoff     time.Duration `yaml:"max_backoff"`
	// MaxRetryAfter caps how long a receiver's Retry-After is honoured.
	MaxRetryAfter time.Duration `yaml:"max_retry_after"`
}

// RateLimitConfig is the per-principal API rate limit.
type RateLimitConfig struct {
	Rate        float64 `yaml:"rate"`
	Burst       int     `yaml:"burst"`
	LimitMaster bool    `yaml:"limit_master"`
}

// ArchivalConfig moves old occurrences and attempts to the archive and
// eventually purges them.
type ArchivalConfig struct {
	Enabled    bool          `yaml:"enabled"`
	Retention  time.Duration `yaml:"retention"`
	PurgeAfter time.Duration `yaml:"purge_after"`
	Interval   time.Duration `yaml:"interval"`
	BatchSize  int           `yaml:"batch_size"`

	// Internal tunables: defaults here, not settable.
	MaxBatches int           `yaml:"-"` // batches per phase of one run
	LockTTL    time.Duration `yaml:"-"` // lease on the "archiver" lock
}

// MetricsConfig protects /metrics; an empty token leaves it public.
type MetricsConfig struct {
	Token string `yaml:"token"`
	// EndpointIDs are the endpoints that get their own series in the
	// per-endpoint metrics; all others are counted as "other", so the
	// number of series stays bounded.
	EndpointIDs []string `yaml:"endpoint_ids"`
}
