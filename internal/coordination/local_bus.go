package coordination

import (
	"context"
	"sync"
)

// subscriberBuffer is how many messages a subscriber may fall behind before
// it starts missing them. Messages are wake-ups and notices (best effort by
// contract), so a slow subscriber loses messages rather than stalling every
// publisher, and through them the API and the dispatcher.
const subscriberBuffer = 64

// localBus fans each published message out to the subscribers of its channel
// in this process. Sends never block: a subscriber whose buffer is full drops
// the message.
type localBus struct {
	mu     sync.Mutex
	subs   map[string]map[chan []byte]struct{}
	closed bool
	done   chan struct{} // closed by close, ending the per-subscription watchers
}

func newLocalBus() *localBus {
	return &localBus{subs: make(map[string]map[chan []byte]struct{}), done: make(chan struct{})}
}

// Publish implements Bus. Each subscriber gets its own copy of a payload.
func (b *localBus) Publish(_ context.Context, channel string, payloads ...[]byte) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return ErrClosed
	}
	for _, payload := range payloads {
		for ch := range b.subs[channel] {
			select {
			case ch <- append([]byte(nil), payload...):
			default: // slow subscriber: drop rather than block the publisher
			}
		}
	}
	return nil
}

// Subscribe implements Bus. The returned channel closes when ctx ends or the
// bus is closed.
func (b *localBus) Subscribe(ctx context.Context, channel string) (<-chan []byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ch := make(chan []byte, subscriberBuffer)
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, ErrClosed
	}
	if b.subs[channel] == nil {
		b.subs[channel] = make(map[chan []byte]struct{})
	}
	b.subs[channel][ch] = struct{}{}
	b.mu.Unlock()

	go func() {
		select {
		case <-ctx.Done():
			b.unsubscribe(channel, ch)
		case <-b.done:
		}
	}()
	return ch, nil
}

// unsubscribe removes and closes ch unless close already did.
func (b *localBus) unsubscribe(channel string, ch chan []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	set, ok := b.subs[channel]
	if !ok {
		return
	}
	if _, ok := set[ch]; !ok {
		return
	}
	delete(set, ch)
	if len(set) == 0 {
		delete(b.subs, channel)
	}
	close(ch)
}

// close closes every subscription and refuses further use.
func (b *localBus) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.closed = true
	close(b.done)
	for _, set := range b.subs {
		for ch := range set {
			close(ch)
		}
	}
	b.subs = nil
}
