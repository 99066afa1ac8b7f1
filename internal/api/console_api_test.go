package api

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/qhronos/qhronos/internal/coordination"
	"github.com/qhronos/qhronos/internal/coordination/coordinationtest"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/repository/repositorytest"
)

// fireWithCodes records one failed attempt per due occurrence at `at`, the
// i-th claimed one answering codes[i] after lateness[i] milliseconds.
func fireWithCodes(t *testing.T, e *env, at time.Time, codes []int, lateness []int64) []model.Occurrence {
	t.Helper()
	ctx := context.Background()
	claimed, err := e.store.ClaimDue(ctx, repository.ClaimRequest{Now: at, Limit: 100, Token: "tok",
		LeaseUntil: at.Add(time.Minute)})
	require.NoError(t, err)
	require.Len(t, claimed, len(codes))
	var recs []repository.OutcomeRecord
	for i, o := range claimed {
		code := codes[i]
		recs = append(recs, repository.OutcomeRecord{OccurrenceID: o.ID, LeaseToken: "tok",
			Status: model.OccurrenceFailed, Now: at, StatusCode: &code, Attempt: &model.Attempt{
				OccurrenceID: o.ID, EventID: o.EventID, Attempt: 1, StartedAt: at, DurationMS: 10,
				StatusCode: &code, Outcome: "failed", LatenessMS: lateness[i]}})
	}
	res, err := e.store.RecordOutcomes(ctx, recs)
	require.NoError(t, err)
	for _, r := range res {
		require.NoError(t, r)
	}
	return claimed
}

func TestEventNameSearch(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			for _, name := range []string{"Nightly Report", "weekly report", "billing_run", "billing-run", "100% done"} {
				body := eventBody("a")
				body["name"] = name
				e.createEvent(e.master, body)
			}
			names := func(query, token string) []string {
				t.Helper()
				res := e.do("GET", "/events?"+query, token, nil)
				require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
				var evs []struct {
					Name string `json:"name"`
				}
				res.json(t, &evs)
				out := []string{}
				for _, ev := range evs {
					out = append(out, ev.Name)
				}
				return out
			}
			require.ElementsMatch(t, []string{"Nightly Report", "weekly report"}, names("q=REPORT", e.master))
			require.Equal(t, []string{"billing_run"}, names("q="+url.QueryEscape("g_r"), e.master), "_ is literal")
			require.Equal(t, []string{"100% done"}, names("q="+url.QueryEscape("0%"), e.master), "% is literal")
			require.Empty(t, names("q=nothing-like-this", e.master))
			require.Empty(t, names("q=report", e.mint("read", []string{"b"})), "scope still applies")
			require.Len(t, names("q=report&limit=1", e.master), 1)

			res := e.do("GET", "/events?q="+url.QueryEscape(string(make([]byte, 201))), e.master, nil)
			require.Equal(t, http.StatusBadRequest, res.Status)
			require.Equal(t, "q", res.object(t)["field"])
		})
	}
}

func TestOccurrenceStatusCodeFilter(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			for range 3 {
				e.createEvent(e.master, eventBody("a"))
			}
			fired := fireWithCodes(t, e, time.Now().Add(2*time.Hour), []int{500, 404, 500}, []int64{0, 0, 0})
			list := func(query string) (ids []string, total int) {
				t.Helper()
				res := e.do("GET", "/occurrences?"+query, e.master, nil)
				require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
				var page struct {
					Data []struct {
						ID         string `json:"id"`
						StatusCode int    `json:"status_code"`
					} `json:"data"`
					Pagination struct {
						Total int `json:"total"`
					} `json:"pagination"`
				}
				res.json(t, &page)
				for _, o := range page.Data {
					ids = append(ids, o.ID)
				}
				return ids, page.Pagination.Total
			}
			ids, total := list("status=failed&status_code=500")
			require.Len(t, ids, 2)
			require.Equal(t, 2, total)
			var want404 string
			for _, o := range fired {
				if !contains(ids, o.ID) {
					want404 = o.ID
				}
			}
			ids, total = list("status_code=404")
			require.Equal(t, []string{want404}, ids)
			require.Equal(t, 1, total)

			for _, bad := range []string{"abc", "99", "600"} {
				res := e.do("GET", "/occurrences?status_code="+bad, e.master, nil)
				require.Equal(t, http.StatusBadRequest, res.Status, bad)
				require.Equal(t, "status_code", res.object(t)["field"])
			}

			res := e.do("POST", "/occurrences/retry", e.master, map[string]any{"status": "failed", "status_code": 404})
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			require.EqualValues(t, 1, res.object(t)["requeued"])
			got, err := e.store.GetOccurrence(context.Background(), want404)
			require.NoError(t, err)
			require.Equal(t, model.OccurrencePending, got.Status, "only the 404 one is re-queued")
			_, total = list("status=failed")
			require.Equal(t, 2, total)

			res = e.do("POST", "/occurrences/retry", e.master, map[string]any{"status_code": 42})
			require.Equal(t, http.StatusBadRequest, res.Status)
			require.Equal(t, "status_code", res.object(t)["field"])
		})
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func TestStatsTimeline(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			for range 4 {
				e.createEvent(e.master, eventBody("a"))
			}
			e.createEvent(e.master, eventBody("b"))
			at := time.Now().Add(2 * time.Hour).UTC().Truncate(time.Minute).Add(30 * time.Second)
			fireWithCodes(t, e, at, []int{500, 500, 500, 500, 500}, []int64{10, 20, 30, 40, 50})
			since := at.Add(-10 * time.Minute).Format(time.RFC3339)
			until := at.Add(5 * time.Minute).Format(time.RFC3339)
			get := func(token, query string) (out struct {
				Since   time.Time `json:"since"`
				Step    string    `json:"step"`
				Buckets []struct {
					Start      time.Time `json:"start"`
					Attempts   int       `json:"attempts"`
					Failed     int       `json:"failed"`
					Completed  int       `json:"completed"`
					LatenessMS struct {
						Count, P50, P99 int
					} `json:"lateness_ms"`
				} `json:"buckets"`
			}) {
				t.Helper()
				res := e.do("GET", "/stats/timeline?"+query, token, nil)
				require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
				res.json(t, &out)
				return out
			}
			q := url.Values{"since": {since}, "until": {until}, "step": {"1m"}}.Encode()
			tl := get(e.master, q)
			require.Len(t, tl.Buckets, 16, "the window is aligned down to the step, its end rounded up")
			require.Equal(t, at.Add(-10*time.Minute).Truncate(time.Minute), tl.Since)
			total := 0
			for i, bk := range tl.Buckets {
				total += bk.Attempts
				if bk.Start.Equal(at.Truncate(time.Minute)) {
					require.Equal(t, 5, bk.Attempts, "bucket %d", i)
					require.Equal(t, 5, bk.Failed)
					require.Equal(t, 0, bk.Completed)
					require.Equal(t, 5, bk.LatenessMS.Count)
					require.Equal(t, 30, bk.LatenessMS.P50)
					require.Equal(t, 50, bk.LatenessMS.P99)
				}
			}
			require.Equal(t, 5, total)

			scoped := get(e.mint("read", []string{"b"}), q)
			total = 0
			for _, bk := range scoped.Buckets {
				total += bk.Attempts
			}
			require.Equal(t, 1, total, "a scoped token counts only its events")

			require.Len(t, get(e.master, "step=15m&since="+url.QueryEscape(at.Add(-24*time.Hour).Format(time.RFC3339))+
				"&until="+url.QueryEscape(at.Format(time.RFC3339))).Buckets, 97)
			for _, bad := range []struct{ query, field string }{
				{"step=2m", "step"}, {"since=yesterday", "since"},
				{"since=" + url.QueryEscape(until) + "&until=" + url.QueryEscape(since), "since"},
				{"step=1m&since=2020-01-01T00:00:00Z&until=2020-01-03T00:00:00Z", "since"},
				// Windows over 292 years once overflowed the bucket count into a 500.
				{"since=1700-01-01T00:00:00Z", "since"},
				{"step=1h&since=0001-01-01T00:00:00Z&until=9999-12-31T00:00:00Z", "since"},
			} {
				res := e.do("GET", "/stats/timeline?"+bad.query, e.master, nil)
				require.Equal(t, http.StatusBadRequest, res.Status, bad.query)
				require.Equal(t, bad.field, res.object(t)["field"], bad.query)
			}
		})
	}
}

func TestStatsWithoutTheActionBreakdown(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			for range 3 {
				e.createEvent(e.master, eventBody("a"))
			}
			e.createEvent(e.master, eventBody("b"))
			at := time.Now().Add(2 * time.Hour)
			fireWithCodes(t, e, at, []int{500, 500, 500, 500}, []int64{10, 20, 30, 40})
			q := "since=" + url.QueryEscape(at.Add(-3*time.Hour).Format(time.RFC3339)) + "&until=" +
				url.QueryEscape(at.Add(time.Minute).Format(time.RFC3339))
			get := func(token, query string) map[string]any {
				t.Helper()
				res := e.do("GET", "/stats?"+query, token, nil)
				require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
				return res.object(t)
			}
			full, totals := get(e.master, q), get(e.master, q+"&by_action=false")
			require.Equal(t, full["total"], totals["total"], "the same totals")
			require.NotEmpty(t, full["by_action"])
			require.Empty(t, totals["by_action"])
			require.EqualValues(t, 4, totals["total"].(map[string]any)["attempts"])

			scoped := get(e.mint("read", []string{"b"}), q+"&by_action=false")
			require.EqualValues(t, 1, scoped["total"].(map[string]any)["attempts"], "the scope still applies")
			require.Equal(t, get(e.mint("read", []string{"b"}), q)["total"], scoped["total"])

			res := e.do("GET", "/stats?by_action=maybe", e.master, nil)
			require.Equal(t, http.StatusBadRequest, res.Status)
			require.Equal(t, "by_action", res.object(t)["field"])
		})
	}
}

func TestStatusQueueCountsWaitingWorkOnly(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			for range 3 {
				e.createEvent(e.master, eventBody("a"))
			}
			fireWithCodes(t, e, time.Now().Add(2*time.Hour), []int{500, 500, 500}, []int64{0, 0, 0})
			e.createEvent(e.master, eventBody("a"))
			e.createEvent(e.master, eventBody("a"))
			res := e.do("GET", "/status", "", nil)
			require.Equal(t, http.StatusOK, res.Status)
			var st struct {
				Queue map[string]int `json:"queue"`
			}
			res.json(t, &st)
			require.Equal(t, map[string]int{"pending": 2}, st.Queue, "failed history is not queue")
		})
	}
}

// /status says in one word how the instance is: ok, degraded when Redis is
// away, unavailable when the database is.
func TestStatusSaysOkDegradedOrUnavailable(t *testing.T) {
	statusOf := func(e *env) string {
		res := e.do("GET", "/status", "", nil)
		require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
		return res.object(t)["status"].(string)
	}
	e := newEnv(t, repositorytest.SQLite)
	require.Equal(t, "ok", statusOf(e))

	addr, stop, _ := coordinationtest.StartRedisServer(t)
	client := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	t.Cleanup(func() { _ = client.Close() })
	coord := coordination.NewRedis(client, "status-test:", zap.NewNop())
	t.Cleanup(func() { _ = coord.Close() })
	away := newEnv(t, repositorytest.SQLite, withCoordinator(coord, "instance-away"))
	require.Equal(t, "ok", statusOf(away))
	stop() // Redis goes away
	require.Equal(t, "degraded", statusOf(away))

	require.NoError(t, e.store.Close())
	require.Equal(t, "unavailable", statusOf(e))
}
