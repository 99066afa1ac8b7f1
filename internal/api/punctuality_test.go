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
)

// TestPunctualityAPI covers GET /stats/punctuality: the figures a user
// reads (on time and late against the tolerance, success, percentiles),
// each grouping, a scoped token's view, and the 400s naming their field.
func TestPunctualityAPI(t *testing.T) {
	t.Parallel()
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			ctx := context.Background()
			names := map[string]string{}
			for _, spec := range []struct {
				name string
				tags []string
			}{{"nightly export", []string{"a"}}, {"invoice run", []string{"a", "b"}}, {"untagged sync", nil}} {
				body := eventBody(spec.tags...)
				body["name"] = spec.name
				names[e.createEvent(e.master, body)["id"].(string)] = spec.name
			}
			// Each event's first instant: the export fires 40 ms late and
			// succeeds, the invoice run 1.5 s late and fails, the sync 2 s
			// late and succeeds.
			at := time.Now().Add(2 * time.Hour)
			claimed, err := e.store.ClaimDue(ctx, repository.ClaimRequest{Now: at, Limit: 10, Token: "tok",
				LeaseUntil: at.Add(time.Minute)})
			require.NoError(t, err)
			require.Len(t, claimed, 3)
			var recs []repository.OutcomeRecord
			for _, o := range claimed {
				status, late := model.OccurrenceCompleted, int64(40)
				switch names[o.EventID] {
				case "invoice run":
					status, late = model.OccurrenceFailed, 1500
				case "untagged sync":
					late = 2000
				}
				started := o.ScheduledAt.Add(time.Duration(late) * time.Millisecond)
				recs = append(recs, repository.OutcomeRecord{OccurrenceID: o.ID, LeaseToken: "tok", Status: status,
					Now: started, Attempt: &model.Attempt{OccurrenceID: o.ID, EventID: o.EventID, Attempt: 1,
						StartedAt: started, DurationMS: 10, Outcome: string(status), LatenessMS: late}})
			}
			res, err := e.store.RecordOutcomes(ctx, recs)
			require.NoError(t, err)
			for _, r := range res {
				require.NoError(t, r)
			}
			window := "from=" + url.QueryEscape(at.Add(-3*time.Hour).Format(time.RFC3339)) +
				"&to=" + url.QueryEscape(at.Add(time.Hour).Format(time.RFC3339))
			report := func(token, query string) model.PunctualityReport {
				t.Helper()
				res := e.do("GET", "/stats/punctuality?"+window+query, token, nil)
				require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
				var out model.PunctualityReport
				res.json(t, &out)
				return out
			}

			all := report(e.master, "")
			require.Equal(t, model.PunctualityByEvent, all.GroupBy)
			require.EqualValues(t, 1000, all.ToleranceMS)
			require.Equal(t, 0, all.From.Minute(), "the window is widened to whole hours")
			require.Equal(t, "1h", all.TrendStep)
			require.Equal(t, 3, all.Total.Due)
			require.Equal(t, 1, all.Total.OnTime)
			require.Equal(t, 2, all.Total.Late)
			require.Equal(t, model.Percentiles{Count: 3, P50: 1500, P95: 2000, P99: 2000}, all.Total.LatenessMS)
			require.InDelta(t, 2.0/3, *all.Total.SuccessRatio, 1e-9)
			require.Len(t, all.Groups, 3)
			require.Equal(t, "invoice run", all.Groups[0].Name, "groups sorted by name")
			require.Equal(t, 1, all.Groups[0].Failed)
			var due int
			for _, p := range all.Trend {
				due += p.Due
			}
			require.Equal(t, 3, due, "the trend adds up to the total")

			lenient := report(e.master, "&tolerance=1.5s")
			require.Equal(t, 1, lenient.Total.OnTime, "less than the tolerance late is on time")
			lenient = report(e.master, "&tolerance=1.6s")
			require.Equal(t, 2, lenient.Total.OnTime)
			rounded := report(e.master, "&tolerance=1501ms")
			require.EqualValues(t, 1500, rounded.ToleranceMS, "the tolerance is rounded down to the histogram")
			require.Equal(t, 1, rounded.Total.OnTime)

			byTag := report(e.master, "&group_by=tag")
			got := map[string]int{}
			for _, g := range byTag.Groups {
				key := "<nil>"
				if g.Key != nil {
					key = *g.Key
				}
				got[key+" "+g.Name] = g.Due
			}
			require.Equal(t, map[string]int{"a a": 2, "b b": 1, "<nil> (untagged)": 1}, got)
			byEndpoint := report(e.master, "&group_by=endpoint")
			require.Len(t, byEndpoint.Groups, 1)
			require.Nil(t, byEndpoint.Groups[0].Key)
			require.Equal(t, "(no endpoint)", byEndpoint.Groups[0].Name)

			scoped := report(e.mint("read", []string{"b"}), "&group_by=event")
			require.Len(t, scoped.Groups, 1, "a token scoped to b sees b's events only")
			require.Equal(t, "invoice run", scoped.Groups[0].Name)
			filtered := report(e.master, "&tag=a")
			require.Equal(t, 2, filtered.Total.Due)

			for q, field := range map[string]string{"group_by=owner": "group_by", "tolerance=soon": "tolerance",
				"tolerance=-1s": "tolerance", "tolerance=25h": "tolerance", "from=nope": "from",
				"from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z": "from",
				"from=2020-01-01T00:00:00Z&to=2026-01-01T00:00:00Z": "from", "tag=": "tag"} {
				res := e.do("GET", "/stats/punctuality?"+q, e.master, nil)
				require.Equal(t, http.StatusBadRequest, res.Status, "%s: %s", q, res.Body)
				require.Equal(t, field, res.object(t)["field"], q)
			}
		})
	}
}
