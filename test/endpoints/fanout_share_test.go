package endpoints

import (
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/qhronostest"
)

// silentHosts listen on 127.0.0.2, 127.0.0.3, … (n distinct destinations)
// and accept connections that they never answer, as receivers that hang
// do; open counts the connections they hold. At cleanup every connection
// closes, so the hanging deliveries end at once.
func silentHosts(t *testing.T, n int) (urls []string, open *atomic.Int32) {
	t.Helper()
	open = new(atomic.Int32)
	for i := range n {
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.%d:0", i+2))
		require.NoError(t, err)
		var mu sync.Mutex
		var conns []net.Conn
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				mu.Lock()
				conns = append(conns, c)
				mu.Unlock()
				open.Add(1)
			}
		}()
		t.Cleanup(func() {
			_ = ln.Close()
			mu.Lock()
			defer mu.Unlock()
			for _, c := range conns {
				_ = c.Close()
			}
		})
		urls = append(urls, "http://"+ln.Addr().String()+"/hook")
	}
	return urls, open
}

// TestOneSubscribersSilentReceiversDoNotDelayAnotherTenantsFirings: the
// deliveries of a fan-out take their subscriber's share of the workers, as
// any attempt does. Customer "hog" subscribes 80 endpoints on five hosts
// that accept and never answer; four firings of its topic leave at most
// half the workers hanging on them, and customer "other"'s firing due
// seconds later reaches its receiver on time while they still hang.
func TestOneSubscribersSilentReceiversDoNotDelayAnotherTenantsFirings(t *testing.T) {
	t.Parallel()
	for _, backend := range qhronostest.Backends() {
		t.Run(string(backend), func(t *testing.T) {
			t.Parallel()
			srv := qhronostest.Start(t, backend)
			c := client{t: t, srv: srv}
			for _, topic := range []string{"hog.tick", "other.tick"} {
				require.Equal(t, http.StatusCreated, c.call("POST", "/topics", map[string]any{"name": topic}, nil))
			}
			subscribe := func(topic, url, tag string) {
				ep := c.createEndpoint(map[string]any{"name": tag, "url": url, "tags": []string{tag}})
				require.Equal(t, http.StatusCreated, c.call("POST", "/subscriptions", map[string]any{"topic": topic,
					"endpoint_id": ep.ID, "tags": []string{tag}}, nil))
			}
			silent, open := silentHosts(t, 5)
			for i := range 20 {
				subscribe("hog.tick", silent[i%len(silent)], "hog")
			}
			rc := qhronostest.NewReceiver(t)
			subscribe("other.tick", rc.URL, "other")

			fire := func(topic, tag string, at time.Time) string {
				var ev struct {
					ID string `json:"id"`
				}
				require.Equal(t, http.StatusCreated, c.call("POST", "/events", map[string]any{"name": tag,
					"start_time": at.UTC().Format(time.RFC3339Nano), "topic": topic, "tags": []string{tag},
					"timeout": "30s", "retry": map[string]any{"max_attempts": 1}}, &ev))
				return ev.ID
			}
			// Instants a few seconds ahead: a create must still find them in
			// the future on a busy machine. Four firings × 20 subscribers
			// are more deliveries than the 64 workers.
			at := time.Now().Add(3 * time.Second)
			for range 4 {
				fire("hog.tick", "hog", at)
			}
			require.True(t, qhronostest.Eventually(60*time.Second, nil, func() bool { return open.Load() >= 32 }),
				"the silent hosts hold the hog's deliveries")

			due := time.Now().Add(3 * time.Second)
			fire("other.tick", "other", due)
			require.True(t, qhronostest.Eventually(60*time.Second, nil, func() bool { return len(rc.Requests()) > 0 }),
				"the other tenant's firing never arrived")
			late := rc.Requests()[0].At.Sub(due)
			require.Less(t, late, 5*time.Second, "the other tenant's firing is received on time, not after the hog's 30 s timeouts")
			require.LessOrEqual(t, open.Load(), int32(32), "the hog's deliveries never held more than half the workers")
		})
	}
}
