package api

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/coordination"
	"github.com/qhronos/qhronos/internal/hub"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository/repositorytest"
)

// mintWithID issues a JWT through the API and returns it with its id.
func (e *env) mintWithID(access string, scope []string, ttl time.Duration) (token, id string) {
	e.t.Helper()
	res := e.do("POST", "/tokens", e.master, map[string]any{"type": "jwt", "sub": "user-" + access,
		"access": access, "scope": scope, "expires_at": time.Now().Add(ttl).Format(time.RFC3339)})
	require.Equal(e.t, http.StatusOK, res.Status, "mint: %s", res.Body)
	var tok struct {
		ID    string `json:"id"`
		Token string `json:"token"`
	}
	res.json(e.t, &tok)
	return tok.Token, tok.ID
}

// closeStatus reads until the server closes the connection and returns the
// close frame's code and reason.
func (c *wsClient) closeStatus(wait time.Duration) (websocket.StatusCode, string) {
	c.t.Helper()
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		if _, err := c.next(time.Until(deadline)); err != nil {
			var ce websocket.CloseError
			if errors.As(err, &ce) {
				return ce.Code, ce.Reason
			}
			return -1, err.Error()
		}
	}
	return -1, "still open"
}

// A client-hook whose token is scoped to client "acme" gets only the events
// it may read over REST: an event tagged only "b" addressed to acme is not
// pushed to it (and retries like "no client connected"), and acking that
// occurrence answers exactly like an unknown one.
func TestWebSocketClientHookHonoursScope(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			e := newEnv(t, b.Open)
			e.sched.Start(context.Background())
			scoped := e.mint("read", []string{"acme"})
			c := e.subscribe(t, map[string]any{"type": "client-hook", "client_name": "acme", "token": scoped})
			toAcme := func(tags ...string) map[string]any {
				return map[string]any{"name": "for acme", "start_time": soon(), "tags": tags,
					"metadata": map[string]any{"secret": "tenant b"},
					"action": map[string]any{"type": "websocket",
						"params": map[string]any{"client_name": "acme", "require_ack": true}}}
			}

			foreign := e.createEvent(e.master, toAcme("b"))
			occs := e.store
			var foreignOcc string
			require.Eventually(t, func() bool {
				rows, err := occs.ListOccurrences(context.Background(), model.OccurrenceFilter{
					Unrestricted: true, EventID: foreign["id"].(string)})
				if err != nil || len(rows) != 1 {
					return false
				}
				foreignOcc = rows[0].ID
				return rows[0].Status == model.OccurrenceRetrying && rows[0].ErrorMessage != nil &&
					strings.Contains(*rows[0].ErrorMessage, "no websocket client")
			}, 15*time.Second, 20*time.Millisecond, "a client that may not read the event counts as no client")

			own := e.createEvent(e.master, toAcme("acme"))
			frame := c.mustNext(60 * time.Second)
			require.Equal(t, own["id"], frame["event_id"], "the first frame is the readable event, never tenant b's")

			c.send(map[string]any{"type": "ack", "occurrence_id": uuid.NewString()})
			unknown := c.mustNext(60 * time.Second)
			c.send(map[string]any{"type": "ack", "occurrence_id": foreignOcc})
			require.Equal(t, unknown, c.mustNext(5*time.Second),
				"an ack of an unreadable occurrence answers exactly like an unknown one")
			// It keeps retrying (its backoff is random, so it may be between
			// attempts or in one) but the foreign ack did not complete it.
			require.NotEqual(t, "completed", e.occurrenceStatus(t, foreignOcc), "the foreign ack completed nothing")

			c.send(map[string]any{"type": "ack", "occurrence_id": frame["occurrence_id"]})
			require.Equal(t, "ack", c.mustNext(60 * time.Second)["type"], "its own occurrence acks as before")
		})
	}
}

// An ack for an occurrence that was never addressed to the listener's client
// name answers like an unknown occurrence too, even with a master token.
func TestWebSocketAckOfAnotherClientsOccurrence(t *testing.T) {
	e := newEnv(t, repositorytest.SQLite)
	c := e.subscribe(t, map[string]any{"type": "client-hook", "client_name": "acme", "token": e.master})
	ev := e.createEvent(e.master, eventBody("a"))
	rows, err := e.store.ListOccurrences(context.Background(), model.OccurrenceFilter{Unrestricted: true,
		EventID: ev["id"].(string)})
	require.NoError(t, err)
	require.Len(t, rows, 1)
	c.send(map[string]any{"type": "ack", "occurrence_id": uuid.NewString()})
	unknown := c.mustNext(60 * time.Second)
	c.send(map[string]any{"type": "ack", "occurrence_id": rows[0].ID})
	require.Equal(t, unknown, c.mustNext(5*time.Second))
}

// Revoking a token closes its sessions (1008, "token revoked") on every
// instance, not only the one that served the DELETE.
func TestWebSocketSessionEndsWhenTokenRevoked(t *testing.T) {
	a, b := twoInstances(t)

	token, id := a.mintWithID("read", []string{"billing"}, time.Hour)
	other := a.mint("read", []string{"billing"})
	onB := b.subscribe(t, map[string]any{"type": "tag-listener", "tags": []string{"billing"}, "token": token})
	onA := a.subscribe(t, map[string]any{"type": "client-hook", "client_name": "billing", "token": token})
	kept := b.subscribe(t, map[string]any{"type": "tag-listener", "tags": []string{"billing"}, "token": other})

	require.Equal(t, http.StatusNoContent, a.do("DELETE", "/tokens/"+id, a.master, nil).Status)
	for name, c := range map[string]*wsClient{"instance b": onB, "instance a": onA} {
		code, reason := c.closeStatus(5 * time.Second)
		require.Equal(t, websocket.StatusPolicyViolation, code, "%s: %s", name, reason)
		require.Contains(t, reason, "token revoked", name)
	}
	_, err := kept.next(300 * time.Millisecond)
	require.ErrorIs(t, err, context.DeadlineExceeded, "a session of another token stays open")
}

// A session ends when its token's exp passes.
func TestWebSocketSessionEndsAtTokenExpiry(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			e := newEnv(t, b.Open)
			token, _ := e.mintWithID("read", []string{"billing"}, time.Hour)
			c := e.subscribe(t, map[string]any{"type": "tag-listener", "tags": []string{"billing"}, "token": token})
			master := e.subscribe(t, map[string]any{"type": "tag-listener", "tags": []string{"billing"}, "token": e.master})
			// The hub's clock an hour and a minute on: the JWT has expired.
			require.NoError(t, e.hub.EndInvalidSessions(context.Background(), e.store, time.Now().Add(61*time.Minute)))
			code, reason := c.closeStatus(5 * time.Second)
			require.Equal(t, websocket.StatusPolicyViolation, code, reason)
			require.Contains(t, reason, hub.ReasonTokenExpired)
			_, err := master.next(300 * time.Millisecond)
			require.ErrorIs(t, err, context.DeadlineExceeded, "the master token does not expire")
		})
	}
}

// Failed handshakes are charged to the client address like REST 401s: past
// the burst they are refused as rate limited, and so is a REST request with
// a bad token from the same address.
func TestWebSocketFailedHandshakesAreRateLimited(t *testing.T) {
	e := newEnv(t, repositorytest.SQLite, withOptions(func(o *Options) {
		o.RateLimit = coordination.Limit{Rate: 0.01, Burst: 5}
	}))
	answers := map[string]int{}
	for range 12 {
		c, _, err := e.dialWS(t, nil)
		require.NoError(t, err)
		c.send(map[string]any{"type": "tag-listener", "tags": []string{"x"}, "token": "forged.jwt.value"})
		m := c.mustNext(60 * time.Second)
		answers[m["message"].(string)]++
		_ = c.conn.CloseNow()
	}
	require.Equal(t, map[string]int{"unauthorized": 5, "rate limit exceeded": 7}, answers)
	res := e.do("GET", "/events", "forged.jwt.value", nil)
	require.Equal(t, http.StatusTooManyRequests, res.Status, "REST 401s share the bucket: %s", res.Body)
	c := e.subscribe(t, map[string]any{"type": "tag-listener", "tags": []string{"x"}, "token": e.master})
	_ = c // a valid token still connects: only failures are charged
}
