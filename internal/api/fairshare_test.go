package api

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/qhronos/qhronos/internal/coordination"
	"github.com/qhronos/qhronos/internal/coordination/coordinationtest"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/repository/repositorytest"
)

// silentPeer accepts TCP connections and never answers, as a receiver that
// hangs does; it counts the connections it holds open.
type silentPeer struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
	open  *atomic.Int32
}

// silentPeers listens on 127.0.0.2, 127.0.0.3, … (n distinct hosts); at
// cleanup it closes every connection, so hanging attempts end at once.
func silentPeers(t *testing.T, n int) ([]*silentPeer, *atomic.Int32) {
	t.Helper()
	var open atomic.Int32
	peers := make([]*silentPeer, n)
	for i := range n {
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.%d:0", i+2))
		require.NoError(t, err)
		p := &silentPeer{ln: ln, open: &open}
		peers[i] = p
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				p.mu.Lock()
				p.conns = append(p.conns, c)
				p.mu.Unlock()
				open.Add(1)
			}
		}()
		t.Cleanup(func() {
			_ = ln.Close()
			p.mu.Lock()
			defer p.mu.Unlock()
			for _, c := range p.conns {
				_ = c.Close()
			}
		})
	}
	return peers, &open
}

// Issue #34: a tenant (a write token scoped to one tag) whose 85 webhooks go
// to five hosts that accept and never answer takes at most its share of the
// dispatch workers; another tenant's webhook due seconds later is received
// on time while the silent peers still hold the first tenant's attempts,
// and /status names the stuck destinations to an operator only.
func TestOneTenantsSilentReceiversDoNotDelayAnother(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  func(t *testing.T) *env
	}{
		{"sqlite", func(t *testing.T) *env { return newEnv(t, repositorytest.SQLite) }},
		{"postgres+redis", func(t *testing.T) *env {
			client, prefix := coordinationtest.RedisClient(t)
			coord := coordination.NewRedis(client, prefix, zap.NewNop())
			t.Cleanup(func() { _ = coord.Close() })
			return newEnv(t, func(tb testing.TB) *repository.Store { return repositorytest.Postgres(tb) },
				withCoordinator(coord, "instance-a"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := tc.env(t)
			var mu sync.Mutex
			var arrived time.Time
			got := make(chan struct{})
			receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				defer mu.Unlock()
				if arrived.IsZero() {
					arrived = time.Now()
					close(got)
				}
			}))
			t.Cleanup(receiver.Close)
			peers, open := silentPeers(t, 5)
			e.sched.Start(context.Background())

			hog := e.mint("write", []string{"hog"})
			other := e.mint("write", []string{"other"})
			// Instants a few seconds ahead: a create must still find them in
			// the future on a busy machine.
			at := time.Now().Add(3 * time.Second).UTC().Format(time.RFC3339Nano)
			var batch []map[string]any
			for i := range 85 {
				batch = append(batch, map[string]any{"name": fmt.Sprintf("hang-%d", i), "start_time": at,
					"webhook": "http://" + peers[i%5].ln.Addr().String() + "/hook", "tags": []string{"hog"},
					"timeout": "20s", "retry": map[string]any{"max_attempts": 1}})
			}
			res := e.do("POST", "/events/batch", hog, map[string]any{"events": batch})
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			var out struct {
				Results []struct {
					Status int `json:"status"`
				} `json:"results"`
			}
			res.json(t, &out)
			for i, r := range out.Results {
				require.Equal(t, http.StatusCreated, r.Status, "item %d", i)
			}
			// The tenant's attempts hang: its share of the 64 workers is busy.
			require.Eventually(t, func() bool { return open.Load() >= 32 }, 60*time.Second, 10*time.Millisecond,
				"the silent peers hold the tenant's attempts")

			due := time.Now().Add(3 * time.Second)
			e.createEvent(other, map[string]any{"name": "on time", "tags": []string{"other"},
				"start_time": due.UTC().Format(time.RFC3339Nano), "webhook": receiver.URL + "/hook"})
			select {
			case <-got:
			case <-time.After(60 * time.Second):
				t.Fatal("the other tenant's webhook never arrived")
			}
			mu.Lock()
			late := arrived.Sub(due)
			mu.Unlock()
			require.Less(t, late, 2*time.Second, "the other tenant's webhook is received on time")
			require.LessOrEqual(t, open.Load(), int32(32), "the tenant never held more than half the workers")
			for _, p := range peers {
				p.mu.Lock()
				n := len(p.conns)
				p.mu.Unlock()
				require.LessOrEqual(t, n, 16, "a destination never held more than a quarter of the workers")
			}

			// Once nothing to them has ended for a while, /status names the
			// silent peers to an operator, and only counts them for others.
			dispatcher := func(token string) map[string]any {
				res := e.do("GET", "/status", token, nil)
				require.Equal(t, http.StatusOK, res.Status)
				var st struct {
					Status    string         `json:"status"`
					Scheduler map[string]any `json:"scheduler"`
				}
				res.json(t, &st)
				require.Equal(t, "ok", st.Status, "a tenant's dead receivers do not make the instance unhealthy")
				return st.Scheduler["dispatcher"].(map[string]any)
			}
			require.Eventually(t, func() bool { return dispatcher(e.master)["stuck_destinations"] == float64(5) },
				15*time.Second, 50*time.Millisecond, "the five silent peers are reported stuck")
			d := dispatcher(e.master)
			require.Equal(t, float64(32), d["largest_scope_workers"])
			require.Equal(t, float64(1), d["scopes_at_share"])
			require.Equal(t, float64(32), d["scope_share"])
			require.Equal(t, float64(16), d["destination_share"])
			require.GreaterOrEqual(t, d["oldest_attempt_ms"], float64(5000))
			names := map[string]bool{}
			for _, x := range d["destinations"].([]any) {
				dl := x.(map[string]any)
				require.Equal(t, true, dl["stuck"])
				names[dl["destination"].(string)] = true
			}
			for _, p := range peers {
				require.True(t, names[p.ln.Addr().String()], "%s named", p.ln.Addr())
			}
			for _, token := range []string{"", other, "not-a-token"} {
				d := dispatcher(token)
				require.NotContains(t, d, "destinations", "destinations are tenant data")
				require.Equal(t, float64(5), d["stuck_destinations"], "the count is not")
			}
			require.Equal(t, http.StatusOK, e.do("GET", "/ready", "", nil).Status, "/ready stays a readiness signal")
		})
	}
}
