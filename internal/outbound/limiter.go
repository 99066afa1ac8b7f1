package outbound

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"

	"github.com/qhronos/qhronos/internal/redact"
)

// Limiter caps concurrent requests per destination (host:port) so one slow
// receiver cannot take every dispatcher worker. The dispatcher acquires a slot
// around each attempt. Idle destinations cost nothing: a destination's entry
// is dropped when its last holder releases it.
type Limiter struct {
	max int
	mu  sync.Mutex
	dst map[string]*slot
}

type slot struct {
	sem  chan struct{}
	refs int // holders plus waiters
}

// NewLimiter allows max concurrent requests per destination; max <= 0 means
// no limit.
func NewLimiter(max int) *Limiter {
	return &Limiter{max: max, dst: map[string]*slot{}}
}

// Acquire waits for a slot for key (see Destination) or until ctx ends. The
// returned release must be called exactly once; it is safe to call more.
func (l *Limiter) Acquire(ctx context.Context, key string) (release func(), err error) {
	if l.max <= 0 {
		return func() {}, nil
	}
	l.mu.Lock()
	s, ok := l.dst[key]
	if !ok {
		s = &slot{sem: make(chan struct{}, l.max)}
		l.dst[key] = s
	}
	s.refs++
	l.mu.Unlock()

	select {
	case s.sem <- struct{}{}:
		var once sync.Once
		return func() {
			once.Do(func() {
				<-s.sem
				l.unref(key, s)
			})
		}, nil
	case <-ctx.Done():
		l.unref(key, s)
		return nil, fmt.Errorf("wait for a slot to %s: %w", key, ctx.Err())
	}
}

func (l *Limiter) unref(key string, s *slot) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s.refs--
	if s.refs == 0 {
		delete(l.dst, key)
	}
}

// Destination returns the limiter key of a URL: lower-case host and port,
// with the scheme's default port filled in.
func Destination(rawURL string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", fmt.Errorf("parse destination url: %w", redact.URLError(err))
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return net.JoinHostPort(strings.ToLower(u.Hostname()), port), nil
}
