package config

import "time"

// Day is 24 hours, the unit of the "d" duration suffix.
const Day = 24 * time.Hour

// Default returns the configuration used when nothing is set: the embedded
// deployment on loopback with the product defaults from spec/API.md. The
// repository's config.yaml mirrors it key for key (a test enforces that).
func Default() *Config {
	return &Config{
		Server: ServerConfig{
			Addr:              "127.0.0.1:8080",
			DataDir:           "./data",
			TrustedProxies:    nil,
			MaxBodyBytes:      1 << 20,
			MaxBatchBodyBytes: 16 << 20,
			MaxHeaderBytes:    64 << 10,
			ReadHeaderTimeout: 5 * time.Second,
			ReadTimeout:       30 * time.Second,
			WriteTimeout:      60 * time.Second,
			IdleTimeout:       120 * time.Second,
			ShutdownTimeout:   30 * time.Second,
			AllowedOrigins:    nil,
		},
		Log: LogConfig{Level: "info", Format: "", Deliveries: false},
		Database: DatabaseConfig{
			URL:            "",
			MaxOpenConns:   20,
			ConnectTimeout: 10 * time.Second,
		},
		Redis: RedisConfig{Prefix: "qhronos:"},
		Auth: AuthConfig{
			Issuer:      "qhronos",
			Audience:    "qhronos",
			TokenMaxTTL: 365 * Day,
		},
		Outbound: OutboundConfig{
			MaxPerHost:           16,
			ResponseExcerptBytes: 64 << 10,
			RecordRequests:       true,
		},
		Scheduler: SchedulerConfig{
			Lookahead:             24 * time.Hour,
			ExpansionInterval:     time.Minute,
			MaxRowsPerEventWindow: 1000,
			MaxSleep:              time.Second,
			ClaimBatch:            500,
			ClaimAhead:            250 * time.Millisecond,
			Lease:                 10 * time.Second,
			LeaseRenewInterval:    3 * time.Second,
			RescuerInterval:       5 * time.Second,
			DrainTimeout:          30 * time.Second,
			CatchupWindow:         time.Hour,
			Workers:               64,
			ScopeShare:            0.5,
			DestinationShare:      0.25,
			Dispatch:              true,
			MinInterval:           time.Second,
			MaxCount:              100000,
			ExpandBatch:           200,
			RecordBatch:           500,
			RecordInterval:        25 * time.Millisecond,
			RescueBatch:           1000,
			CatchupGrace:          time.Minute,
		},
		Actions: ActionsConfig{
			AttemptTimeout:    30 * time.Second,
			MaxAttemptTimeout: 60 * time.Second,
		},
		WebSocket: WebSocketConfig{
			HandshakeTimeout: 5 * time.Second,
			AckTimeout:       30 * time.Second,
		},
		Retry: RetryConfig{
			MaxAttempts:    5,
			InitialBackoff: 30 * time.Second,
			MaxBackoff:     15 * time.Minute,
			MaxRetryAfter:  time.Hour,
		},
		RateLimit: RateLimitConfig{Rate: 10, Burst: 100, LimitMaster: false},
		Archival: ArchivalConfig{
			Enabled:    true,
			Retention:  30 * Day,
			PurgeAfter: 365 * Day,
			Interval:   time.Hour,
			BatchSize:  1000,
			MaxBatches: 1000,
			LockTTL:    time.Minute,
		},
		Endpoints: EndpointsConfig{Circuit: CircuitConfig{
			Failures:     5,
			FailureRatio: 0.5,
			MinRequests:  20,
			Window:       time.Minute,
			CoolDown:     30 * time.Second,
			DisableAfter: 3 * Day,
		}},
		Console: ConsoleConfig{SecureCookie: "auto"},
		Notifications: NotificationsConfig{
			SMTP:             SMTPConfig{TLS: "starttls"},
			DigestInterval:   5 * time.Minute,
			MinInterval:      time.Minute,
			UnreachableAfter: time.Minute,
			MissedAfter:      5 * time.Minute,
		},
	}
}
