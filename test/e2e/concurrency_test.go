package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Three instances share one PostgreSQL schema and Redis; 40 events share
// the concurrency key customer-42 with a limit of 2. Their rows lie in
// buckets every instance owns a share of, so the limit holds only if the
// instances share it: the receiver never has more than two at once, each
// event is delivered once, and they arrive in due order (the two in flight
// may race each other).
func TestConcurrencyKeyHoldsAcrossInstances(t *testing.T) {
	t.Parallel()
	d := newDeployment(t)
	d.withSharedRedis()
	const n = 40
	var mu sync.Mutex
	now, most := 0, 0
	var order []int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i, _ := strconv.Atoi(r.URL.Query().Get("i"))
		mu.Lock()
		now++
		most = max(most, now)
		order = append(order, i)
		mu.Unlock()
		time.Sleep(30 * time.Millisecond)
		mu.Lock()
		now--
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)

	procs := []*proc{d.start("a"), d.start("b"), d.start("c")}
	base := time.Now().Add(5 * time.Second)
	items := make([]any, n)
	for i := range items {
		items[i] = map[string]any{"name": fmt.Sprintf("sync %d", i), "tags": []string{"e2e"},
			"webhook":     fmt.Sprintf("%s/sync?i=%d", srv.URL, i),
			"start_time":  base.Add(time.Duration(i) * 25 * time.Millisecond).UTC().Format(time.RFC3339Nano),
			"concurrency": map[string]any{"key": "customer-42", "limit": 2}}
	}
	status, body, err := d.client().do("POST", procs[1].url+"/events/batch", map[string]any{"events": items})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status, "%s", body)

	d.waitAllCompleted(n, 120*time.Second)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, order, n, "each event delivered once: %v", order)
	require.LessOrEqual(t, most, 2, "never more than the key's limit at once, whichever instance sends")
	for pos, i := range order {
		earlier := 0
		for _, j := range order[pos+1:] {
			if j < i {
				earlier++
			}
		}
		require.Less(t, earlier, 2, "due order: event %d arrived %d-th, before %d earlier ones (%v)", i, pos, earlier, order)
	}
}
