package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
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
	require.Eventually(t, func() bool { return e.occurrenceStatus(t, occID) == "completed" }, 60*time.Second,
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

// A replay — one occurrence or in bulk — answers the occurrence's new state:
// pending for its manual attempt, without the old error (which stays in the
// attempts). The manual attempt's lateness is measured from the replay, not
// from the original instant, and /stats leaves it out of lateness.
func TestReplayShowsTheNewStateAndStaysOutOfLateness(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			rc := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
			t.Cleanup(rc.Close)
			body := map[string]any{"name": "replayed", "start_time": inAnHour(), "webhook": rc.URL + "/hook"}
			evOne, evBulk := e.createEvent(e.master, body)["id"].(string), e.createEvent(e.master, body)["id"].(string)
			// Each had an instant two hours ago (written to the store: the API
			// takes only future instants) that fired and failed.
			ctx := context.Background()
			instant := model.RoundUp(time.Now().Add(-2 * time.Hour))
			for _, id := range []string{evOne, evBulk} {
				n, err := e.store.InsertOccurrences(ctx, id, []time.Time{instant}, false, instant)
				require.NoError(t, err)
				require.Equal(t, 1, n)
			}
			failedAt := instant.Add(time.Second)
			claimed, err := e.store.ClaimDue(ctx, repository.ClaimRequest{Now: failedAt, Limit: 10, Token: "tok",
				LeaseUntil: failedAt.Add(time.Minute)})
			require.NoError(t, err)
			require.Len(t, claimed, 2)
			oldError := "receiver answered 500"
			code := 500
			for _, o := range claimed {
				res, err := e.store.RecordOutcomes(ctx, []repository.OutcomeRecord{{OccurrenceID: o.ID, LeaseToken: "tok",
					Status: model.OccurrenceFailed, Now: failedAt, StatusCode: &code, ErrorMessage: &oldError,
					Attempt: &model.Attempt{OccurrenceID: o.ID, EventID: o.EventID, Attempt: 1, StartedAt: failedAt,
						DurationMS: 5, StatusCode: &code, Outcome: "failed", Error: &oldError}}})
				require.NoError(t, err)
				require.NoError(t, res[0])
			}
			one, bulk := occurrenceOf(t, claimed, evOne).ID, occurrenceOf(t, claimed, evBulk).ID

			res := e.do("POST", "/occurrences/"+one+"/retry", e.master, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			var answer occurrenceJSON
			res.json(t, &answer)
			require.Equal(t, "pending", answer.Status, "the answer shows the new state")
			require.Nil(t, answer.ErrorMessage, "the old error is not the current state")
			res = e.do("POST", "/occurrences/retry", e.master, map[string]any{"event_id": evBulk})
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			require.JSONEq(t, `{"requeued":1,"limit_reached":false}`, string(res.Body))
			for _, id := range []string{one, bulk} {
				var got occurrenceJSON
				e.do("GET", "/occurrences/"+id, e.master, nil).json(t, &got)
				require.Equal(t, "pending", got.Status, "after a replay")
				require.Nil(t, got.ErrorMessage, "after a replay")
			}

			replayedAt := time.Now()
			e.sched.Start(context.Background())
			e.sched.Wake(ctx, replayedAt)
			for _, id := range []string{one, bulk} {
				require.Eventually(t, func() bool { return e.occurrenceStatus(t, id) == "completed" }, 60*time.Second,
					10*time.Millisecond, "the replay is delivered")
				var got occurrenceJSON
				e.do("GET", "/occurrences/"+id, e.master, nil).json(t, &got)
				require.Nil(t, got.ErrorMessage)
				var attempts []attemptJSON
				e.do("GET", "/occurrences/"+id+"/attempts", e.master, nil).json(t, &attempts)
				require.Len(t, attempts, 2)
				require.NotNil(t, attempts[0].Error, "earlier errors live in the attempts")
				require.Equal(t, oldError, *attempts[0].Error)
				require.True(t, attempts[1].Manual)
				late := attempts[1].LatenessMS
				require.True(t, late >= 0 && late < time.Since(replayedAt).Milliseconds()+1000,
					"lateness %d ms is measured from the replay, not from the instant two hours ago", late)
			}

			var st model.Stats
			e.do("GET", "/stats", e.master, nil).json(t, &st)
			require.Equal(t, 4, st.Total.Attempts, "the failed and the manual attempts are counted as attempts")
			require.Equal(t, 2, st.Total.LatenessMS.Count, "the first, scheduled attempts have a lateness")
			require.Less(t, st.Total.LatenessMS.P99, int64(2000), "and the manual ones are left out of it")
		})
	}
}
