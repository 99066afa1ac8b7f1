package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"
)

// Proxies is the in-process Toxiproxy every link of a network goes
// through.
type Proxies struct {
	server *toxiproxy.ApiServer
}

// NewProxies starts nothing yet: each Link listens on its own address.
func NewProxies() *Proxies {
	return &Proxies{server: toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())}
}

// Link is one proxied path from an instance to a shared service
// (PostgreSQL, Redis or the receivers).
type Link struct {
	t     testing.TB
	proxy *toxiproxy.Proxy

	mu     sync.Mutex
	toxics []string
}

// Link listens on listen (host:port, port 0 for any) and forwards to
// upstream until the test ends.
func (p *Proxies) Link(t testing.TB, name, listen, upstream string) *Link {
	t.Helper()
	px := toxiproxy.NewProxy(p.server, name, listen, upstream)
	if err := px.Start(); err != nil {
		t.Fatalf("proxy %s on %s: %v", name, listen, err)
	}
	t.Cleanup(px.Stop)
	return &Link{t: t, proxy: px}
}

// Addr is where the link listens.
func (l *Link) Addr() string {
	l.proxy.Lock()
	defer l.proxy.Unlock()
	return l.proxy.Listen
}

// Toxic adds a toxic of kind (latency, bandwidth, timeout, slow_close,
// reset_peer, ...) on stream ("upstream": towards the service,
// "downstream": back) to a share of the connections (toxicity 0..1).
func (l *Link) Toxic(kind, stream string, toxicity float64, attrs map[string]any) {
	l.t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	name := fmt.Sprintf("%s_%s_%d", kind, stream, len(l.toxics))
	body, err := json.Marshal(map[string]any{"name": name, "type": kind, "stream": stream, "toxicity": toxicity,
		"attributes": attrs})
	if err != nil {
		l.t.Fatalf("toxic %s: %v", name, err)
	}
	if _, err := l.proxy.Toxics.AddToxicJson(bytes.NewReader(body)); err != nil {
		l.t.Fatalf("toxic %s: %v", name, err)
	}
	l.toxics = append(l.toxics, name)
}

// Cut stops all data both ways without closing anything: connections
// stay open and silent and new ones are accepted but never answered, as
// when packets are dropped on the way.
func (l *Link) Cut() {
	l.t.Helper()
	l.Toxic("timeout", "upstream", 1, map[string]any{"timeout": 0})
	l.Toxic("timeout", "downstream", 1, map[string]any{"timeout": 0})
}

// Heal removes every toxic; connections a cut held are closed by it (the
// peers see them fail as after a partition that outlived TCP's patience).
func (l *Link) Heal() {
	l.mu.Lock()
	defer l.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, name := range l.toxics {
		if err := l.proxy.Toxics.RemoveToxic(ctx, name); err != nil {
			l.t.Errorf("remove toxic %s: %v", name, err)
		}
	}
	l.toxics = nil
}
