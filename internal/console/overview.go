package console

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/qhronos/qhronos/client"
)

// percentiles is a percentile summary as the overview shows it.
type percentiles struct {
	Count int
	P50   int64
	P95   int64
	P99   int64
}

// groupStats is one /stats group as the overview shows it.
type groupStats struct {
	Occurrences int
	ByStatus    map[string]int
	Attempts    int
	DurationMS  percentiles
	LatenessMS  percentiles
	Due         int
	Retrying    int
}

func intOf(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

func toGroupStats(s *client.Stats) groupStats {
	t := s.Total
	g := groupStats{Occurrences: intOf(t.Occurrences), ByStatus: t.ByStatus, Attempts: intOf(t.Attempts),
		Due: intOf(t.Due), Retrying: intOf(t.Retrying)}
	if d := t.DurationMs; d != nil {
		g.DurationMS = percentiles{d.Count, int64(d.P50), int64(d.P95), int64(d.P99)}
	}
	if l := t.LatenessMs; l != nil {
		g.LatenessMS = percentiles{l.Count, int64(l.P50), int64(l.P95), int64(l.P99)}
	}
	return g
}

// chartData is what app.js hands to uPlot: x in Unix seconds, one series
// per line; per-minute rates for deliveries.
type chartData struct {
	X         []int64   `json:"x"`
	Completed []float64 `json:"completed"`
	Failed    []float64 `json:"failed"`
	P50       []*int64  `json:"p50"`
	P99       []*int64  `json:"p99"`
}

func toChart(t *client.Timeline, perMinute float64) string {
	var d chartData
	for _, b := range t.Buckets {
		d.X = append(d.X, b.Start.Unix())
		d.Completed = append(d.Completed, float64(b.Completed)/perMinute)
		d.Failed = append(d.Failed, float64(b.Failed)/perMinute)
		if b.LatenessMs.Count > 0 {
			p50, p99 := int64(b.LatenessMs.P50), int64(b.LatenessMs.P99)
			d.P50, d.P99 = append(d.P50, &p50), append(d.P99, &p99)
		} else {
			d.P50, d.P99 = append(d.P50, nil), append(d.P99, nil)
		}
	}
	b, _ := json.Marshal(d)
	return string(b)
}

type count struct {
	Name  string
	Count int
}

func sortedCounts(m map[string]int) []count {
	out := make([]count, 0, len(m))
	for k, v := range m {
		out = append(out, count{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// backlogRow is one waiting state, with what it means.
type backlogRow struct {
	Name, Meaning string
	Count         int
}

// backlogMeaning explains the waiting states in the backlog table.
var backlogMeaning = map[string]string{
	"pending":      "planned; fires at its instant (the due-now figure above counts those already past it)",
	"dispatching":  "claimed by a worker, being delivered now",
	"retrying":     "failed an attempt; waits for its next try",
	"awaiting_ack": "delivered; waits for the receiver's acknowledgement",
	"running":      "accepted by its receiver, which runs the job; waits for its completion by callback (or times out)",
}

// loop is one background loop of /status, for people.
type loop struct {
	Name       string
	Runs       int64
	LastRun    *time.Time
	DurationMS *int64
	Result     string
	Error      string
	Healthy    bool
	Other      []count
}

func numberOf(v any) (int64, bool) {
	switch n := v.(type) {
	case float64:
		return int64(n), true
	case int64:
		return n, true
	case int:
		return int64(n), true
	}
	return 0, false
}

func toLoop(name string, v any) loop {
	l := loop{Name: name, Healthy: true}
	m, _ := v.(map[string]any)
	l.Runs, _ = numberOf(m["runs"])
	if t, ok := m["last_run"].(string); ok {
		if at, err := time.Parse(time.RFC3339Nano, t); err == nil {
			l.LastRun = &at
		}
	}
	if d, ok := numberOf(m["duration_ms"]); ok {
		l.DurationMS = &d
	}
	if h, ok := m["healthy"].(bool); ok {
		l.Healthy = h
	}
	l.Error, _ = m["error"].(string)
	if n, ok := numberOf(m["result"]); ok {
		l.Result = fmt.Sprintf("%d handled", n)
	}
	for k, v := range m {
		switch k {
		case "runs", "last_run", "error", "healthy", "duration_ms", "result":
			continue
		}
		if n, ok := numberOf(v); ok {
			l.Other = append(l.Other, count{strings.ReplaceAll(k, "_", " "), int(n)})
		}
	}
	sort.Slice(l.Other, func(i, j int) bool { return l.Other[i].Name < l.Other[j].Name })
	return l
}

// attention counts what needs a person, each with the page that shows it;
// More means the count stopped at the listing's page size.
type attention struct {
	OpenCircuits, PausedEvents int
	MoreOpen, MorePaused       bool
}

// attentionLimit bounds the counts of open circuits and paused events: the
// API's listings carry no total, and one page is enough to say "100+".
const attentionLimit = 100

// workers is what the dispatch workers hold, from /status's dispatcher
// report; Stuck names destinations only when /status named them (the
// master token or an admin token).
type workers struct {
	Busy, Total, ScopesAtShare, StuckCount int
	OldestMS                               int64
	Stuck                                  []stuckDestination
}

// stuckDestination is a destination whose attempts stopped ending.
type stuckDestination struct {
	Destination      string
	Workers, Overdue int
	OldestMS         int64
}

func toWorkers(dispatcher any) workers {
	m, _ := dispatcher.(map[string]any)
	num := func(m map[string]any, k string) int64 { n, _ := numberOf(m[k]); return n }
	w := workers{Busy: int(num(m, "workers_busy")), Total: int(num(m, "workers")),
		ScopesAtShare: int(num(m, "scopes_at_share")), StuckCount: int(num(m, "stuck_destinations")),
		OldestMS: num(m, "oldest_attempt_ms")}
	dests, _ := m["destinations"].([]any)
	for _, v := range dests {
		d, _ := v.(map[string]any)
		if stuck, _ := d["stuck"].(bool); stuck {
			name, _ := d["destination"].(string)
			w.Stuck = append(w.Stuck, stuckDestination{Destination: name, Workers: int(num(d, "workers")),
				Overdue: int(num(d, "overdue")), OldestMS: num(d, "oldest_attempt_ms")})
		}
	}
	return w
}

type overviewData struct {
	Day, Hour           groupStats
	DayCounts           []count
	FailedHour          int
	Backlog             []backlogRow
	HourChart, DayChart string
	StatusText          string
	Backends            map[string]any
	Loops               []loop
	Replans             loop
	PendingReplans      int
	Instance, Version   string
	Uptime              string
	Attention           attention
	Workers             workers
}

func (c *Console) overview(w http.ResponseWriter, r *http.Request, s *session) {
	now := time.Now().UTC()
	var d overviewData
	var (
		day, hour     *client.Stats
		hourTL, dayTL *client.Timeline
		st            *client.Status
		open          *client.Page[client.Endpoint]
		paused        *client.Page[client.Event]
	)
	hourAgo, dayAgo := now.Add(-time.Hour), now.Add(-24*time.Hour)
	sdk, ctx := c.sdk(r), r.Context()
	lim := attentionLimit
	// The reads are independent: run them at once, so the page takes as
	// long as the slowest, not the sum.
	calls := []func() error{
		func() (err error) { day, err = sdk.Stats(ctx, client.StatsParams{ByAction: client.Ptr(false)}); return },
		func() (err error) {
			hour, err = sdk.Stats(ctx, client.StatsParams{Since: &hourAgo, ByAction: client.Ptr(false)})
			return
		},
		func() (err error) {
			hourTL, err = sdk.StatsTimeline(ctx, client.StatsTimelineParams{Since: &hourAgo, Step: client.Ptr(client.GetStatsTimelineParamsStep("1m"))})
			return
		},
		// The day chart has hourly buckets: each reads one precomputed
		// hourly latency histogram (latency_rollups width "h") instead of
		// four quarter-hour ones, and /stats's 24 h percentiles read those
		// same rows. With 15-minute buckets this call alone read ~18,000
		// histogram rows and took 300-900 ms of the page (BENCHMARKS.md).
		func() (err error) {
			dayTL, err = sdk.StatsTimeline(ctx, client.StatsTimelineParams{Since: &dayAgo, Step: client.Ptr(client.GetStatsTimelineParamsStep("1h"))})
			return
		},
		func() (err error) { st, err = sdk.Status(ctx); return },
		func() (err error) {
			open, err = sdk.Endpoints.List(ctx, client.ListEndpointsParams{State: client.Ptr(client.ListEndpointsParamsState("open")), Limit: &lim})
			return
		},
		func() (err error) {
			paused, err = sdk.Events.List(ctx, client.ListEventsParams{Status: client.Ptr("paused"), Limit: &lim})
			return
		},
	}
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	for i, call := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = sdkError(call())
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if errors.Is(err, errSignedOut) {
			c.fail(w, r, s, err)
			return
		}
	}
	for _, err := range errs {
		if err != nil {
			c.fail(w, r, s, err)
			return
		}
	}
	d.Day, d.Hour = toGroupStats(day), toGroupStats(hour)
	d.DayCounts = sortedCounts(d.Day.ByStatus)
	d.FailedHour = d.Hour.ByStatus["failed"] + d.Hour.ByStatus["missed"] + d.Hour.ByStatus["timed_out"]
	d.HourChart, d.DayChart = toChart(hourTL, 1), toChart(dayTL, 60)
	d.StatusText = string(st.Status)
	if d.StatusText == "" {
		d.StatusText = "ok"
	}
	d.Instance, d.Version = st.InstanceID, st.Version
	if st.Uptime != nil {
		d.Uptime = *st.Uptime
	}
	d.Backends = st.Backends
	for _, k := range []string{"pending", "dispatching", "retrying", "awaiting_ack", "running"} {
		if n, ok := st.Queue[k]; ok {
			d.Backlog = append(d.Backlog, backlogRow{Name: k, Meaning: backlogMeaning[k], Count: n})
		}
	}
	names := make([]string, 0, len(st.Scheduler))
	for k := range st.Scheduler {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if k == "dispatcher" {
			// Its destinations are a list: shown on their own below.
			m, _ := st.Scheduler[k].(map[string]any)
			d.Workers = toWorkers(m)
		}
		d.Loops = append(d.Loops, toLoop(k, st.Scheduler[k]))
	}
	if st.Replans != nil {
		d.Replans = toLoop("calendar re-planner", map[string]any(st.Replans))
		if n, ok := numberOf(st.Replans["pending_calendars"]); ok {
			d.PendingReplans = int(n)
		}
	}
	d.Attention = attention{OpenCircuits: len(open.Items), MoreOpen: open.NextCursor != "",
		PausedEvents: len(paused.Items), MorePaused: paused.NextCursor != ""}
	c.render(w, r, s, "overview", http.StatusOK, view{Title: "Overview", Nav: "overview", Data: d})
}
