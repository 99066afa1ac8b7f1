package console

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"sort"
	"sync"
	"time"
)

// percentiles mirrors the API's percentile object.
type percentiles struct {
	Count int   `json:"count"`
	P50   int64 `json:"p50"`
	P95   int64 `json:"p95"`
	P99   int64 `json:"p99"`
}

type groupStats struct {
	Occurrences int            `json:"occurrences"`
	ByStatus    map[string]int `json:"by_status"`
	Attempts    int            `json:"attempts"`
	DurationMS  percentiles    `json:"duration_ms"`
	LatenessMS  percentiles    `json:"lateness_ms"`
	Due         int            `json:"due"`
	Retrying    int            `json:"retrying"`
}

type statsJSON struct {
	Total    groupStats            `json:"total"`
	ByAction map[string]groupStats `json:"by_action"`
}

type timelineJSON struct {
	Step    string `json:"step"`
	Buckets []struct {
		Start      time.Time   `json:"start"`
		Attempts   int         `json:"attempts"`
		Completed  int         `json:"completed"`
		Failed     int         `json:"failed"`
		LatenessMS percentiles `json:"lateness_ms"`
	} `json:"buckets"`
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

func toChart(t timelineJSON, perMinute float64) string {
	var d chartData
	for _, b := range t.Buckets {
		d.X = append(d.X, b.Start.Unix())
		d.Completed = append(d.Completed, float64(b.Completed)/perMinute)
		d.Failed = append(d.Failed, float64(b.Failed)/perMinute)
		if b.LatenessMS.Count > 0 {
			p50, p99 := b.LatenessMS.P50, b.LatenessMS.P99
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

// waiting are the occurrence states that are work still to do.
var waiting = map[string]bool{"pending": true, "dispatching": true, "retrying": true, "awaiting_ack": true}

type overviewData struct {
	Day, Hour           groupStats
	DayCounts           []count
	FailedHour          int
	Queue               []count
	HourChart, DayChart string
	Status              map[string]any
	StatusText          string
	Backends            map[string]any
	Loops               []loop
	Instance, Version   string
	Uptime              string
}

// loop is one background loop as /status reports it.
type loop struct {
	Name    string
	Runs    any
	LastRun *time.Time
	Error   string
	Detail  string
}

func toLoop(name string, v any) loop {
	l := loop{Name: name}
	m, _ := v.(map[string]any)
	l.Runs = m["runs"]
	if t, ok := m["last_run"].(string); ok {
		if at, err := time.Parse(time.RFC3339Nano, t); err == nil {
			l.LastRun = &at
		}
	}
	l.Error, _ = m["error"].(string)
	rest := map[string]any{}
	for k, v := range m {
		switch k {
		case "runs", "last_run", "error":
		default:
			rest[k] = v
		}
	}
	if len(rest) > 0 {
		b, _ := json.Marshal(rest)
		l.Detail = string(b)
	}
	return l
}

func (c *Console) overview(w http.ResponseWriter, r *http.Request, s *session) {
	now := time.Now().UTC()
	var d overviewData
	var day, hour statsJSON
	var hourTL, dayTL timelineJSON
	var st map[string]any
	hourAgo, dayAgo := now.Add(-time.Hour).Format(time.RFC3339), now.Add(-24*time.Hour).Format(time.RFC3339)
	// The five reads are independent: run them at once, so the page takes
	// as long as the slowest, not the sum.
	calls := []struct {
		path  string
		query url.Values
		out   any
	}{
		{"/stats", url.Values{"by_action": {"false"}}, &day},
		{"/stats", url.Values{"since": {hourAgo}, "by_action": {"false"}}, &hour},
		{"/stats/timeline", url.Values{"step": {"1m"}, "since": {hourAgo}}, &hourTL},
		{"/stats/timeline", url.Values{"step": {"15m"}, "since": {dayAgo}}, &dayTL},
		{"/status", nil, &st},
	}
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	for i, call := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = c.do(r, s, "GET", call.path, call.query, nil, call.out)
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
	d.Day, d.Hour = day.Total, hour.Total
	d.DayCounts = sortedCounts(day.Total.ByStatus)
	d.FailedHour = hour.Total.ByStatus["failed"] + hour.Total.ByStatus["missed"]
	d.HourChart, d.DayChart = toChart(hourTL, 1), toChart(dayTL, 15)
	d.Status = st
	d.StatusText, _ = st["status"].(string)
	if d.StatusText == "" {
		d.StatusText = "ok"
	}
	d.Instance, _ = st["instance_id"].(string)
	d.Version, _ = st["version"].(string)
	d.Uptime, _ = st["uptime"].(string)
	d.Backends, _ = st["backends"].(map[string]any)
	if q, ok := st["queue"].(map[string]any); ok {
		m := map[string]int{}
		for k, v := range q {
			if !waiting[k] {
				continue
			}
			if n, ok := v.(float64); ok {
				m[k] = int(n)
			}
		}
		d.Queue = sortedCounts(m)
	}
	if loops, ok := st["scheduler"].(map[string]any); ok {
		names := make([]string, 0, len(loops))
		for k := range loops {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			d.Loops = append(d.Loops, toLoop(k, loops[k]))
		}
	}
	c.render(w, r, s, "overview", http.StatusOK, view{Title: "Overview", Nav: "overview", Data: d})
}
