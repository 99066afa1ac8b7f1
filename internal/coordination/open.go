package coordination

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
)

// Timeouts of the clients Open builds: short enough that a Redis outage
// degrades requests by about a second instead of hanging them, long enough
// for a busy server.
const (
	redisDialTimeout = 2 * time.Second
	redisIOTimeout   = time.Second
	redisPoolSize    = 32
	redisPoolTimeout = 2 * time.Second
	redisRetries     = 2
)

// RedisConfig selects the Redis deployment (config keys `redis.url`,
// `redis.sentinel.*`, `redis.cluster.*`). Exactly one topology is used:
// Cluster when Cluster.Addrs is set, else Sentinel when Sentinel.Addrs is
// set, else the single server of URL. With Sentinel or Cluster, URL (when
// set) supplies only credentials, database and TLS (rediss://); its host is
// ignored.
type RedisConfig struct {
	URL      string         `yaml:"url"`
	Sentinel SentinelConfig `yaml:"sentinel"`
	Cluster  ClusterConfig  `yaml:"cluster"`
}

// SentinelConfig names the Sentinel nodes and the monitored master.
type SentinelConfig struct {
	MasterName string   `yaml:"master_name"`
	Addrs      []string `yaml:"addrs"`
	// Password authenticates to the Sentinels, and to the master too
	// unless URL carries the master's credentials.
	Password string `yaml:"password"`
}

// ClusterConfig lists seed nodes of a Redis Cluster.
type ClusterConfig struct {
	Addrs []string `yaml:"addrs"`
	// Password authenticates to the nodes unless URL carries credentials.
	Password string `yaml:"password"`
}

// Enabled reports whether any Redis is configured; without one the
// deployment uses the in-process coordinator.
func (c RedisConfig) Enabled() bool {
	return c.URL != "" || len(c.Sentinel.Addrs) > 0 || len(c.Cluster.Addrs) > 0
}

// NewRedisClient builds the client for cfg without connecting (go-redis
// dials lazily). Configuration errors name the offending key.
func NewRedisClient(cfg RedisConfig) (redis.UniversalClient, error) {
	base := &redis.Options{}
	if cfg.URL != "" {
		opts, err := redis.ParseURL(cfg.URL)
		if err != nil {
			return nil, fmt.Errorf("redis.url: %w", redactURLError(err))
		}
		base = opts
	}
	uo := &redis.UniversalOptions{
		Username:     base.Username,
		Password:     base.Password,
		DB:           base.DB,
		TLSConfig:    base.TLSConfig,
		DialTimeout:  redisDialTimeout,
		ReadTimeout:  redisIOTimeout,
		WriteTimeout: redisIOTimeout,
		PoolSize:     redisPoolSize,
		PoolTimeout:  redisPoolTimeout,
		// Few retries: an outage should surface quickly so callers degrade
		// (rate limiter to in-process, wake-ups to polling) instead of waiting.
		MaxRetries:         redisRetries,
		DialerRetries:      redisRetries,
		DialerRetryTimeout: 100 * time.Millisecond,
	}
	switch {
	case len(cfg.Cluster.Addrs) > 0:
		if base.DB != 0 {
			return nil, fmt.Errorf("redis.url: database %d: Redis Cluster has only database 0", base.DB)
		}
		uo.Addrs = cfg.Cluster.Addrs
		uo.IsClusterMode = true
		if uo.Password == "" {
			uo.Password = cfg.Cluster.Password
		}
		return redis.NewUniversalClient(uo), nil
	case len(cfg.Sentinel.Addrs) > 0:
		if cfg.Sentinel.MasterName == "" {
			return nil, fmt.Errorf("redis.sentinel.master_name: must be set with redis.sentinel.addrs")
		}
		uo.Addrs = cfg.Sentinel.Addrs
		uo.MasterName = cfg.Sentinel.MasterName
		uo.SentinelPassword = cfg.Sentinel.Password
		if uo.Password == "" {
			uo.Password = cfg.Sentinel.Password
		}
		return redis.NewUniversalClient(uo), nil
	case cfg.URL != "":
		uo.Addrs = []string{base.Addr}
		return redis.NewUniversalClient(uo), nil
	default:
		return nil, fmt.Errorf("redis.url: must be set (or redis.sentinel.addrs or redis.cluster.addrs)")
	}
}

// Open builds the client for cfg and a Redis coordinator on it under prefix;
// closing the coordinator closes the client. An unreachable Redis is not an
// error here: the server starts degraded (wake-ups by polling, in-process
// rate limits) and recovers when Redis answers, so Open logs a warning.
func Open(ctx context.Context, cfg RedisConfig, prefix string, logger *zap.Logger, opts ...RedisOption) (*Redis, error) {
	client, err := NewRedisClient(cfg)
	if err != nil {
		return nil, err
	}
	r := NewRedis(client, prefix, logger, opts...)
	r.ownsConn = true
	pingCtx, cancel := context.WithTimeout(ctx, redisDialTimeout+redisIOTimeout)
	defer cancel()
	if err := r.Ping(pingCtx); err != nil {
		r.logger.Warn("redis unreachable at start, running degraded", zap.Error(err))
	}
	return r, nil
}

// redactURLError drops the URL that url.Error quotes, so a password in a
// malformed redis.url never reaches an error message or a log.
func redactURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
