package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/repository/repositorytest"
)

// Re-delivery from the dead-letter view reaches the receiver again with the
// same delivery id, past the retry limit, and is recorded as manual.
func TestRetryRedeliversWithTheSameDeliveryID(t *testing.T) {
	e := newEnv(t, repositorytest.SQLite)
	var mu sync.Mutex
	var ids []string
	failing := true
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		ids = append(ids, r.Header.Get("webhook-id"))
		if failing {
			w.WriteHeader(http.StatusBadRequest) // not retried: failed at once
		}
	}))
	t.Cleanup(receiver.Close)
	e.sched.Start(context.Background())

	e.createEvent(e.master, map[string]any{"name": "once", "start_time": soon(), "webhook": receiver.URL + "/hook",
		"retry": map[string]any{"max_attempts": 1}})
	var occID string
	require.Eventually(t, func() bool {
		res := e.do("GET", "/occurrences?status=failed", e.master, nil)
		var page struct {
			Data []map[string]any `json:"data"`
		}
		res.json(t, &page)
		if len(page.Data) == 1 {
			occID = page.Data[0]["id"].(string)
		}
		return occID != ""
	}, 10*time.Second, 20*time.Millisecond, "the failed occurrence shows in the dead-letter view")

	mu.Lock()
	failing = false
	mu.Unlock()
	res := e.do("POST", "/occurrences/"+occID+"/retry", e.master, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	e.sched.Wake(context.Background(), time.Now())
	require.Eventually(t, func() bool { return e.occurrenceStatus(t, occID) == "completed" }, 10*time.Second,
		20*time.Millisecond, "re-delivered although max_attempts was 1")

	mu.Lock()
	require.Equal(t, []string{occID, occID}, ids, "the same delivery id both times")
	mu.Unlock()
	var attempts []attemptJSON
	e.do("GET", "/occurrences/"+occID+"/attempts", e.master, nil).json(t, &attempts)
	require.Len(t, attempts, 2)
	require.False(t, attempts[0].Manual)
	require.Equal(t, "failed", attempts[0].Outcome)
	require.True(t, attempts[1].Manual, "the re-delivery is recorded as manual")
	require.Equal(t, "completed", attempts[1].Outcome)
}
