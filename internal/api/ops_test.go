package api

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/repository/repositorytest"
)

// failAll fires every occurrence of the given events as failed at `at`, one
// attempt each lasting the given durations in order.
func failAll(t *testing.T, e *env, at time.Time, durations ...int64) []model.Occurrence {
	t.Helper()
	ctx := context.Background()
	claimed, err := e.store.ClaimDue(ctx, repository.ClaimRequest{Now: at, Limit: 100, Token: "tok",
		LeaseUntil: at.Add(time.Minute)})
	require.NoError(t, err)
	require.Len(t, claimed, len(durations))
	var recs []repository.OutcomeRecord
	for i, o := range claimed {
		recs = append(recs, repository.OutcomeRecord{OccurrenceID: o.ID, LeaseToken: "tok",
			Status: model.OccurrenceFailed, Now: at, Attempt: &model.Attempt{OccurrenceID: o.ID,
				EventID: o.EventID, Attempt: 1, StartedAt: at, DurationMS: durations[i], Outcome: "failed"}})
	}
	res, err := e.store.RecordOutcomes(ctx, recs)
	require.NoError(t, err)
	for _, r := range res {
		require.NoError(t, r)
	}
	return claimed
}

func occurrenceOf(t *testing.T, occ []model.Occurrence, eventID string) model.Occurrence {
	t.Helper()
	for _, o := range occ {
		if o.EventID == eventID {
			return o
		}
	}
	t.Fatalf("no occurrence of event %s", eventID)
	return model.Occurrence{}
}

func TestRetryOccurrenceAPI(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			evA := e.createEvent(e.master, eventBody("a"))
			evB := e.createEvent(e.master, eventBody("b"))
			evAB := e.createEvent(e.master, eventBody("a", "b"))
			fired := failAll(t, e, time.Now().Add(2*time.Hour), 100, 200, 300)
			occA := occurrenceOf(t, fired, evA["id"].(string))
			occB := occurrenceOf(t, fired, evB["id"].(string))
			occAB := occurrenceOf(t, fired, evAB["id"].(string))
			writeA := e.mint("write", []string{"a"})
			readA := e.mint("read", []string{"a"})

			res := e.do("POST", "/occurrences/"+occA.ID+"/retry", writeA, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			body := res.object(t)
			require.Equal(t, occA.ID, body["id"], "same occurrence, same delivery id")
			require.Equal(t, "pending", body["status"], "queued for the manual attempt")
			stored, err := e.store.GetOccurrence(context.Background(), occA.ID)
			require.NoError(t, err)
			require.True(t, stored.ManualRetry)
			require.False(t, stored.NextAttemptAt.After(time.Now()), "due now")

			tests := []struct {
				name, id, token string
				want            int
			}{
				{"already queued", occA.ID, writeA, http.StatusConflict},
				{"outside scope", occB.ID, writeA, http.StatusNotFound},
				{"readable, not modifiable", occAB.ID, writeA, http.StatusForbidden},
				{"read token", occA.ID, readA, http.StatusForbidden},
				{"unknown", "0b0e2f4e-7d1c-4c36-9a53-2e8f4f1f0f00", writeA, http.StatusNotFound},
				{"no token", occA.ID, "", http.StatusUnauthorized},
			}
			for _, tt := range tests {
				if res := e.do("POST", "/occurrences/"+tt.id+"/retry", tt.token, nil); res.Status != tt.want {
					t.Errorf("%s: got %d, want %d (%s)", tt.name, res.Status, tt.want, res.Body)
				}
			}
			o, err := e.store.GetOccurrence(context.Background(), occB.ID)
			require.NoError(t, err)
			require.Equal(t, model.OccurrenceFailed, o.Status, "a refused retry changes nothing")
		})
	}
}

func TestBulkRetryAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t, repositorytest.SQLite)
	evA := e.createEvent(e.master, eventBody("a"))
	e.createEvent(e.master, eventBody("b"))
	evAB := e.createEvent(e.master, eventBody("a", "b"))
	fired := failAll(t, e, time.Now().Add(2*time.Hour), 1, 2, 3)
	writeA := e.mint("write", []string{"a"})

	res := e.do("POST", "/occurrences/retry", writeA, map[string]any{})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	require.JSONEq(t, `{"requeued":1,"limit_reached":false}`, string(res.Body), "only the event entirely in scope")
	o, err := e.store.GetOccurrence(context.Background(), occurrenceOf(t, fired, evA["id"].(string)).ID)
	require.NoError(t, err)
	require.Equal(t, model.OccurrencePending, o.Status, "queued for the manual attempt")
	require.True(t, o.ManualRetry)
	o, err = e.store.GetOccurrence(context.Background(), occurrenceOf(t, fired, evAB["id"].(string)).ID)
	require.NoError(t, err)
	require.Equal(t, model.OccurrenceFailed, o.Status, "shared with tag b: not modifiable with scope [a]")

	res = e.do("POST", "/occurrences/retry", e.master, map[string]any{"limit": 1, "status": "failed"})
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	require.JSONEq(t, `{"requeued":1,"limit_reached":true}`, string(res.Body))
	res = e.do("POST", "/occurrences/retry", e.master, map[string]any{"status": []string{"failed", "missed"},
		"since": time.Now().Add(-time.Hour), "until": time.Now().Add(3 * time.Hour)})
	require.JSONEq(t, `{"requeued":1,"limit_reached":false}`, string(res.Body))

	bad := []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"status": "pending"}, "status"},
		{map[string]any{"status": "sleeping"}, "status"},
		{map[string]any{"limit": 0}, "limit"},
		{map[string]any{"tags": "a"}, "tags"},
		{map[string]any{"bogus": true}, "bogus"},
		{map[string]any{"since": "yesterday"}, "since"},
	}
	for _, tt := range bad {
		res := e.do("POST", "/occurrences/retry", e.master, tt.body)
		if res.Status != http.StatusBadRequest || res.object(t)["field"] != tt.field {
			t.Errorf("body %v: got %d %s, want 400 naming %s", tt.body, res.Status, res.Body, tt.field)
		}
	}
	readA := e.mint("read", []string{"a"})
	require.Equal(t, http.StatusForbidden, e.do("POST", "/occurrences/retry", readA, map[string]any{}).Status)
}

func TestStatsAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t, repositorytest.SQLite)
	e.createEvent(e.master, eventBody("a"))
	e.createEvent(e.master, eventBody("b"))
	e.createEvent(e.master, eventBody("a", "b"))
	failAll(t, e, time.Now().Add(2*time.Hour), 100, 200, 300)
	until := url.QueryEscape(time.Now().Add(3 * time.Hour).Format(time.RFC3339))

	var all model.Stats
	res := e.do("GET", "/stats?until="+until, e.master, nil)
	require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
	res.json(t, &all)
	require.Equal(t, 3, all.Total.Occurrences)
	require.Equal(t, 3, all.Total.ByStatus["failed"])
	require.Equal(t, model.Percentiles{Count: 3, P50: 200, P95: 300, P99: 300}, all.Total.DurationMS)
	require.Contains(t, all.ByAction, "webhook")

	var scoped model.Stats
	e.do("GET", "/stats?until="+until, e.mint("read", []string{"b"}), nil).json(t, &scoped)
	require.Equal(t, 2, scoped.Total.Occurrences, "only events readable with scope [b]")

	var none model.Stats
	e.do("GET", "/stats", e.master, nil).json(t, &none)
	require.Zero(t, none.Total.Occurrences, "the default window is the last 24 h; these are ahead")

	for _, q := range []string{"since=" + until + "&until=" + until, "since=nope", "since=2000-01-01T00:00:00Z"} {
		if res := e.do("GET", "/stats?"+q, e.master, nil); res.Status != http.StatusBadRequest {
			t.Errorf("GET /stats?%s: got %d, want 400", q, res.Status)
		}
	}
}

func TestArchivedOccurrencesAPI(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			// A recurs: it stays live with its next instants (a one-time
			// event whose occurrence was archived is archived too).
			bodyA := eventBody("a")
			bodyA["rrule"] = "FREQ=DAILY"
			evA := e.createEvent(e.master, bodyA)
			evB := e.createEvent(e.master, eventBody("b"))
			at := time.Now().Add(2 * time.Hour)
			fired := failAll(t, e, at, 1, 2)
			require.Equal(t, http.StatusNoContent, e.do("DELETE", "/events/"+evB["id"].(string), e.master, nil).Status)
			ctx := context.Background()
			// Past the end of the week holding at: on PostgreSQL history is
			// archived a whole week at a time.
			later := at.Add(8 * 24 * time.Hour)
			batch := repository.ArchiveBatch{Cutoff: later, Now: later, Limit: 100}
			n, err := e.store.ArchiveOccurrences(ctx, batch)
			require.NoError(t, err)
			require.Equal(t, 2, n.Occurrences)
			n, err = e.store.ArchiveEvents(ctx, batch)
			require.NoError(t, err)
			require.Equal(t, 1, n.Events, "the deleted event goes to the archive with its tags")

			list := func(token, query string) []map[string]any {
				t.Helper()
				res := e.do("GET", "/occurrences?archived=true"+query, token, nil)
				require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
				var page struct {
					Data       []map[string]any `json:"data"`
					Pagination map[string]any   `json:"pagination"`
				}
				res.json(t, &page)
				require.EqualValues(t, len(page.Data), page.Pagination["total"])
				return page.Data
			}
			all := list(e.master, "")
			require.Len(t, all, 2)
			for _, o := range all {
				require.Equal(t, true, o["archived"])
				require.NotEmpty(t, o["archived_at"])
			}
			onlyB := list(e.mint("read", []string{"b"}), "")
			require.Len(t, onlyB, 1, "scope through the archived event's tags")
			require.Equal(t, occurrenceOf(t, fired, evB["id"].(string)).ID, onlyB[0]["id"])
			onlyA := list(e.mint("read", []string{"a"}), "&status=failed")
			require.Len(t, onlyA, 1, "scope through the live event's tags")
			require.Equal(t, evA["id"], onlyA[0]["event_id"])
			require.Len(t, list(e.master, "&tags=b"), 1)
			require.Empty(t, list(e.mint("read", []string{"zzz"}), ""))
			require.Empty(t, list(e.master, "&event_id="+evA["id"].(string)+"&status=completed"))

			live := e.do("GET", "/occurrences", e.master, nil).object(t)
			require.Empty(t, live["data"], "moved out of the live listing")
			require.Equal(t, http.StatusBadRequest, e.do("GET", "/occurrences?archived=maybe", e.master, nil).Status)
			require.Equal(t, http.StatusNotFound,
				e.do("POST", "/occurrences/"+onlyA[0]["id"].(string)+"/retry", e.master, nil).Status,
				"archived history is not re-delivered")
		})
	}
}
