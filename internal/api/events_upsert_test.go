package api

import (
	"context"
	"fmt"
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
			e.sched.Start(context.Background())
			// A machine that stalls for debounce between two upserts ends
			// the burst there, rightly: the burst is made again, with a
			// key and a receiver of its own, a bounded number of times.
			for try := 1; ; try++ {
				b := upsertBurst(t, e, fmt.Sprintf("cart-%d", try))
				if b.stalled {
					require.Less(t, try, 8, "every burst was broken by a stall longer than debounce")
					t.Logf("burst %d broken by a stall longer than debounce; again", try)
					continue
				}
				rows, err := e.store.ListOccurrences(context.Background(), model.OccurrenceFilter{EventID: b.id,
					Unrestricted: true, Limit: 100})
				require.NoError(t, err)
				// An upsert the server took after the firing starts a
				// burst of its own, due debounce after it.
				var fired []time.Time
				for _, o := range rows {
					if o.Status != model.OccurrenceCancelled && !o.ScheduledAt.After(b.firedAt) {
						fired = append(fired, o.ScheduledAt)
					}
				}
				require.Len(t, fired, 1, "one occurrence for the burst fired at %s: %v", b.firedAt,
					e.occurrencesOf(b.id))
				at := fired[0]
				require.False(t, at.After(b.firstAnswered.Add(burstMaxWait)),
					"scheduled %s, more than max_wait after the first upsert (answered %s)", at, b.firstAnswered)
				require.False(t, at.Before(b.before.Add(burstMaxWait)),
					"scheduled %s: max_wait, not debounce, should have bounded this burst", at)
				t.Logf("upserts in the burst: %d", b.upserts)
				return
			}
		})
	}
}

const burstDebounce, burstMaxWait = 3 * time.Second, 5 * time.Second

// burst is what upsertBurst saw.
type burst struct {
	id                             string
	before, firstAnswered, firedAt time.Time
	upserts                        int
	// stalled: the burst may have been broken by the machine, not by
	// the event: a stretch of at least debounce in which the server may
	// have had no upsert (two upserts that far apart, or the last one that
	// far from an early firing), or no upsert late enough for max_wait to
	// be the bound.
	stalled bool
}

// upsertBurst upserts the debounced event key every 200 ms until 1.5 s
// before max_wait, then waits for its firing. A firing before max_wait
// fails the test unless the burst stalled.
func upsertBurst(t *testing.T, e *env, key string) burst {
	t.Helper()
	delivered := make(chan time.Time, 10)
	receiver := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		delivered <- time.Now()
	}))
	t.Cleanup(receiver.Close)
	receiverURL := receiver.URL
	body := func() map[string]any {
		return map[string]any{"name": "cart reminder", "webhook": receiverURL + "/hook",
			"debounce": burstDebounce.String(), "max_wait": burstMaxWait.String()}
	}
	var b burst
	b.before = time.Now()
	res := e.do("PUT", "/events/by-key/"+key, e.master, body())
	b.firstAnswered = time.Now()
	require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
	ev := res.object(t)
	b.id = ev["id"].(string)
	require.Equal(t, "3s", ev["debounce"])
	require.Equal(t, "5s", ev["max_wait"])
	// gap bounds, from the client's side, the longest stretch the server
	// went without an upsert: from one upsert's send to the next one's
	// answer.
	sent, gap := b.before, time.Duration(0)
	early := func(firedAt time.Time) bool {
		b.firedAt = firedAt
		gap = max(gap, firedAt.Sub(sent))
		if !firedAt.Before(b.before.Add(burstMaxWait)) {
			return false
		}
		if gap >= burstDebounce {
			b.stalled = true
			return false
		}
		return true
	}
	b.upserts = 1
	for time.Since(b.before) < burstMaxWait-1500*time.Millisecond {
		next := time.Now()
		res := e.do("PUT", "/events/by-key/"+key, e.master, body())
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
		if gap, sent = max(gap, time.Since(sent)), next; gap >= burstDebounce {
			b.stalled = true
			return b
		}
		require.LessOrEqual(t, len(e.pendingOf(b.id)), 1, "the pending occurrence moved, not added")
		b.upserts++
		select {
		case at := <-delivered:
			require.False(t, early(at), "fired at %s while the burst was still inside max_wait (first upsert %s)",
				at, b.before)
			return b
		case <-time.After(200 * time.Millisecond):
		}
	}
	// max_wait bounds the burst only if an upsert came more than
	// max_wait-debounce after the first: one that left the client later
	// than that reached the server later too.
	if !sent.After(b.firstAnswered.Add(burstMaxWait - burstDebounce)) {
		b.stalled = true
		return b
	}
	select {
	case at := <-delivered:
		require.False(t, early(at), "fired at %s, before max_wait after the first upsert (%s)", at, b.before)
	case <-time.After(60 * time.Second):
		t.Fatal("the debounced event never fired")
	}
	return b
}
