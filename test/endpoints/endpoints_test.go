// Package endpoints tests endpoints as a resource through the public API of
// the real server: events sharing an endpoint and its secret rotation, a
// rate limit held across two instances, the circuit breaker opening,
// trialling and closing with nothing lost, disabling and re-enabling, and
// OAuth2 and mTLS authentication against loopback servers — on both
// stores.
package endpoints

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/qhronostest"
)

func TestMain(m *testing.M) { qhronostest.Main(m) }

// client calls one server's API with the master token.
type client struct {
	t   testing.TB
	srv *qhronostest.Server
}

// call is the server's Call on behalf of the test.
func (c client) call(method, path string, body, out any) int {
	c.t.Helper()
	return c.srv.Call(c.t, method, path, body, out)
}

// endpoint is the part of the endpoint resource these tests read.
type endpoint struct {
	ID     string `json:"id"`
	Secret string `json:"secret"`
	State  string `json:"state"`
	Health struct {
		Attempts            int      `json:"attempts"`
		Succeeded           int      `json:"succeeded"`
		SuccessRatio        *float64 `json:"success_ratio"`
		ConsecutiveFailures int      `json:"consecutive_failures"`
		LastError           string   `json:"last_error"`
		LatencyMS           struct {
			P50 *int64 `json:"p50"`
			P99 *int64 `json:"p99"`
		} `json:"latency_ms"`
	} `json:"health"`
}

func (c client) createEndpoint(body map[string]any) endpoint {
	c.t.Helper()
	var ep endpoint
	require.Equal(c.t, http.StatusCreated, c.call("POST", "/endpoints", body, &ep))
	require.NotEmpty(c.t, ep.ID)
	return ep
}

func (c client) endpoint(id string) endpoint {
	c.t.Helper()
	var ep endpoint
	require.Equal(c.t, http.StatusOK, c.call("GET", "/endpoints/"+id, nil, &ep))
	return ep
}

// onceAt creates a one-time webhook event delivering to endpoint id at at;
// it returns the event id.
func (c client) onceAt(name, endpointID string, at time.Time, extra map[string]any) string {
	c.t.Helper()
	body := map[string]any{"name": name, "start_time": at.UTC().Format(time.RFC3339Nano),
		"action": map[string]any{"type": "webhook", "params": map[string]any{"endpoint_id": endpointID}}}
	for k, v := range extra {
		body[k] = v
	}
	var ev struct {
		ID string `json:"id"`
	}
	require.Equal(c.t, http.StatusCreated, c.call("POST", "/events", body, &ev))
	return ev.ID
}

// occurrence is the part of the occurrence resource these tests read.
type occurrence struct {
	ID           string  `json:"id"`
	Status       string  `json:"status"`
	AttemptCount int     `json:"attempt_count"`
	Reason       *string `json:"reason"`
	Error        *string `json:"error_message"`
}

func (c client) occurrences(eventID string) []occurrence {
	c.t.Helper()
	var page []occurrence
	require.Equal(c.t, http.StatusOK, c.call("GET", "/events/"+eventID+"/occurrences?limit=100", nil, &page))
	return page
}

// settled waits until every occurrence of the events is in one of states.
func (c client) settled(events []string, timeout time.Duration, states ...string) map[string]occurrence {
	c.t.Helper()
	out := map[string]occurrence{}
	var last []occurrence
	settled := qhronostest.Eventually(timeout, nil, func() bool {
		last = nil
		for _, id := range events {
			occs := c.occurrences(id)
			last = append(last, occs...)
			if len(occs) == 0 {
				return false
			}
			for _, o := range occs {
				if !slices.Contains(states, o.Status) {
					return false
				}
				out[o.ID] = o
			}
		}
		return true
	})
	if !settled {
		var seen []string
		for _, o := range last {
			msg := ""
			if o.Error != nil {
				msg = ": " + *o.Error
			}
			seen = append(seen, fmt.Sprintf("%s %s after %d attempts%s", o.ID, o.Status, o.AttemptCount, msg))
		}
		c.t.Fatalf("after %s, not every occurrence is %s:\n%s", timeout, strings.Join(states, " or "), strings.Join(seen, "\n"))
	}
	return out
}

// deliveries groups what a receiver got by webhook-id (the occurrence id).
func deliveries(rc *qhronostest.Receiver) map[string][]qhronostest.Request {
	out := map[string][]qhronostest.Request{}
	for _, r := range rc.Requests() {
		id := r.Header.Get("webhook-id")
		out[id] = append(out[id], r)
	}
	return out
}

// verifies reports whether the request carries a valid signature by secret.
func verifies(t testing.TB, secret string, r qhronostest.Request) bool {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	require.NoError(t, err)
	return wh.Verify(r.Body, r.Header) == nil
}

// TestEventsShareAnEndpointAndItsRotation: three events deliver to one
// endpoint with its secret and headers; after a rotation with grace, each
// delivery is signed by both secrets; the event's own URL is never needed.
func TestEventsShareAnEndpointAndItsRotation(t *testing.T) {
	t.Parallel()
	for _, backend := range qhronostest.Backends() {
		t.Run(string(backend), func(t *testing.T) {
			t.Parallel()
			srv := qhronostest.Start(t, backend)
			c := client{t: t, srv: srv}
			rc := qhronostest.NewReceiver(t)
			ep := c.createEndpoint(map[string]any{"name": "billing", "url": rc.URL,
				"headers": map[string]string{"X-Team": "billing"}})
			require.True(t, strings.HasPrefix(ep.Secret, "whsec_"), "a generated secret is returned once: %q", ep.Secret)
			require.Empty(t, c.endpoint(ep.ID).Secret, "the secret is write-only after create")

			at := time.Now().Add(1500 * time.Millisecond)
			var events []string
			for i := range 3 {
				events = append(events, c.onceAt(fmt.Sprintf("shared-%d", i), ep.ID, at, nil))
			}
			occs := c.settled(events, 20*time.Second, "completed")
			got := deliveries(rc)
			require.Len(t, got, 3)
			for id := range occs {
				require.Len(t, got[id], 1, "occurrence %s delivered once", id)
				r := got[id][0]
				require.True(t, verifies(t, ep.Secret, r), "signed with the endpoint's secret")
				require.Equal(t, "billing", r.Header.Get("X-Team"), "the endpoint's headers")
			}

			var rotated struct {
				Secret string `json:"secret"`
			}
			require.Equal(t, http.StatusOK, c.call("POST", "/endpoints/"+ep.ID+"/rotate-secret",
				map[string]any{"grace": "1h"}, &rotated))
			require.True(t, strings.HasPrefix(rotated.Secret, "whsec_"))
			require.NotEqual(t, ep.Secret, rotated.Secret)

			// The runtime reads the new version within its refresh.
			at = time.Now().Add(2 * time.Second)
			later := []string{c.onceAt("after-rotation-1", ep.ID, at, nil), c.onceAt("after-rotation-2", ep.ID, at, nil)}
			occs = c.settled(later, 20*time.Second, "completed")
			got = deliveries(rc)
			for id := range occs {
				require.Len(t, got[id], 1)
				r := got[id][0]
				require.True(t, verifies(t, rotated.Secret, r), "signed with the new secret")
				require.True(t, verifies(t, ep.Secret, r), "and, during the grace, with the old one")
			}
			health := c.endpoint(ep.ID)
			require.Equal(t, "healthy", health.State)
			require.Equal(t, 5, health.Health.Attempts)
			require.NotNil(t, health.Health.SuccessRatio)
			require.InDelta(t, 1.0, *health.Health.SuccessRatio, 1e-9)
			require.NotNil(t, health.Health.LatencyMS.P99)
		})
	}
}

// TestRateLimitHoldsAcrossTwoInstances: 5/s with a burst of 1, 30
// occurrences due at one instant, two instances claiming them: the
// receiver never sees more than the limit allows in any second, each
// occurrence arrives once and its throttled waits are not attempts.
func TestRateLimitHoldsAcrossTwoInstances(t *testing.T) {
	t.Parallel()
	srv := qhronostest.Start(t, qhronostest.Postgres, qhronostest.WithRedis(t)...)
	srv.Peer(t)
	c := client{t: t, srv: srv}
	rc := qhronostest.NewReceiver(t)
	ep := c.createEndpoint(map[string]any{"name": "throttled", "url": rc.URL,
		"rate_limit": map[string]any{"per_second": 5, "burst": 1}})

	// Far enough ahead that 30 creates fit before it on a busy machine
	// (2 s did not, beside a second test run).
	at := time.Now().Add(10 * time.Second)
	const n = 30
	var events []string
	for i := range n {
		events = append(events, c.onceAt(fmt.Sprintf("burst-%d", i), ep.ID, at, nil))
	}
	occs := c.settled(events, 40*time.Second, "completed")
	require.Len(t, occs, n)
	for _, o := range occs {
		require.Equal(t, 1, o.AttemptCount, "a throttled wait is not an attempt (occurrence %s)", o.ID)
	}
	reqs := rc.Requests()
	require.Len(t, reqs, n, "each occurrence delivered once")
	slices.SortFunc(reqs, func(a, b qhronostest.Request) int { return a.At.Compare(b.At) })
	// GCRA at 5/s with a burst of 1 lets at most 1 + 5 requests into any
	// one-second span; allow one more for the receiver's own timestamps.
	for i := range reqs {
		j := i
		for j < len(reqs) && reqs[j].At.Sub(reqs[i].At) < time.Second {
			j++
		}
		require.LessOrEqual(t, j-i, 7, "deliveries within one second from %s", reqs[i].At.Format(time.StampMilli))
	}
	span := reqs[len(reqs)-1].At.Sub(reqs[0].At)
	require.GreaterOrEqual(t, span, 5*time.Second, "30 deliveries at 5/s take about 6 s, not %s", span)
	t.Logf("%d deliveries over %s (%.1f/s)", n, span, float64(n-1)/span.Seconds())
}

// TestCircuitOpensTrialsAndRecovers: a failing receiver opens the
// endpoint's circuit; while open its occurrences wait, uncounted; after the
// cool-down one trial goes, and once the receiver is back the circuit
// closes and every occurrence completes exactly once.
func TestCircuitOpensTrialsAndRecovers(t *testing.T) {
	t.Parallel()
	for _, backend := range qhronostest.Backends() {
		t.Run(string(backend), func(t *testing.T) {
			t.Parallel()
			srv := qhronostest.Start(t, backend)
			c := client{t: t, srv: srv}
			rc := qhronostest.NewReceiver(t)
			var mu sync.Mutex
			down := true
			accepted := map[string]int{} // occurrence id → deliveries answered 200
			rc.Answer(func(r qhronostest.Request) int {
				mu.Lock()
				defer mu.Unlock()
				if down {
					return http.StatusServiceUnavailable
				}
				accepted[r.Header.Get("webhook-id")]++
				return http.StatusOK
			})
			ep := c.createEndpoint(map[string]any{"name": "flaky", "url": rc.URL,
				"circuit": map[string]any{"failures": 3, "cool_down": "2s"}})

			at := time.Now().Add(1500 * time.Millisecond)
			retry := map[string]any{"retry": map[string]any{"max_attempts": 30, "initial_backoff": "1s", "max_backoff": "1s"}}
			var events []string
			for i := range 12 {
				events = append(events, c.onceAt(fmt.Sprintf("flaky-%d", i), ep.ID, at, retry))
			}
			qhronostest.Wait(t, 60*time.Second, "the circuit opens", func() bool { return c.endpoint(ep.ID).State == "open" })
			opened := len(rc.Requests())

			// Trials fail while the receiver is down: the circuit stays open
			// and only trials reach it, one per cool-down.
			qhronostest.Wait(t, 60*time.Second, "a trial reaches the receiver", func() bool {
				return len(rc.Requests()) > opened
			})
			require.Equal(t, "open", c.endpoint(ep.ID).State)
			waiting := 0
			for _, id := range events {
				for _, o := range c.occurrences(id) {
					if o.Status == "pending" || o.Status == "retrying" {
						waiting++
					}
				}
			}
			require.Positive(t, waiting, "occurrences wait while the circuit is open")

			mu.Lock()
			down = false
			mu.Unlock()
			occs := c.settled(events, 40*time.Second, "completed")
			require.Len(t, occs, 12, "nothing lost")
			mu.Lock()
			for id := range occs {
				require.Equal(t, 1, accepted[id], "occurrence %s accepted exactly once", id)
			}
			mu.Unlock()
			final := c.endpoint(ep.ID)
			require.Equal(t, "healthy", final.State, "the trial's success closed the circuit")
			require.Contains(t, final.Health.LastError, "503")
		})
	}
}

// TestDisabledEndpointFailsAndEnableResumes: the occurrences of a disabled
// endpoint fail with reason endpoint_disabled, uncounted; enabling it
// resumes those within the catch-up window and they are delivered.
func TestDisabledEndpointFailsAndEnableResumes(t *testing.T) {
	t.Parallel()
	for _, backend := range qhronostest.Backends() {
		t.Run(string(backend), func(t *testing.T) {
			t.Parallel()
			srv := qhronostest.Start(t, backend)
			c := client{t: t, srv: srv}
			rc := qhronostest.NewReceiver(t)
			ep := c.createEndpoint(map[string]any{"name": "paused-receiver", "url": rc.URL})
			require.Equal(t, http.StatusOK, c.call("POST", "/endpoints/"+ep.ID+"/disable", nil, nil))
			require.Equal(t, "disabled", c.endpoint(ep.ID).State)

			at := time.Now().Add(1500 * time.Millisecond)
			events := []string{c.onceAt("while-disabled-1", ep.ID, at, nil), c.onceAt("while-disabled-2", ep.ID, at, nil)}
			occs := c.settled(events, 20*time.Second, "failed")
			for _, o := range occs {
				require.NotNil(t, o.Reason)
				require.Equal(t, "endpoint_disabled", *o.Reason)
				require.Zero(t, o.AttemptCount, "no attempt was made")
			}
			require.Empty(t, rc.Requests())

			var enabled struct {
				Resumed int `json:"resumed"`
			}
			require.Equal(t, http.StatusOK, c.call("POST", "/endpoints/"+ep.ID+"/enable", nil, &enabled))
			require.Equal(t, 2, enabled.Resumed)
			occs = c.settled(events, 20*time.Second, "completed")
			got := deliveries(rc)
			for id := range occs {
				require.Len(t, got[id], 1, "resumed occurrence %s delivered once", id)
			}
		})
	}
}
