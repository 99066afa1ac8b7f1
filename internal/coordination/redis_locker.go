package coordination

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// renewScript extends a lease only for the owner that holds it.
var renewScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
	return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
`)

// unlockScript deletes a lease only for the owner that holds it, so a late
// Unlock from an instance whose lease expired cannot free a successor's.
var unlockScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
	return redis.call('DEL', KEYS[1])
end
return 0
`)

// TryLock implements Locker: SET NX PX takes a free lock; when it is taken,
// the renew script extends it if owner is the holder. Expiry follows Redis'
// clock, so instances with skewed clocks agree.
func (r *Redis) TryLock(ctx context.Context, name, owner string, ttl time.Duration) (bool, error) {
	if err := validateLease(owner, ttl); err != nil {
		return false, fmt.Errorf("lock %s: %w", name, err)
	}
	key := r.key("lock", name)
	ok, err := r.client.SetNX(ctx, key, owner, ttl).Result()
	if err != nil {
		return false, fmt.Errorf("lock %s: %w", name, err)
	}
	if ok {
		return true, nil
	}
	renewed, err := renewScript.Run(ctx, r.client, []string{key}, owner, ttl.Milliseconds()).Int()
	if err != nil {
		return false, fmt.Errorf("renew lock %s: %w", name, err)
	}
	return renewed == 1, nil
}

// Unlock implements Locker; it is a no-op unless owner holds name.
func (r *Redis) Unlock(ctx context.Context, name, owner string) error {
	if err := unlockScript.Run(ctx, r.client, []string{r.key("lock", name)}, owner).Err(); err != nil {
		return fmt.Errorf("unlock %s: %w", name, err)
	}
	return nil
}
