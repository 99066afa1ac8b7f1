package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/coordination"
	"github.com/qhronos/qhronos/internal/model"
)

// pendingOf lists the instants of an event's pending occurrences.
func (e *env) pendingOf(id string) []time.Time {
	e.t.Helper()
	rows, err := e.store.ListOccurrences(context.Background(), model.OccurrenceFilter{EventID: id,
		Unrestricted: true, Limit: 5000})
	require.NoError(e.t, err)
	var out []time.Time
	for _, o := range rows {
		if o.Status == model.OccurrencePending {
			out = append(out, o.ScheduledAt.UTC())
		}
	}
	return out
}

// eventsWithKey lists the events GET /events?key= shows the token.
func (e *env) eventsWithKey(token, key string) []map[string]any {
	e.t.Helper()
	res := e.do("GET", "/events?key="+key, token, nil)
	require.Equal(e.t, http.StatusOK, res.Status, "%s", res.Body)
	var list []map[string]any
	res.json(e.t, &list)
	return list
}

// An upsert by key creates (201) then replaces (200) one event: same id,
// the body's content, its one pending occurrence moved to the new instant;
// bad keys and bodies are refused naming the field, writing nothing; the
// key shows in the event and finds it in the listing; DELETE by key frees
// it.
func TestUpsertByKeyCreatesThenReplaces(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			first := eventBody("cart")
			res := e.do("PUT", "/events/by-key/cart:user-42", e.master, first)
			require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
			created := res.object(t)
			id := created["id"].(string)
			require.Equal(t, "cart:user-42", created["key"])

			later := time.Now().Add(2 * time.Hour).UTC().Truncate(time.Second)
			second := eventBody("cart")
			second["name"], second["start_time"] = "reminder", later.Format(time.RFC3339)
			res = e.do("PUT", "/events/by-key/cart:user-42", e.master, second)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			updated := res.object(t)
			require.Equal(t, id, updated["id"], "the same event")
			require.Equal(t, "reminder", updated["name"])
			require.Equal(t, later.Format(time.RFC3339), updated["start_time"])
			require.Equal(t, []time.Time{later}, e.pendingOf(id), "one pending occurrence, at the new instant")

			found := e.eventsWithKey(e.master, "cart:user-42")
			require.Len(t, found, 1)
			require.Equal(t, id, found[0]["id"])
			require.Empty(t, e.eventsWithKey(e.master, "other"))

			for _, tc := range []struct {
				path  string
				body  map[string]any
				field string
			}{
				{"/events/by-key/bad%20key", eventBody(), "key"},
				{"/events/by-key/" + strings.Repeat("k", 201), eventBody(), "key"},
				{"/events/by-key/new-key", map[string]any{"start_time": later.Format(time.RFC3339), "webhook": "http://127.0.0.1:9999/"}, "name"},
				{"/events/by-key/new-key", map[string]any{"name": "x", "debounce": "10m", "start_time": later.Format(time.RFC3339),
					"webhook": "http://127.0.0.1:9999/"}, "start_time"},
				{"/events/by-key/new-key", map[string]any{"name": "x", "debounce": "soon", "webhook": "http://127.0.0.1:9999/"}, "debounce"},
				{"/events/by-key/new-key", map[string]any{"name": "x", "debounce": "10m", "max_wait": "1m",
					"webhook": "http://127.0.0.1:9999/"}, "max_wait"},
				{"/events/by-key/cart:user-42", map[string]any{"name": "x", "start_time": "not a time", "webhook": "http://127.0.0.1:9999/"}, "start_time"},
			} {
				res := e.do("PUT", tc.path, e.master, tc.body)
				require.Equal(t, http.StatusBadRequest, res.Status, "%s: %s", tc.path, res.Body)
				require.Equal(t, tc.field, res.object(t)["field"], "%s: %s", tc.path, res.Body)
			}
			require.Empty(t, e.eventsWithKey(e.master, "new-key"), "a refused upsert writes nothing")
			res = e.do("GET", "/events?key=bad%20key", e.master, nil)
			require.Equal(t, http.StatusBadRequest, res.Status)
			require.Equal(t, "key", res.object(t)["field"])

			require.Equal(t, http.StatusNoContent, e.do("DELETE", "/events/by-key/cart:user-42", e.master, nil).Status)
			require.Empty(t, e.eventsWithKey(e.master, "cart:user-42"))
			require.Empty(t, e.pendingOf(id), "deleting cancels what was pending")
			require.Equal(t, http.StatusNotFound, e.do("DELETE", "/events/by-key/cart:user-42", e.master, nil).Status)
			res = e.do("PUT", "/events/by-key/cart:user-42", e.master, first)
			require.Equal(t, http.StatusCreated, res.Status, "the key is free again: %s", res.Body)
			require.NotEqual(t, id, res.object(t)["id"])
		})
	}
}

// Keys are unique within a key scope: tokens with different tag scopes
// use one key independently; a token of the same scope finds the same
// event; the master token's scope is its own.
func TestUpsertByKeyIsScopedByTheTokensTagScope(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			alpha, beta := e.mint("write", []string{"alpha"}), e.mint("write", []string{"beta"})
			alpha2 := e.mint("write", []string{"alpha"})
			put := func(token string, tag string) response {
				return e.do("PUT", "/events/by-key/nightly", token, eventBody(tag))
			}
			ra := put(alpha, "alpha")
			require.Equal(t, http.StatusCreated, ra.Status, "%s", ra.Body)
			rb := put(beta, "beta")
			require.Equal(t, http.StatusCreated, rb.Status, "%s", rb.Body)
			require.NotEqual(t, ra.object(t)["id"], rb.object(t)["id"], "two scopes, two events")
			ra2 := put(alpha2, "alpha")
			require.Equal(t, http.StatusOK, ra2.Status, "the same scope shares the key: %s", ra2.Body)
			require.Equal(t, ra.object(t)["id"], ra2.object(t)["id"])

			require.Len(t, e.eventsWithKey(alpha, "nightly"), 1, "a token lists only what it can read")
			require.Len(t, e.eventsWithKey(e.master, "nightly"), 2)
			require.Equal(t, http.StatusCreated, put(e.master, "ops").Status, "the master token's scope is global, apart")

			require.Equal(t, http.StatusNoContent, e.do("DELETE", "/events/by-key/nightly", beta, nil).Status)
			require.Len(t, e.eventsWithKey(alpha, "nightly"), 1, "deleting beta's key leaves alpha's")
		})
	}
}

// 1,000 concurrent upserts (16 at a time) of one key end with one event and one pending
// occurrence, at the instant of the body last applied (the event's
// start_time); exactly one of them created it.
func TestConcurrentUpsertsOfOneKeyEndWithOneEvent(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open, withOptions(func(o *Options) {
				o.RateLimit = coordination.Limit{Rate: 1e9, Burst: 1e9}
			}))
			// The answers' shape is checked by the tests above; hundreds of
			// checks against the document would only slow this one.
			e.skipOpenAPI = true
			// The 1,000: about 45 s a store under -race on a 2-core
			// machine (the upserts queue on the key's row lock), run beside
			// the package's other tests.
			const n, workers = 1000, 16
			base := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
			var mu sync.Mutex
			codes := map[int]int{}
			ids := map[string]bool{}
			next := make(chan int)
			var wg sync.WaitGroup
			for range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range next {
						body := eventBody("cart")
						body["start_time"] = base.Add(time.Duration(i) * time.Second).Format(time.RFC3339)
						res := e.do("PUT", "/events/by-key/burst", e.master, body)
						mu.Lock()
						codes[res.Status]++
						if res.Status < 300 {
							ids[res.object(t)["id"].(string)] = true
						}
						mu.Unlock()
					}
				}()
			}
			for i := range n {
				next <- i
			}
			close(next)
			wg.Wait()
			require.Equal(t, map[int]int{http.StatusCreated: 1, http.StatusOK: n - 1}, codes)
			require.Len(t, ids, 1, "one event")
			found := e.eventsWithKey(e.master, "burst")
			require.Len(t, found, 1)
			id := found[0]["id"].(string)
			last, err := time.Parse(time.RFC3339, found[0]["start_time"].(string))
			require.NoError(t, err)
			require.Equal(t, []time.Time{last.UTC()}, e.pendingOf(id), "one pending occurrence, at the last instant")
			require.EqualValues(t, n, found[0]["version"], "every upsert applied in turn")
		})
	}
}

// A debounced event fires once per burst: each upsert moves its pending
// occurrence to debounce after it, but never past max_wait after the first
// upsert. Upserts keep coming for longer than debounce, so without
// max_wait it would not have fired by then; it fires at the bound, to a
// real receiver.
func TestDebounceFiresNoLaterThanMaxWaitAfterTheFirstUpsert(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			delivered := make(chan time.Time, 10)
			receiver := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
				delivered <- time.Now()
			}))
			t.Cleanup(receiver.Close)
			e.sched.Start(context.Background())
			const debounce, maxWait = 2 * time.Second, 3 * time.Second
			body := func() map[string]any {
				return map[string]any{"name": "cart reminder", "webhook": receiver.URL + "/hook",
					"debounce": debounce.String(), "max_wait": maxWait.String()}
			}
			before := time.Now()
			res := e.do("PUT", "/events/by-key/cart-7", e.master, body())
			firstAnswered := time.Now()
			require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
			ev := res.object(t)
			id := ev["id"].(string)
			require.Equal(t, "2s", ev["debounce"])
			require.Equal(t, "3s", ev["max_wait"])
			// Upsert until shortly before the bound (each at most 1s apart,
			// so every one lands inside the burst).
			upserts := 1
			for time.Since(before) < maxWait-800*time.Millisecond {
				res := e.do("PUT", "/events/by-key/cart-7", e.master, body())
				require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
				require.LessOrEqual(t, len(e.pendingOf(id)), 1, "the pending occurrence moved, not added")
				upserts++
				select {
				case <-delivered:
					t.Fatal("fired while the burst was still inside max_wait")
				case <-time.After(200 * time.Millisecond):
				}
			}
			require.Greater(t, upserts, 2)
			select {
			case <-delivered:
			case <-time.After(60 * time.Second):
				t.Fatal("the debounced event never fired")
			}
			rows, err := e.store.ListOccurrences(context.Background(), model.OccurrenceFilter{EventID: id,
				Unrestricted: true, Limit: 100})
			require.NoError(t, err)
			var fired []time.Time
			for _, o := range rows {
				if o.Status != model.OccurrenceCancelled {
					fired = append(fired, o.ScheduledAt)
				}
			}
			require.Len(t, fired, 1, "one occurrence for the burst: %v", e.occurrencesOf(id))
			at := fired[0]
			require.False(t, at.After(firstAnswered.Add(maxWait)),
				"scheduled %s, more than max_wait after the first upsert (answered %s)", at, firstAnswered)
			require.False(t, at.Before(before.Add(maxWait)),
				"scheduled %s: max_wait, not debounce, should have bounded this burst", at)
			t.Logf("upserts in the burst: %d", upserts)
		})
	}
}
