package api

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestJitterPreviewAndLedgerAgree: a jittered series previews exactly the
// instants its rows hold, an exception shows in both, and the time policy
// is validated and echoed.
func TestJitterPreviewAndLedgerAgree(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			start := time.Now().Add(time.Hour).UTC().Truncate(time.Hour)
			body := map[string]any{"name": "spread", "start_time": start.Format(time.RFC3339),
				"rrule": "FREQ=HOURLY;COUNT=5", "webhook": "http://127.0.0.1:9999/hook", "jitter": "5m",
				"dst": map[string]any{"gap": "skip", "repeat": "both"}}
			ev := e.createEvent(e.master, body)
			id := ev["id"].(string)
			require.Equal(t, "5m0s", ev["jitter"])
			require.Equal(t, map[string]any{"gap": "skip", "repeat": "both"}, ev["dst"])

			type instant struct {
				UTC     time.Time `json:"utc"`
				Skipped bool      `json:"skipped"`
				Reason  string    `json:"reason"`
			}
			preview := func() []instant {
				res := e.do("GET", "/events/"+id+"/preview?count=5&after="+start.Add(-time.Second).Format(time.RFC3339), e.master, nil)
				require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
				var p struct{ Instants []instant }
				res.json(t, &p)
				return p.Instants
			}
			type row struct {
				ID          string    `json:"id"`
				ScheduledAt time.Time `json:"scheduled_at"`
				Status      string    `json:"status"`
				Reason      *string   `json:"reason"`
			}
			rows := func() []row {
				res := e.do("GET", "/events/"+id+"/occurrences?order=scheduled_at", e.master, nil)
				require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
				var out []row
				res.json(t, &out)
				return out
			}
			p, r := preview(), rows()
			require.Len(t, p, 5)
			require.Len(t, r, 5)
			for i := range p {
				require.True(t, p[i].UTC.Equal(r[i].ScheduledAt), "preview %s, row %s", p[i].UTC, r[i].ScheduledAt)
				off := r[i].ScheduledAt.Sub(start.Add(time.Duration(i) * time.Hour))
				require.True(t, off >= 0 && off < 5*time.Minute, "instant %d jittered by %s", i, off)
			}

			res := e.do("POST", "/events/"+id+"/exceptions", e.master, map[string]any{"at": p[1].UTC, "action": "skip",
				"reason": "audit"})
			require.Equal(t, http.StatusCreated, res.Status, "%s", res.Body)
			p, r = preview(), rows()
			require.True(t, p[1].Skipped)
			require.Equal(t, "manual", p[1].Reason)
			require.Equal(t, "skipped", r[1].Status)
			require.Equal(t, "manual", *r[1].Reason)
			require.Equal(t, "pending", r[2].Status)

			for field, bad := range map[string]map[string]any{
				"dst.gap":         {"dst": map[string]any{"gap": "sideways"}},
				"dst":             {"dst": map[string]any{"gap": "skip", "when": "now"}},
				"jitter":          {"jitter": "2h"},
				"calendars[0].id": {"calendars": []any{map[string]any{"id": "weekends"}}},
			} {
				res := e.do("PUT", "/events/"+id, e.master, bad)
				require.Equal(t, http.StatusBadRequest, res.Status, "%s", res.Body)
				require.Equal(t, field, res.object(t)["field"], "%s", res.Body)
			}
		})
	}
}
