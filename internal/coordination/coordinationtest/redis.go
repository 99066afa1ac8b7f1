// Package coordinationtest gives tests Redis to run against: a unique prefix
// on the shared Redis, or a private redis-server they may break. Imported
// only by tests.
package coordinationtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultRedisURL is the shared test Redis; QHRONOS_TEST_REDIS_URL overrides it.
const DefaultRedisURL = "redis://127.0.0.1:6379/0"

// Unavailable fails the test when CI is set and skips it otherwise: in CI a
// missing service is a broken pipeline, on a laptop it is a choice.
func Unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// RedisClient connects to the shared test Redis and returns the client and a
// prefix unique to this test. At cleanup it deletes every key under the
// prefix (SCAN + DEL, never FLUSHALL) and closes the client.
func RedisClient(t testing.TB) (redis.UniversalClient, string) {
	t.Helper()
	url := os.Getenv("QHRONOS_TEST_REDIS_URL")
	if url == "" {
		url = DefaultRedisURL
	}
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatalf("parse QHRONOS_TEST_REDIS_URL: %v", err)
	}
	opts.PoolSize = 64 // concurrency tests hold many connections at once
	client := redis.NewClient(opts)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := client.Ping(ctx).Err(); err != nil {
		_ = client.Close()
		Unavailable(t, "redis at %s unavailable: %v", opts.Addr, err)
	}
	prefix := UniquePrefix(t)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := DeletePrefix(ctx, client, prefix); err != nil {
			t.Errorf("clean redis prefix %s: %v", prefix, err)
		}
		_ = client.Close()
	})
	return client, prefix
}

// UniquePrefix returns a fresh key prefix such as "qtest:1f2e…:"; it
// contains no glob characters, so it can be used in SCAN MATCH.
func UniquePrefix(t testing.TB) string {
	t.Helper()
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatalf("random prefix: %v", err)
	}
	return "qtest:" + hex.EncodeToString(b[:]) + ":"
}

// DeletePrefix deletes every key that starts with prefix, in SCAN batches.
// prefix must not contain glob characters.
func DeletePrefix(ctx context.Context, client redis.UniversalClient, prefix string) error {
	var cursor uint64
	for {
		keys, next, err := client.Scan(ctx, cursor, prefix+"*", 500).Result()
		if err != nil {
			return err
		}
		if len(keys) > 0 {
			if err := client.Del(ctx, keys...).Err(); err != nil {
				return err
			}
		}
		if next == 0 {
			return nil
		}
		cursor = next
	}
}

// RedisPeer opens a second connection pool to the Redis client talks to, as
// a second instance of the server would have; it is closed at cleanup.
func RedisPeer(t testing.TB, client redis.UniversalClient) redis.UniversalClient {
	t.Helper()
	c, ok := client.(*redis.Client)
	if !ok {
		t.Fatalf("redis peer: want a *redis.Client, got %T", client)
	}
	opts := *c.Options()
	opts.Dialer = nil // the copied dialer is bound to the first client
	peer := redis.NewClient(&opts)
	t.Cleanup(func() { _ = peer.Close() })
	return peer
}
