package api

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// keyedReceiver counts the deliveries it is answering at once; each takes
// a little while, like a job that calls a rate-limited customer API.
type keyedReceiver struct {
	mu       sync.Mutex
	now, max int
	order    []int // the events' indexes, in the order their deliveries arrived
	arrived  chan struct{}
	url      string
}

func newKeyedReceiver(t *testing.T, work time.Duration) *keyedReceiver {
	kr := &keyedReceiver{arrived: make(chan struct{}, 1000)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		i, _ := strconv.Atoi(r.URL.Query().Get("i"))
		kr.mu.Lock()
		kr.now++
		kr.max = max(kr.max, kr.now)
		kr.order = append(kr.order, i)
		kr.mu.Unlock()
		kr.arrived <- struct{}{}
		time.Sleep(work)
		kr.mu.Lock()
		kr.now--
		kr.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	kr.url = srv.URL + "/sync"
	return kr
}

func (kr *keyedReceiver) delivered() (n, most int, order []int) {
	kr.mu.Lock()
	defer kr.mu.Unlock()
	return len(kr.order), kr.max, append([]int(nil), kr.order...)
}

// 100 events of one customer share the concurrency key customer-42 with a
// limit of 2, all due within a second: the receiver never has more than two
// of them at once, they arrive in due order (two in flight may race each
// other by a place), the key shows its waiters, a pause holds the rest back
// and a resume lets them go.
func TestConcurrencyKeyLimitsRunsInFlightInDueOrder(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			kr := newKeyedReceiver(t, 20*time.Millisecond)
			e.sched.Start(context.Background())
			const n = 100
			base := time.Now().Add(2 * time.Second)
			items := make([]any, n)
			for i := range items {
				items[i] = map[string]any{"name": fmt.Sprintf("sync %d", i), "webhook": fmt.Sprintf("%s?i=%d", kr.url, i),
					"start_time":  base.Add(time.Duration(i) * 10 * time.Millisecond).UTC().Format(time.RFC3339Nano),
					"concurrency": map[string]any{"key": "customer-42", "limit": 2}}
			}
			res := e.do("POST", "/events/batch", e.master, map[string]any{"events": items})
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)

			key := func() map[string]any {
				res := e.do("GET", "/concurrency-keys/customer-42", e.master, nil)
				require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
				return res.object(t)
			}
			require.Eventually(t, func() bool { return key()["waiting"].(float64) > 0 }, 60*time.Second,
				10*time.Millisecond, "the events beyond the limit wait")
			k := key()
			require.Equal(t, float64(2), k["limit"])
			require.LessOrEqual(t, k["in_flight"].(float64), float64(2))

			// Pause once a few ran: what is in flight ends, nothing starts.
			require.Eventually(t, func() bool { got, _, _ := kr.delivered(); return got >= 10 }, 60*time.Second,
				10*time.Millisecond)
			res = e.do("POST", "/concurrency-keys/customer-42/pause", e.master, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			require.Equal(t, true, res.object(t)["paused"])
			require.Eventually(t, func() bool { return key()["in_flight"].(float64) == 0 }, 60*time.Second,
				10*time.Millisecond, "the runs in flight end")
			held, _, _ := kr.delivered()
			time.Sleep(time.Second) // a second in which nothing may start
			got, _, _ := kr.delivered()
			require.Equal(t, held, got, "no delivery starts while the key is paused")
			require.Less(t, got, n)

			res = e.do("POST", "/concurrency-keys/customer-42/resume", e.master, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			require.Eventually(t, func() bool { got, _, _ := kr.delivered(); return got == n }, 120*time.Second,
				10*time.Millisecond, "the rest run after the resume")
			_, most, order := kr.delivered()
			require.LessOrEqual(t, most, 2, "never more than the limit at once")
			// Due order: when a delivery arrives, fewer than the limit of
			// the earlier ones are still to come (the two in flight may
			// race each other).
			for pos, i := range order {
				later := 0
				for _, j := range order[pos+1:] {
					if j < i {
						later++
					}
				}
				require.Less(t, later, 2, "due order: event %d arrived %d-th, before %d earlier ones (%v)", i, pos, later, order)
			}
			require.Eventually(t, func() bool {
				k := key()
				return k["in_flight"].(float64) == 0 && k["waiting"].(float64) == 0
			}, 60*time.Second, 10*time.Millisecond, "every slot is freed")
			res = e.do("GET", "/occurrences?status=completed&limit=500", e.master, nil)
			require.Equal(t, http.StatusOK, res.Status)
			var page struct {
				Data []map[string]any `json:"data"`
			}
			res.json(t, &page)
			require.Len(t, page.Data, n, "every occurrence completed")
			for _, o := range page.Data {
				require.Nil(t, o["reason"], "a row that waited no longer says so once it ran")
			}
		})
	}
}
