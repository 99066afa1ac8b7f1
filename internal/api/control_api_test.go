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

// TestDSTPolicyInPreviews: the preview of an event shows what its DST
// policy does in three zones — a skipped gap reading with reason dst_gap, a
// shifted one, both passes of a repeated time.
func TestDSTPolicyInPreviews(t *testing.T) {
	e := newEnv(t, backends()[0].Open)
	type instant struct {
		UTC     string `json:"utc"`
		Local   string `json:"local"`
		Skipped bool   `json:"skipped"`
		Reason  string `json:"reason"`
	}
	for _, tt := range []struct {
		name, zone, start, rrule string
		dst                      map[string]any
		after                    string
		want                     []string // local instants, "skipped:" prefix when skipped
	}{
		{"Santiago midnight gap skipped", "America/Santiago", "2030-09-01T00:30:00", "FREQ=DAILY",
			map[string]any{"gap": "skip"}, "2031-09-05T00:00:00Z",
			[]string{"2031-09-05T00:30:00-04:00", "2031-09-06T00:30:00-04:00", "skipped:2031-09-07T01:30:00-03:00"}},
		{"Santiago midnight gap shifted", "America/Santiago", "2030-09-01T00:30:00", "FREQ=DAILY",
			map[string]any{"gap": "shift"}, "2031-09-05T00:00:00Z",
			[]string{"2031-09-05T00:30:00-04:00", "2031-09-06T00:30:00-04:00", "2031-09-07T01:30:00-03:00"}},
		{"Lord Howe half-hour gap shifted", "Australia/Lord_Howe", "2030-09-01T02:10:00", "FREQ=DAILY",
			map[string]any{"gap": "shift"}, "2031-10-03T12:00:00Z",
			[]string{"2031-10-04T02:10:00+10:30", "2031-10-05T02:40:00+11:00", "2031-10-06T02:10:00+11:00"}},
		{"New York repeated hour both", "America/New_York", "2030-09-01T01:30:00", "FREQ=DAILY",
			map[string]any{"repeat": "both"}, "2031-11-01T12:00:00Z",
			[]string{"2031-11-02T01:30:00-04:00", "2031-11-02T01:30:00-05:00", "2031-11-03T01:30:00-05:00"}},
		{"New York repeated hour last", "America/New_York", "2030-09-01T01:30:00", "FREQ=DAILY",
			map[string]any{"repeat": "last"}, "2031-11-01T12:00:00Z",
			[]string{"2031-11-02T01:30:00-05:00", "2031-11-03T01:30:00-05:00", "2031-11-04T01:30:00-05:00"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			loc, err := time.LoadLocation(tt.zone)
			require.NoError(t, err)
			start, err := time.ParseInLocation("2006-01-02T15:04:05", tt.start, loc)
			require.NoError(t, err)
			ev := e.createEvent(e.master, map[string]any{"name": tt.name, "timezone": tt.zone,
				"start_time": start.Format(time.RFC3339), "rrule": tt.rrule, "dst": tt.dst,
				"webhook": "http://127.0.0.1:9999/hook"})
			res := e.do("GET", "/events/"+ev["id"].(string)+"/preview?count=3&after="+tt.after, e.master, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			var p struct{ Instants []instant }
			res.json(t, &p)
			var got []string
			for _, in := range p.Instants {
				s := in.Local
				if in.Skipped {
					require.Equal(t, "dst_gap", in.Reason)
					s = "skipped:" + s
				}
				got = append(got, s)
			}
			require.Equal(t, tt.want, got)
		})
	}
}

// TestUnskipGivesAnEndedEventItsInstantBack: skipping a one-time event's
// only occurrence ends the event; unskipping it makes it active again.
func TestUnskipGivesAnEndedEventItsInstantBack(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, b.Open)
			id := e.createEvent(e.master, eventBody())["id"].(string)
			res := e.do("GET", "/events/"+id+"/occurrences", e.master, nil)
			var rows []struct{ ID, Status string }
			res.json(t, &rows)
			require.Len(t, rows, 1)
			occ := rows[0].ID
			require.Equal(t, http.StatusOK, e.do("POST", "/occurrences/"+occ+"/skip", e.master, nil).Status)
			require.Equal(t, "inactive", e.do("GET", "/events/"+id, e.master, nil).object(t)["status"],
				"nothing is left to fire")
			res = e.do("POST", "/occurrences/"+occ+"/unskip", e.master, nil)
			require.Equal(t, http.StatusOK, res.Status, "%s", res.Body)
			require.Equal(t, "pending", res.object(t)["status"])
			ev := e.do("GET", "/events/"+id, e.master, nil).object(t)
			require.Equal(t, "active", ev["status"])
			require.NotNil(t, ev["next_run_at"])
		})
	}
}
