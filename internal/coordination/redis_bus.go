package coordination

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Publish implements Bus with PUBLISH on the prefixed channel, many
// payloads in one pipeline. It fails when Redis cannot be reached: the
// caller learns that the messages are lost.
func (r *Redis) Publish(ctx context.Context, channel string, payloads ...[]byte) error {
	if r.isClosed() {
		return ErrClosed
	}
	key := r.key("bus", channel)
	var err error
	if len(payloads) == 1 {
		err = r.client.Publish(ctx, key, payloads[0]).Err()
	} else {
		_, err = r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, payload := range payloads {
				p.Publish(ctx, key, payload)
			}
			return nil
		})
	}
	if err != nil {
		return fmt.Errorf("publish on %s: %w", channel, err)
	}
	return nil
}

// subscribeTimeout bounds the wait for Redis to confirm a subscription.
const subscribeTimeout = 5 * time.Second

// Subscribe implements Bus. It returns once Redis has confirmed the
// subscription, so a message published after it returns is delivered. Each
// subscription holds one connection; go-redis re-dials and re-subscribes it
// after a disconnect or a Redis restart (a health-check PING finds dead
// connections), so the channel keeps delivering new messages. Messages
// published while the connection is down are lost (best effort by contract),
// and, as with the in-process bus, a subscriber that falls more than a small
// buffer behind drops messages instead of holding Redis' output buffer.
func (r *Redis) Subscribe(ctx context.Context, channel string) (<-chan []byte, error) {
	ps := r.client.Subscribe(ctx, r.key("bus", channel))
	confirmCtx, cancel := context.WithTimeout(ctx, subscribeTimeout)
	_, err := ps.Receive(confirmCtx)
	cancel()
	if err != nil {
		_ = ps.Close()
		return nil, fmt.Errorf("subscribe to %s: %w", channel, err)
	}
	if !r.track(ps) {
		_ = ps.Close()
		return nil, ErrClosed
	}

	out := make(chan []byte, subscriberBuffer)
	in := ps.Channel()
	go func() {
		defer close(out)
		for {
			select {
			case <-ctx.Done():
				r.untrack(ps)
				_ = ps.Close()
				return
			case msg, ok := <-in:
				if !ok { // Close closed the subscription
					return
				}
				select {
				case out <- []byte(msg.Payload):
				default: // slow subscriber: drop rather than stall the connection
				}
			}
		}
	}()
	return out, nil
}

func (r *Redis) track(ps *redis.PubSub) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	r.subs[ps] = struct{}{}
	return true
}

func (r *Redis) untrack(ps *redis.PubSub) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.subs, ps)
}

func (r *Redis) isClosed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}
