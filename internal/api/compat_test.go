package api

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository/repositorytest"
)

// Requests exactly as a client of the original Qhronos sends them.
func TestOriginalClientRequestsWorkUnchanged(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			start := time.Now().Add(2 * time.Hour).UTC().Format(time.RFC3339)

			// Legacy webhook field, schedule object with the required interval.
			ev := e.createEvent(e.master, map[string]any{
				"name": "Daily report", "description": "Sends the daily report", "start_time": start,
				"webhook": "https://example.com/webhook", "metadata": map[string]any{"report": "daily"},
				"schedule": map[string]any{"frequency": "daily", "interval": 1}, "tags": []string{"reports"},
			})
			require.Equal(t, "https://example.com/webhook", ev["webhook"])
			require.Equal(t, map[string]any{"type": "webhook", "params": map[string]any{"url": "https://example.com/webhook"}}, ev["action"])

			// q:<client> means a WebSocket client-hook.
			ws := e.createEvent(e.master, map[string]any{"name": "ws", "start_time": start, "webhook": "q:acme"})
			require.Equal(t, "q:acme", ws["webhook"])
			require.Equal(t, "websocket", ws["action"].(map[string]any)["type"])

			// action wins over webhook; apicall can be created (the original could not).
			api := e.createEvent(e.master, map[string]any{"name": "call", "start_time": start,
				"webhook": "https://ignored.example.com",
				"action": map[string]any{"type": "apicall", "params": map[string]any{"method": "POST",
					"url": "https://api.example.com/jobs", "headers": map[string]string{"X-Team": "core"},
					"body": map[string]any{"run": true}}}})
			require.Equal(t, "apicall", api["action"].(map[string]any)["type"])

			// The schedule object without interval is accepted and echoed with it.
			s := e.createEvent(e.master, map[string]any{"name": "weekly", "start_time": start,
				"webhook": "https://example.com/h", "schedule": map[string]any{"frequency": "weekly",
					"by_day": []string{"MO", "FR"}}})
			require.EqualValues(t, 1, s["schedule"].(map[string]any)["interval"])

			// GET /events?tags=a,b is "any of", newest first.
			res := e.do("GET", "/events?tags=reports,none", e.master, nil)
			require.Equal(t, http.StatusOK, res.Status)
			var list []map[string]any
			res.json(t, &list)
			require.Len(t, list, 1)
			require.Equal(t, ev["id"], list[0]["id"])

			// PUT with a single field.
			res = e.do("PUT", "/events/"+ev["id"].(string), e.master, map[string]any{"description": "changed"})
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			require.Equal(t, "changed", res.object(t)["description"])
			require.Equal(t, "Daily report", res.object(t)["name"], "absent fields are kept")

			// GET /occurrences with repeated tags, page and limit.
			res = e.do("GET", "/occurrences?tags=reports&tags=other&page=1&limit=50", e.master, nil)
			require.Equal(t, http.StatusOK, res.Status)
			var page struct {
				Data       []map[string]any `json:"data"`
				Pagination struct{ Page, Limit, Total int }
			}
			res.json(t, &page)
			require.Equal(t, 1, page.Pagination.Page)
			require.Equal(t, 50, page.Pagination.Limit)
			require.NotEmpty(t, page.Data, "future occurrences are visible (they lived only in Redis before)")
			require.Equal(t, page.Data[0]["id"], page.Data[0]["occurrence_id"])

			// POST /tokens with the original body answers 200.
			res = e.do("POST", "/tokens", e.master, map[string]any{"type": "jwt", "sub": "alice",
				"access": "read_write", "scope": []string{"reports"},
				"expires_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			tok := res.object(t)
			require.Equal(t, "write", tok["access"], "read_write is an alias of write")
			for _, k := range []string{"token", "type", "sub", "access", "scope", "expires_at"} {
				require.Contains(t, tok, k)
			}

			// DELETE → 204, then the event is gone.
			res = e.do("DELETE", "/events/"+ev["id"].(string), e.master, nil)
			require.Equal(t, http.StatusNoContent, res.Status)
			require.Equal(t, http.StatusNotFound, e.do("GET", "/events/"+ev["id"].(string), e.master, nil).Status)

			// /health and the original /healthz.
			require.Equal(t, http.StatusOK, e.do("GET", "/health", "", nil).Status)
			require.Equal(t, http.StatusOK, e.do("GET", "/healthz", "", nil).Status)
		})
	}
}

// Each defect of the original, fixed.
func TestOriginalDefectsAreFixed(t *testing.T) {
	e := newEnv(t, repositorytest.SQLite)
	start := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)

	t.Run("delete of an unknown id is 404", func(t *testing.T) {
		res := e.do("DELETE", "/events/9a4e1ab0-5b7c-4b59-9a1c-9f1f5c0c1e11", e.master, nil)
		require.Equal(t, http.StatusNotFound, res.Status)
		require.Equal(t, "not found", res.object(t)["error"])
	})
	t.Run("empty lists are [] not null", func(t *testing.T) {
		res := e.do("GET", "/events?tags=nothing-has-this", e.master, nil)
		require.Equal(t, "[]", strings.TrimSpace(string(res.Body)))
		res = e.do("GET", "/occurrences?tags=nothing-has-this", e.master, nil)
		require.Contains(t, string(res.Body), `"data":[]`)
	})
	t.Run("an event with every optional column NULL does not break listing", func(t *testing.T) {
		e.createEvent(e.master, map[string]any{"name": "bare", "start_time": start, "webhook": "https://example.com/h"})
		res := e.do("GET", "/events", e.master, nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	})
	t.Run("URLs are validated", func(t *testing.T) {
		for _, url := range []string{"file:///etc/passwd", "http://169.254.169.254/latest/meta-data", "not a url",
			"http://[::ffff:127.0.0.1]:22/", "gopher://example.com/"} {
			res := e.do("POST", "/events", e.master, map[string]any{"name": "x", "start_time": start, "webhook": url})
			require.Equal(t, http.StatusBadRequest, res.Status, "url %q: %s", url, res.Body)
			require.Equal(t, "action.params.url", res.object(t)["field"], "url %q", url)
		}
	})
	t.Run("past start_time and unknown zones are refused", func(t *testing.T) {
		res := e.do("POST", "/events", e.master, map[string]any{"name": "x", "start_time": "2001-01-01T00:00:00Z",
			"webhook": "https://example.com/h"})
		require.Equal(t, http.StatusBadRequest, res.Status)
		require.Equal(t, "start_time", res.object(t)["field"])
		res = e.do("POST", "/events", e.master, map[string]any{"name": "x", "start_time": start,
			"webhook": "https://example.com/h", "timezone": "Mars/Olympus"})
		require.Equal(t, http.StatusBadRequest, res.Status)
		require.Equal(t, "timezone", res.object(t)["field"])
	})
	t.Run("tokens: past expiry and unknown access are refused", func(t *testing.T) {
		res := e.do("POST", "/tokens", e.master, map[string]any{"sub": "a", "access": "write",
			"expires_at": "2001-01-01T00:00:00Z"})
		require.Equal(t, http.StatusBadRequest, res.Status)
		require.Equal(t, "expires_at", res.object(t)["field"])
		res = e.do("POST", "/tokens", e.master, map[string]any{"sub": "a", "access": "superuser",
			"expires_at": time.Now().Add(time.Hour).Format(time.RFC3339)})
		require.Equal(t, http.StatusBadRequest, res.Status)
		require.Equal(t, "access", res.object(t)["field"])
	})
	t.Run("JWTs are verified and scopes enforced", func(t *testing.T) {
		ev := e.createEvent(e.master, eventBody("billing"))
		other := e.mint("write", []string{"ops"})
		require.Equal(t, http.StatusNotFound, e.do("GET", "/events/"+ev["id"].(string), other, nil).Status)
		forged := e.mint("admin", nil) + "x"
		require.Equal(t, http.StatusUnauthorized, e.do("GET", "/events", forged, nil).Status)
	})
	t.Run("hmac_secret is stored but never returned", func(t *testing.T) {
		body := eventBody()
		body["hmac_secret"] = "my-very-secret-value"
		ev := e.createEvent(e.master, body)
		require.Equal(t, true, ev["hmac_secret_set"])
		res := e.do("GET", "/events/"+ev["id"].(string), e.master, nil)
		require.NotContains(t, string(res.Body), "my-very-secret-value")
		stored, err := e.store.GetEvent(t.Context(), ev["id"].(string))
		require.NoError(t, err)
		require.NotContains(t, string(stored.HMACSecret), "my-very-secret-value", "encrypted at rest")
	})
	t.Run("status does not publish secrets", func(t *testing.T) {
		res := e.do("GET", "/status", "", nil)
		require.Equal(t, http.StatusOK, res.Status)
		for _, secret := range []string{testMaster, testJWTSecret, testBoxKey, "default-secret"} {
			require.NotContains(t, string(res.Body), secret)
		}
	})
}

func TestValidationNamesTheField(t *testing.T) {
	e := newEnv(t, repositorytest.SQLite)
	start := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	cases := []struct {
		name  string
		body  any
		field string
	}{
		{"missing name", map[string]any{"start_time": start, "webhook": "https://example.com"}, "name"},
		{"missing action", map[string]any{"name": "x", "start_time": start}, "action"},
		{"unknown field", map[string]any{"name": "x", "start_time": start, "webhook": "https://e.com", "colour": 1}, "colour"},
		{"name not a string", map[string]any{"name": 5, "start_time": start, "webhook": "https://e.com"}, "name"},
		{"bad rfc3339", map[string]any{"name": "x", "start_time": "2030-13-45T99:00:00Z", "webhook": "https://e.com"}, "start_time"},
		{"unresolvable natural language", map[string]any{"name": "x", "start_time": "when pigs fly", "webhook": "https://e.com"}, "start_time"},
		{"two recurrences", map[string]any{"name": "x", "start_time": start, "webhook": "https://e.com",
			"rrule": "FREQ=DAILY", "cron": "0 9 * * *"}, "cron"},
		{"impossible rule", map[string]any{"name": "x", "start_time": start, "webhook": "https://e.com",
			"rrule": "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30"}, "rrule"},
		{"bad cron", map[string]any{"name": "x", "start_time": start, "webhook": "https://e.com", "cron": "61 * * * *"}, "cron"},
		{"tags not strings", map[string]any{"name": "x", "start_time": start, "webhook": "https://e.com", "tags": []int{1}}, "tags"},
		{"tag with comma", map[string]any{"name": "x", "start_time": start, "webhook": "https://e.com", "tags": []string{"a,b"}}, "tags"},
		{"unknown action type", map[string]any{"name": "x", "start_time": start, "action": map[string]any{"type": "carrier-pigeon"}}, "action.type"},
		{"apicall forbidden header", map[string]any{"name": "x", "start_time": start, "action": map[string]any{"type": "apicall",
			"params": map[string]any{"method": "POST", "url": "https://e.com", "headers": map[string]string{"Host": "evil"}}}}, "action.params.headers.Host"},
		{"apicall CRLF header", map[string]any{"name": "x", "start_time": start, "action": map[string]any{"type": "apicall",
			"params": map[string]any{"method": "POST", "url": "https://e.com", "headers": map[string]string{"X-A": "a\r\nX-B: b"}}}}, "action.params.headers.X-A"},
		{"catch_up", map[string]any{"name": "x", "start_time": start, "webhook": "https://e.com", "catch_up": "some"}, "catch_up"},
		{"timeout", map[string]any{"name": "x", "start_time": start, "webhook": "https://e.com", "timeout": "2h"}, "timeout"},
		{"retry", map[string]any{"name": "x", "start_time": start, "webhook": "https://e.com", "retry": map[string]any{"max_attempts": 0}}, "retry.max_attempts"},
		{"not an object", `[1,2,3]`, "body"},
		{"malformed JSON", `{"name":`, "body"},
		{"deep JSON", `{"name":"x","metadata":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`, "body"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := e.do("POST", "/events", e.master, tc.body)
			require.Equal(t, http.StatusBadRequest, res.Status, "%s", res.Body)
			body := res.object(t)
			require.Equal(t, tc.field, body["field"], "error: %v", body["error"])
			require.True(t, strings.HasPrefix(body["error"].(string), tc.field+":"), "error %q names the field", body["error"])
		})
	}
	var n int
	require.NoError(t, e.store.DB().Get(&n, "SELECT COUNT(*) FROM events"))
	require.Zero(t, n, "nothing half written")
}

func TestBodyOverLimitIs413(t *testing.T) {
	e := newEnv(t, repositorytest.SQLite, withOptions(func(o *Options) { o.MaxBodyBytes = 4096 }))
	body := fmt.Sprintf(`{"name":"x","description":%q}`, strings.Repeat("a", 5000))
	res := e.do("POST", "/events", e.master, body)
	require.Equal(t, http.StatusRequestEntityTooLarge, res.Status)
	require.Contains(t, res.object(t)["error"], "exceeds")
}

func TestIdempotencyKey(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			body := eventBody("a")
			first := e.do("POST", "/events", e.master, body, "Idempotency-Key", "k-1")
			require.Equal(t, http.StatusCreated, first.Status)
			again := e.do("POST", "/events", e.master, body, "Idempotency-Key", "k-1")
			require.Equal(t, http.StatusCreated, again.Status)
			require.Equal(t, "true", again.Header.Get("Idempotent-Replayed"))
			require.JSONEq(t, string(first.Body), string(again.Body))
			// The 201 says where the event lives and its version, replayed too.
			id := first.object(t)["id"].(string)
			for _, res := range []response{first, again} {
				require.Equal(t, "/events/"+id, res.Header.Get("Location"))
				require.Equal(t, `"`+id+`-v1"`, res.Header.Get("ETag"))
			}
			got := e.do("GET", first.Header.Get("Location"), e.master, nil)
			require.Equal(t, http.StatusOK, got.Status)
			require.Equal(t, first.Header.Get("ETag"), got.Header.Get("ETag"), "the same validator GET gives")
			trig := e.do("POST", "/events/"+id+"/trigger", e.master, nil)
			require.Equal(t, http.StatusCreated, trig.Status)
			require.Equal(t, "/occurrences/"+trig.object(t)["id"].(string), trig.Header.Get("Location"))
			require.Empty(t, trig.Header.Get("ETag"))

			body["name"] = "different"
			conflict := e.do("POST", "/events", e.master, body, "Idempotency-Key", "k-1")
			require.Equal(t, http.StatusConflict, conflict.Status)
			require.Equal(t, "Idempotency-Key", conflict.object(t)["field"])

			// Concurrent retries of one request create one event.
			body = eventBody("b")
			var wg sync.WaitGroup
			ids := make(chan string, 8)
			for range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					res := e.do("POST", "/events", e.master, body, "Idempotency-Key", "k-2")
					if res.Status == http.StatusCreated {
						ids <- res.object(t)["id"].(string)
					}
				}()
			}
			wg.Wait()
			close(ids)
			seen := map[string]bool{}
			for id := range ids {
				seen[id] = true
			}
			require.Len(t, seen, 1, "one event for one key")
			res := e.do("GET", "/events?tags=b", e.master, nil)
			var list []map[string]any
			res.json(t, &list)
			require.Len(t, list, 1)
		})
	}
}

func TestETagAndIfMatch(t *testing.T) {
	e := newEnv(t, repositorytest.SQLite)
	ev := e.createEvent(e.master, eventBody())
	id := ev["id"].(string)
	res := e.do("GET", "/events/"+id, e.master, nil)
	tag := res.Header.Get("ETag")
	require.NotEmpty(t, tag)
	require.Equal(t, http.StatusNotModified, e.do("GET", "/events/"+id, e.master, nil, "If-None-Match", tag).Status)

	res = e.do("PUT", "/events/"+id, e.master, map[string]any{"name": "v2"}, "If-Match", tag)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	require.NotEqual(t, tag, res.Header.Get("ETag"))

	res = e.do("PUT", "/events/"+id, e.master, map[string]any{"name": "lost"}, "If-Match", tag)
	require.Equal(t, http.StatusPreconditionFailed, res.Status)
	res = e.do("DELETE", "/events/"+id, e.master, nil, "If-Match", tag)
	require.Equal(t, http.StatusPreconditionFailed, res.Status)
	got := e.do("GET", "/events/"+id, e.master, nil).object(t)
	require.Equal(t, "v2", got["name"])
}

func TestPauseResumeAndTrigger(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			body := eventBody("a")
			body["rrule"] = "FREQ=HOURLY"
			ev := e.createEvent(e.master, body)
			id := ev["id"].(string)
			pending := func() int {
				n, err := e.store.CountOccurrences(t.Context(), model.OccurrenceFilter{EventID: id,
					Status: []model.OccurrenceStatus{"pending"}, Unrestricted: true})
				require.NoError(t, err)
				return n
			}
			require.Equal(t, 24, pending(), "24 hourly rows inside the 24 h lookahead")

			res := e.do("POST", "/events/"+id+"/pause", e.master, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			require.Equal(t, "paused", res.object(t)["status"])
			require.Zero(t, pending(), "pausing cancels future rows")

			trig := e.do("POST", "/events/"+id+"/trigger", e.master, nil)
			require.Equal(t, http.StatusCreated, trig.Status, "a paused event can be triggered: %s", trig.Body)
			require.Equal(t, true, trig.object(t)["manual"])

			res = e.do("POST", "/events/"+id+"/resume", e.master, nil)
			require.Equal(t, http.StatusOK, res.Status)
			require.Equal(t, 24+1, pending(), "resume reinstates future rows; the manual trigger stays")

			res = e.do("PUT", "/events/"+id, e.master, map[string]any{"status": "paused"})
			require.Equal(t, http.StatusOK, res.Status)
			require.Equal(t, 1, pending(), "PUT status paused pauses; manual triggers still fire")
		})
	}
}

func TestRateLimitPerPrincipalIgnoresSpoofedForwardedFor(t *testing.T) {
	e := newEnv(t, repositorytest.SQLite, withOptions(func(o *Options) {
		o.RateLimit.Rate, o.RateLimit.Burst = 0.001, 5
	}))
	tok := e.mint("read", []string{"a"})
	allowed := 0
	var last response
	for i := range 10 {
		last = e.do("GET", "/events", tok, nil, "X-Forwarded-For", fmt.Sprintf("10.0.0.%d", i))
		if last.Status == http.StatusOK {
			allowed++
		}
	}
	require.Equal(t, 5, allowed, "the burst holds whatever X-Forwarded-For says")
	require.Equal(t, http.StatusTooManyRequests, last.Status)
	require.NotEmpty(t, last.Header.Get("Retry-After"))
	require.Equal(t, "0", last.Header.Get("RateLimit-Remaining"))
	require.Equal(t, "rate limit exceeded", last.object(t)["error"])
	require.Equal(t, http.StatusOK, e.do("GET", "/events", e.master, nil).Status, "the master token is exempt by default")
}
