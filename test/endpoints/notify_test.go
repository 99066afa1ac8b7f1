package endpoints

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/notify/notifytest"
	"github.com/qhronos/qhronos/internal/qhronostest"
)

// TestOperatorsAreNotified: channels added through /notification-channels
// receive, by signed webhook and by mail, the circuit of a failing endpoint
// opening and closing, and a digest of a delivery that failed after its
// last retry.
func TestOperatorsAreNotified(t *testing.T) {
	t.Parallel()
	for _, backend := range qhronostest.Backends() {
		t.Run(string(backend), func(t *testing.T) {
			t.Parallel()
			mb := notifytest.NewMailbox(t, notifytest.Options{})
			srv := qhronostest.Start(t, backend, "QHRONOS_NOTIFICATIONS_SMTP_ADDR="+mb.Addr,
				"QHRONOS_NOTIFICATIONS_SMTP_TLS=none", "QHRONOS_NOTIFICATIONS_SMTP_FROM=qhronos@example.com",
				"QHRONOS_NOTIFICATIONS_DIGEST_INTERVAL=1s", "QHRONOS_NOTIFICATIONS_MIN_INTERVAL=1s")
			c := client{t: t, srv: srv}
			ops := qhronostest.NewReceiver(t)
			var hook struct {
				ID     string `json:"id"`
				Secret string `json:"secret"`
			}
			require.Equal(t, http.StatusCreated, c.call("POST", "/notification-channels",
				map[string]any{"name": "ops-hook", "type": "webhook", "url": ops.URL}, &hook))
			require.True(t, strings.HasPrefix(hook.Secret, "whsec_"))
			require.Equal(t, http.StatusCreated, c.call("POST", "/notification-channels",
				map[string]any{"name": "oncall", "type": "email", "to": []string{"oncall@example.com"}}, nil))

			rc := qhronostest.NewReceiver(t)
			var mu sync.Mutex
			down := true
			rc.Answer(func(qhronostest.Request) int {
				mu.Lock()
				defer mu.Unlock()
				if down {
					return http.StatusBadGateway
				}
				return http.StatusOK
			})
			ep := c.createEndpoint(map[string]any{"name": "orders", "url": rc.URL,
				"circuit": map[string]any{"failures": 2, "cool_down": "1s"}})
			at := time.Now().Add(1500 * time.Millisecond)
			retry := map[string]any{"retry": map[string]any{"max_attempts": 30, "initial_backoff": "1s", "max_backoff": "1s"}}
			events := []string{c.onceAt("orders-1", ep.ID, at, retry), c.onceAt("orders-2", ep.ID, at, retry)}
			// One event gives up at once: its failure is reported in a digest.
			doomed := c.onceAt("orders-doomed", ep.ID, at, map[string]any{"retry": map[string]any{"max_attempts": 1}})

			qhronostest.Wait(t, 60*time.Second, "the circuit-opened mail", func() bool {
				_, ok := mb.Find("circuit opened")
				return ok
			})
			mu.Lock()
			down = false
			mu.Unlock()
			c.settled(events, 30*time.Second, "completed")
			c.settled([]string{doomed}, 5*time.Second, "failed")

			qhronostest.Wait(t, 60*time.Second, "the circuit-closed mail and the failure digest", func() bool {
				_, closed := mb.Find("circuit closed")
				digest := false
				for _, s := range mb.Subjects() {
					digest = digest || strings.Contains(strings.ToLower(s), "fail")
				}
				return closed && digest
			})
			opened, _ := mb.Find("circuit opened")
			require.Equal(t, []string{"oncall@example.com"}, opened.To)
			require.Contains(t, opened.Subject, "orders")
			require.Contains(t, opened.Body, "502")

			qhronostest.Wait(t, 60*time.Second, "the webhook notices", func() bool {
				kinds := map[string]bool{}
				for _, r := range ops.Requests() {
					var n struct {
						Type string `json:"type"`
					}
					if json.Unmarshal(r.Body, &n) == nil {
						kinds[n.Type] = true
					}
				}
				return kinds["circuit_opened"] && kinds["circuit_closed"] && kinds["delivery_failed"]
			})
			for _, r := range ops.Requests() {
				require.True(t, verifies(t, hook.Secret, r), "every notice is signed with the channel's secret")
			}
		})
	}
}
